// Loading the C++ front end (libkvlint_cpp_frontend.so) at run time, only when a
// run selects C++ files: the kvlint executable links no LLVM. Searched in
// $KVLINT_CPP_FRONTEND (a file), next to the executable, then in ../lib/kvlint/.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "analyzers/facts/cpp_analyzer.hpp"
#include "tools/kvlint/config/config.hpp"

namespace kvlint {

// The Debian package the module needs at run time, named in the diagnostic when it is missing.
inline constexpr std::string_view kCppRuntimePackage = "libclang-cpp14";

class CppFrontEndModule {
 public:
  // Loads the module; on failure `problem()` says why (and names the package to install).
  CppFrontEndModule();
  ~CppFrontEndModule();
  CppFrontEndModule(const CppFrontEndModule&) = delete;
  CppFrontEndModule& operator=(const CppFrontEndModule&) = delete;

  bool loaded() const { return factory_ != nullptr; }
  const std::string& problem() const { return problem_; }
  const std::filesystem::path& path() const { return path_; }
  // The module file's path, size and modification time: part of every C++ cache key,
  // so a rebuilt front end never reuses stale facts.
  const std::string& identity() const { return identity_; }
  // A new analyzer for one project's settings; null when not loaded or the module is stale.
  std::unique_ptr<facts::CppAnalyzer> make(const facts::Vocabulary& vocabulary,
                                           const facts::CppProjectSettings& settings) const;

 private:
  void* handle_ = nullptr;
  KvlintMakeCppAnalyzer factory_ = nullptr;
  std::filesystem::path path_;
  std::string problem_;
  std::string identity_;
};

// The compile database for a project: `explicit_dir` (-p) when given, else the
// configured `compile-commands` (relative to the root), else the nearest
// compile_commands.json in `root` or a directory above it. Empty: none.
std::filesystem::path find_compile_database(const std::filesystem::path& explicit_dir,
                                            const std::string& configured, const std::filesystem::path& root);

// What the front end is given for one project: `compile_database` (may be empty) and the
// fallback flags and include directories of `config` (its include-dirs, then the root's
// include/ and runtime/include/ where they exist, then the root itself).
facts::CppProjectSettings cpp_project_settings(const Config& config,
                                               const std::filesystem::path& compile_database);

}  // namespace kvlint
