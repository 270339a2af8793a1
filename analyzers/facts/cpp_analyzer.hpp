// The narrow interface between the engine and the C++ front end.
//
// The C++ front end (analyzers/cpp) links Clang's LibTooling, which the kvlint
// executable must not: it is built as a shared module (libkvlint_cpp_frontend.so)
// that the engine loads with dlopen only when a run selects C++ files. Engine and
// module are built by the same compiler from the same tree, so a C++ interface is
// safe; kCppAnalyzerAbi guards against a stale module next to a newer binary.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analyzers/facts/facts.hpp"
#include "analyzers/facts/vocabulary.hpp"

namespace kvlint::facts {

// Bump when anything below changes shape.
inline constexpr int kCppAnalyzerAbi = 10;  // 3: ClassFact::qualified_name, out_of_line; 4: CppAnalysis
                                            // dependencies, work budget; 5: CppAnalysis syntax errors;
                                            // 6: CallFact::kv_read_only (in CppAnalysis's facts);
                                            // 7: Guard::given, CallFact::passes, CacheSite::stores_existing;
                                            // 8: CppProjectSettings::project_root;
                                            // 9: CacheSite::evidence, CppAnalysis::cuda_read_as_cpp,
                                            //    AttributeAssignment::annotated_class;
                                            // 10: FileFacts::held_tensor_views, kv_handoffs

// Where a file's compile command comes from, per project.
struct CppProjectSettings {
  // The project's root. An `#include` opens files under it, the include directories below and
  // the directories Clang searches, nothing else; a diagnostic located outside it is not quoted.
  // Empty: the analysed file's directory.
  std::filesystem::path project_root;
  // A compile_commands.json, or empty: every file uses the fallback command.
  std::filesystem::path compile_database;
  // Fallback: these flags, then -I for the file's directory and each of these directories.
  std::vector<std::string> fallback_flags = {"-std=c++17"};
  std::vector<std::filesystem::path> fallback_include_dirs;
  // The walk's work budget, as the Python front end's (python_frontend.hpp): steps per byte
  // of the file, at least the minimum. A file that reaches it keeps the facts found before.
  std::uint64_t work_steps_per_byte = 64;
  std::uint64_t work_minimum_steps = 4'000'000;
};

// The command one file is analysed with; also part of its result-cache key.
struct CppCommand {
  std::filesystem::path directory;     // working directory of the compile
  std::vector<std::string> arguments;  // argv, compiler first, the file included
  bool from_database = false;          // false: the fallback flags
  // Options of the database entry or the fallback flags left out because they do not change
  // how the source is read (the ones that write files among them), as written: --verbose.
  std::vector<std::string> dropped;
};

// A file an analysis read besides the one analysed: its result holds while the file keeps
// these bytes.
struct IncludedFile {
  std::string path;                // absolute
  std::uint64_t content_hash = 0;  // XXH3-64 of the bytes the compiler read
};

struct CppAnalysis {
  FileFacts facts;
  // The file compiled with every header found and no error: types are resolved.
  // False: degraded mode (missing headers or errors; names matched as spelled).
  bool full_types = false;
  std::vector<std::string> missing_headers;  // as written in #include, first few
  // A CUDA source read as C++ because no compile command names it: the CUDA compiler's built-ins
  // (device intrinsics, `__half` arithmetic) are undeclared, so its errors are degraded mode's too.
  bool cuda_read_as_cpp = false;
  std::size_t errors = 0;                    // compiler errors (degraded mode reports syntax_errors only)
  std::string first_error;                   // "file.cpp:3:9: unknown type name 'Foo'"
  // Parse and lexical errors in the file itself, on lines no earlier error explains: a syntax
  // error of its own, which degraded mode reports rather than suppresses.
  std::size_t syntax_errors = 0;
  std::string first_syntax_error;  // "file.cpp:6:23: expected expression"
  // The compiler produced no AST at all (bad flags, unreadable input, a crash): facts are empty.
  bool failed = false;
  // What the result depends on besides the file and its command: the project (non-system)
  // headers it included, and the paths where each missing header was looked for (the result
  // holds while those stay absent). `dependencies_known` is false when they could not all
  // be listed: the result must not be reused.
  std::vector<IncludedFile> included;
  std::vector<std::string> absent;
  bool dependencies_known = false;
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
extern "C" kvlint::facts::CppAnalyzer* kvlint_make_cpp_analyzer(
    int abi, const kvlint::facts::Vocabulary* vocabulary, const kvlint::facts::CppProjectSettings* settings);
using KvlintMakeCppAnalyzer = decltype(&kvlint_make_cpp_analyzer);
