// C++ source bytes -> facts -> every rule -> suppressions, as `kvlint check` does for one
// C++ file: the front end's sources (analyzers/cpp, instrumented) run Debian's Clang
// (libclang-cpp, not instrumented) on the input as an in-memory file. The command is
// fixed: the fallback flags (-std=c++17, syntax only) and the standard library precompiled,
// so every other header (LibTorch, CUDA, the declaration header) is missing and served by
// degraded mode's built-in stubs. The front end
// promises never to throw on bad input; facts must round-trip through JSON and rules must
// take whatever facts come out.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "analyzers/cpp/cpp_frontend.hpp"
#include "fuzz/facts_through_rules.hpp"
#include "fuzz/scratch_dir.hpp"
#include "tools/kvlint/config/config.hpp"

namespace {

// Clang's cost grows with the input (and, with templates, faster): bigger inputs add time
// per execution, not new paths through kvlint's walker.
constexpr std::size_t kMaxSourceBytes = 16 * 1024;
// Not on disk: only the in-memory copy of the input exists under this directory.
constexpr const char* kSourcePath = "/kvlint-fuzz/model.cpp";

// The engine's fallback flags, plus Clang limits well below its defaults: a few lines of
// recursive templates or constexpr loops would otherwise spend the whole timeout inside
// Clang, which is not the code under test.
const std::vector<std::string> kFlags = {"-std=c++17", "-ftemplate-depth=64", "-fconstexpr-depth=64",
                                         "-fconstexpr-steps=65536", "-fbracket-depth=128"};

// The standard headers the fixtures include, precompiled once per process: parsing them
// takes 25 times as long as the rest of a typical input, so without it nearly every
// execution would be spent in Clang on libstdc++. `#include <vector>` in an input then
// finds the header already included.
class StandardPrelude {
 public:
  StandardPrelude() {
    const std::filesystem::path header = scratch_.write(
        "prelude.hpp",
        "#include <cstdint>\n#include <initializer_list>\n#include <map>\n#include <memory>\n"
        "#include <optional>\n#include <string>\n#include <unordered_map>\n#include <vector>\n");
    pch_ = scratch_.path() / "prelude.pch";
    std::string command = KVLINT_FUZZ_CLANG;
    for (const auto& flag : kFlags) command += " " + flag;
    command += " -x c++-header " + header.string() + " -o " + pch_.string();
    if (std::system(command.c_str()) != 0) {
      std::fprintf(stderr, "kvlint fuzz: cannot precompile the standard headers: %s\n", command.c_str());
      std::abort();
    }
  }
  const std::filesystem::path& pch() const { return pch_; }

 private:
  kvlint::fuzz::ScratchDir scratch_;
  std::filesystem::path pch_;
};

kvlint::facts::CppProjectSettings fuzz_settings(const StandardPrelude& prelude) {
  kvlint::facts::CppProjectSettings settings;
  settings.fallback_flags = kFlags;
  settings.fallback_flags.insert(settings.fallback_flags.end(), {"-include-pch", prelude.pch().string()});
  return settings;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size > kMaxSourceBytes) return -1;  // not added to the corpus
  static const kvlint::Config config;
  static const auto rules = kvlint::make_all_rules();
  static const StandardPrelude prelude;
  static const auto analyzer = kvlint::cpp::make_analyzer(config.vocabulary, fuzz_settings(prelude));
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

  kvlint::fuzz::check_facts_through_rules(std::move(facts), config, rules);
  return 0;
}
