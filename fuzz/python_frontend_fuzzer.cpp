// Python source bytes -> facts -> every rule -> suppressions, as `kvlint check`
// does for one file. The front end promises never to throw on bad input, the
// facts JSON promises an exact round trip, and rules must take any facts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "analyzers/facts/facts_json.hpp"
#include "analyzers/facts/project.hpp"
#include "analyzers/python/python_frontend.hpp"
#include "rules/registry.hpp"
#include "tools/kvlint/config/config.hpp"
#include "tools/kvlint/engine/suppressions.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static const kvlint::Config config;
  static const auto rules = kvlint::make_all_rules();
  static kvlint::python::PythonAnalyzer analyzer(config.vocabulary);

  const std::string_view source(reinterpret_cast<const char*>(data), size);
  kvlint::facts::FileFacts facts = analyzer.analyze("pkg/fuzzed.py", source, "pkg.fuzzed");

  const nlohmann::json encoded = kvlint::facts::to_json(facts);
  if (kvlint::facts::to_json(kvlint::facts::file_facts_from_json(encoded)) != encoded) {
    std::fputs("facts JSON does not round-trip\n", stderr);
    std::abort();
  }

  std::vector<kvlint::facts::FileFacts> files;
  files.push_back(std::move(facts));
  kvlint::facts::Project project(std::move(files), config.vocabulary);
  std::vector<kvlint::Finding> findings;
  for (const auto& rule : rules) rule->check(project, findings);
  std::vector<const kvlint::facts::FileFacts*> analysed;
  for (const auto& file : project.files()) analysed.push_back(&file);
  kvlint::apply_suppressions(std::move(findings), analysed, config);
  return 0;
}
