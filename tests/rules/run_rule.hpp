// Running one rule over hand-built facts: shared by the rules' unit tests.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "analyzers/facts/project.hpp"
#include "rules/registry.hpp"

namespace kvlint::rule_testing {

inline std::vector<Finding> run_rule(std::string_view code, std::vector<facts::FileFacts> files) {
  facts::Project project(std::move(files), facts::Vocabulary{});
  std::vector<Finding> out;
  for (const auto& rule : make_all_rules())
    if (rule->info().code == code) rule->check(project, out);
  return out;
}

inline std::vector<uint32_t> lines_of(const std::vector<Finding>& findings) {
  std::vector<uint32_t> out;
  for (const auto& f : findings) out.push_back(f.loc.line);
  return out;
}

}  // namespace kvlint::rule_testing
