// TODO(cli): minimal entry point; the real CLI (CLI11) lands with the CLI work.
#include <cstdio>
#include <string>

#include "tools/kvlint/engine/engine.hpp"

int main(int argc, char** argv) {
  kvlint::CheckOptions options;
  for (int i = 2; i < argc; ++i) options.paths.emplace_back(argv[i]);
  options.config = kvlint::discover_config(".");
  auto result = kvlint::run_check(options);
  for (const auto& f : result.findings)
    std::printf("%s:%u:%u: %s %s\n", f.loc.file.c_str(), f.loc.line, f.loc.column, f.code.c_str(),
                f.message.c_str());
  return result.findings.empty() ? 0 : 1;
}
