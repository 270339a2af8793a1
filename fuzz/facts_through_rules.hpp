// What both front-end fuzz targets check once they have one file's facts: the facts JSON and
// the cache's binary form round-trip exactly, and every rule and the suppression pass take the facts without fault.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <utility>
#include <vector>

#include "analyzers/facts/facts_binary.hpp"
#include "analyzers/facts/facts_json.hpp"
#include "analyzers/facts/project.hpp"
#include "rules/registry.hpp"
#include "tools/kvlint/config/config.hpp"
#include "tools/kvlint/engine/suppressions.hpp"

namespace kvlint::fuzz {

inline void check_facts_through_rules(facts::FileFacts facts, const Config& config,
                                      const std::vector<std::unique_ptr<Rule>>& rules) {
  const nlohmann::json encoded = facts::to_json(facts);
  if (facts::to_json(facts::file_facts_from_json(encoded)) != encoded) {
    std::fputs("facts JSON does not round-trip\n", stderr);
    std::abort();
  }
  facts::BinaryWriter binary;
  facts::write_file_facts(binary, facts);
  facts::BinaryReader reader(binary.bytes());
  if (facts::to_json(facts::read_file_facts(reader)) != encoded || reader.left() != 0) {
    std::fputs("facts binary form does not round-trip\n", stderr);
    std::abort();
  }
  std::vector<facts::FileFacts> files;
  files.push_back(std::move(facts));
  facts::Project project(std::move(files), config.vocabulary);
  std::vector<Finding> findings;
  for (const auto& rule : rules) rule->check(project, findings);
  std::vector<const facts::FileFacts*> analysed;
  for (const auto& file : project.files()) analysed.push_back(&file);
  apply_suppressions(std::move(findings), analysed, config);
}

}  // namespace kvlint::fuzz
