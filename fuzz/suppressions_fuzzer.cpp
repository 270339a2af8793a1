// `# kvlint: ignore[...]` comments: the parser lives in the Python front end
// (comments are syntax), the matching in the engine. Each input line becomes a
// comment after "# kvlint: " twice, once on its own line and once trailing
// code, so the fuzzer spends its time on the comment grammar; then findings of
// every known code on every line go through apply_suppressions (KV901-903).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "analyzers/python/python_frontend.hpp"
#include "rules/registry.hpp"
#include "tools/kvlint/config/config.hpp"
#include "tools/kvlint/engine/suppressions.hpp"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "suppression invariant broken: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static const kvlint::Config config;
  static const auto infos = kvlint::all_rule_infos();
  static kvlint::python::PythonAnalyzer analyzer(config.vocabulary);

  // Findings x suppressions is quadratic: a few dozen comments say all there is to say.
  constexpr int kMaxComments = 32;
  std::string source;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  for (int comments = 0; !rest.empty() && comments < kMaxComments; ++comments) {
    const std::size_t newline = rest.find('\n');
    const std::string_view comment = rest.substr(0, newline);
    source.append("# kvlint: ").append(comment).append("\nx = DynamicCache()  # kvlint: ").append(comment);
    source += '\n';
    rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
  }
  const kvlint::facts::FileFacts facts = analyzer.analyze("fuzzed.py", source);

  for (const auto& s : facts.suppressions) {
    if (s.applies_to_line < s.loc.line) fail("covers a line above the comment");
    for (const auto& code : s.codes)
      if (code.empty() || code.find_first_of(", \t\n\r\f\v]") != std::string::npos)
        fail("code holds a separator");
  }

  std::vector<kvlint::Finding> findings;
  const auto lines = static_cast<uint32_t>(std::count(source.begin(), source.end(), '\n'));
  for (uint32_t line = 1; line <= lines + 1; ++line)
    for (const auto& info : infos) {
      kvlint::Finding f;
      f.code = std::string(info.code);
      f.loc.file = facts.path;
      f.loc.line = line;
      findings.push_back(std::move(f));
    }
  kvlint::apply_suppressions(std::move(findings), {&facts}, config);
  return 0;
}
