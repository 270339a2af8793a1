// The compile command a file is read with, cut down to the options that change how its
// source is read. A repository's compile_commands.json and its `[cpp] fallback-flags` are
// untrusted input: an option that writes a file (-Wp,-MD,<path>, --serialize-diagnostics,
// -Xclang -dependency-file, -o, -save-temps, -MJ, -mllvm ...) must never reach Clang, so the
// rule is an allow-list, never a deny-list.
#pragma once

#include <string>
#include <vector>

namespace kvlint::cpp {

struct ReadingCommand {
  // argv: a Clang driver name, the kept options in their order, then `source` last.
  std::vector<std::string> arguments;
  // What was left out, as written (an option and its values on one line): for --verbose.
  std::vector<std::string> dropped;
};

// Parses `argv` (compiler first, as a compile database gives it) with Clang's own driver
// option table in GCC mode and keeps only include paths, macros, forced includes, language
// standard and mode, target and sysroot selection, and `-f`/`-m`/`-O` options that change
// what the preprocessor defines or the parser accepts. Every input is dropped and `source`
// is appended as the one input; the driver name is replaced by `clang` or `clang++`.
ReadingCommand reading_options_only(const std::vector<std::string>& argv, const std::string& source);

}  // namespace kvlint::cpp
