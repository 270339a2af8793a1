// C++ source bytes -> facts -> every rule -> suppressions, as `kvlint check` does for one
// C++ file: the front end's sources (analyzers/cpp, instrumented) run Debian's Clang
// (libclang-cpp, not instrumented) on the input as an in-memory file. The command is
// fixed: the fallback flags (-std=c++17, syntax only), so every missing header (LibTorch,
// CUDA, the declaration header) is served by degraded mode's built-in stubs. The front end
// promises never to throw on bad input; facts must round-trip through JSON and rules must
// take whatever facts come out.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "analyzers/cpp/cpp_frontend.hpp"
#include "analyzers/facts/facts_json.hpp"
#include "analyzers/facts/project.hpp"
#include "rules/registry.hpp"
#include "tools/kvlint/config/config.hpp"
#include "tools/kvlint/engine/suppressions.hpp"

namespace {

// Clang's cost grows with the input (and, with templates, faster): bigger inputs add time
// per execution, not new paths through kvlint's walker.
constexpr std::size_t kMaxSourceBytes = 16 * 1024;
// Not on disk: only the in-memory copy of the input exists under this directory.
constexpr const char* kSourcePath = "/kvlint-fuzz/model.cpp";

kvlint::facts::CppProjectSettings fuzz_settings() {
  kvlint::facts::CppProjectSettings settings;
  // The engine's fallback flags, plus Clang limits well below its defaults: a few lines of
  // recursive templates or constexpr loops would otherwise spend the whole timeout inside
  // Clang, which is not the code under test.
  settings.fallback_flags = {"-std=c++17", "-ftemplate-depth=64", "-fconstexpr-depth=64",
                             "-fconstexpr-steps=65536", "-fbracket-depth=128"};
  return settings;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size > kMaxSourceBytes) return -1;  // not added to the corpus
  static const kvlint::Config config;
  static const auto rules = kvlint::make_all_rules();
  static const auto analyzer = kvlint::cpp::make_analyzer(config.vocabulary, fuzz_settings());
  static const kvlint::facts::CppCommand command = analyzer->command_for(kSourcePath);

  const std::string_view source(reinterpret_cast<const char*>(data), size);
  kvlint::facts::CppAnalysis analysis = analyzer->analyze("src/model.cpp", kSourcePath, source, command);
  if (analysis.failed) {
    // Fixed, valid flags: Clang always builds an AST, however broken the input.
    std::fprintf(stderr, "the front end reports a failed compile: %s\n", analysis.first_error.c_str());
    std::abort();
  }
  kvlint::facts::FileFacts facts = std::move(analysis.facts);
  facts.module_name = "src.model";

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
