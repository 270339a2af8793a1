// Python source bytes -> facts -> every rule -> suppressions, as `kvlint check`
// does for one file. The front end promises never to throw on bad input, the
// facts JSON promises an exact round trip, and rules must take any facts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "analyzers/python/python_frontend.hpp"
#include "fuzz/facts_through_rules.hpp"
#include "tools/kvlint/config/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static const kvlint::Config config;
  static const auto rules = kvlint::make_all_rules();
  static kvlint::python::PythonAnalyzer analyzer(config.vocabulary);

  const std::string_view source(reinterpret_cast<const char*>(data), size);
  kvlint::facts::FileFacts facts = analyzer.analyze("pkg/fuzzed.py", source, "pkg.fuzzed");

  kvlint::fuzz::check_facts_through_rules(std::move(facts), config, rules);
  return 0;
}
