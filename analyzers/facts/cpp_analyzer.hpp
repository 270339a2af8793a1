// The narrow interface between the engine and the C++ front end.
//
// The C++ front end (analyzers/cpp) links Clang's LibTooling, which the kvlint
// executable must not: it is built as a shared module (libkvlint_cpp_frontend.so)
// that the engine loads with dlopen only when a run selects C++ files. Engine and
// module are built by the same compiler from the same tree, so a C++ interface is
// safe; kCppAnalyzerAbi guards against a stale module next to a newer binary.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analyzers/facts/facts.hpp"
#include "analyzers/facts/vocabulary.hpp"

namespace kvlint::facts {

// Bump when anything below changes shape.
inline constexpr int kCppAnalyzerAbi = 2;

// Where a file's compile command comes from, per project.
struct CppProjectSettings {
  // A compile_commands.json, or empty: every file uses the fallback command.
  std::filesystem::path compile_database;
  // Fallback: these flags, then -I for the file's directory and each of these directories.
  std::vector<std::string> fallback_flags = {"-std=c++17"};
  std::vector<std::filesystem::path> fallback_include_dirs;
};

// The command one file is analysed with; also part of its result-cache key.
struct CppCommand {
  std::filesystem::path directory;  // working directory of the compile
  std::vector<std::string> arguments;  // argv, compiler first, the file included
  bool from_database = false;          // false: the fallback flags
};

struct CppAnalysis {
  FileFacts facts;
  // The file compiled with every header found and no error: types are resolved.
  // False: degraded mode (missing headers or errors; names matched as spelled).
  bool full_types = false;
  std::vector<std::string> missing_headers;  // as written in #include, first few
  std::size_t errors = 0;                    // compiler errors (suppressed in degraded mode)
  std::string first_error;                   // "file.cpp:3:9: unknown type name 'Foo'"
  // Parse and lexical errors in the file itself, on lines no earlier error explains: a syntax
  // error of its own, which degraded mode reports rather than suppresses.
  std::size_t syntax_errors = 0;
  std::string first_syntax_error;  // "file.cpp:6:23: expected expression"
  // The compiler produced no AST at all (bad flags, unreadable input): facts are empty.
  bool failed = false;
};

class CppAnalyzer {
 public:
  virtual ~CppAnalyzer() = default;
  // Why the compile database could not be used (empty when it was, or none was given).
  virtual std::string database_problem() const = 0;
  // The command for `absolute_path`: its compile database entry, else a sibling
  // translation unit's flags for a header, else the fallback. Thread-safe.
  virtual CppCommand command_for(const std::filesystem::path& absolute_path) const = 0;
  // Analyses `source` (the bytes of `absolute_path`, already read) under `command`.
  // Findings are reported under `display_path`. Thread-safe: every call builds its
  // own compiler instance. Never throws on bad input.
  virtual CppAnalysis analyze(const std::string& display_path, const std::filesystem::path& absolute_path,
                              std::string_view source, const CppCommand& command) const = 0;
};

}  // namespace kvlint::facts

// The module's one exported symbol. Returns null when `abi` differs from the module's.
extern "C" kvlint::facts::CppAnalyzer* kvlint_make_cpp_analyzer(int abi, const kvlint::facts::Vocabulary* vocabulary,
                                                                const kvlint::facts::CppProjectSettings* settings);
using KvlintMakeCppAnalyzer = decltype(&kvlint_make_cpp_analyzer);
