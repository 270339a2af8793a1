#include "tools/kvlint/engine/cpp_module.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <vector>

namespace kvlint {
namespace fs = std::filesystem;

namespace {

constexpr const char* kModuleName = "libkvlint_cpp_frontend.so";

std::vector<fs::path> candidates() {
  std::vector<fs::path> out;
  // An explicit choice is the only place looked (tests use it to run without the module).
  if (const char* env = std::getenv("KVLINT_CPP_FRONTEND"); env && *env) return {fs::path(env)};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    out.push_back(exe.parent_path() / kModuleName);
    out.push_back(exe.parent_path().parent_path() / "lib" / "kvlint" / kModuleName);
  }
  return out;
}

}  // namespace

CppFrontEndModule::CppFrontEndModule() {
  std::vector<std::string> tried;
  for (const fs::path& candidate : candidates()) {
    std::error_code ec;
    if (!fs::is_regular_file(candidate, ec)) {
      tried.push_back(candidate.string());
      continue;
    }
    // RTLD_NODELETE: LLVM registers process-wide state; unloading it mid-process is not safe.
    handle_ = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!handle_) {
      const std::string why = ::dlerror();
      problem_ = fmt::format("the C++ front end {} cannot be loaded: {}", candidate.string(), why);
      if (why.find("clang-cpp") != std::string::npos || why.find("LLVM") != std::string::npos)
        problem_ += fmt::format("; install the Debian package {} (apt-get install {})", kCppRuntimePackage,
                                kCppRuntimePackage);
      return;
    }
    factory_ = reinterpret_cast<KvlintMakeCppAnalyzer>(::dlsym(handle_, "kvlint_make_cpp_analyzer"));
    if (!factory_) {
      problem_ =
          fmt::format("{} is not a kvlint C++ front end (no kvlint_make_cpp_analyzer)", candidate.string());
      return;
    }
    path_ = candidate;
    const auto size = fs::file_size(candidate, ec);
    const auto time = fs::last_write_time(candidate, ec).time_since_epoch().count();
    identity_ = fmt::format("{}+{}+{}", candidate.string(), static_cast<unsigned long long>(size),
                            static_cast<long long>(time));
    return;
  }
  problem_ = fmt::format(
      "the C++ front end ({}) is not installed (looked in {}); it is built with the Debian packages "
      "libclang-14-dev libclang-cpp14-dev llvm-14-dev and needs {} at run time",
      kModuleName, fmt::join(tried, ", "), kCppRuntimePackage);
}

CppFrontEndModule::~CppFrontEndModule() {
  if (handle_) ::dlclose(handle_);
}

std::unique_ptr<facts::CppAnalyzer> CppFrontEndModule::make(const facts::Vocabulary& vocabulary,
                                                            const facts::CppProjectSettings& settings) const {
  if (!factory_) return nullptr;
  return std::unique_ptr<facts::CppAnalyzer>(factory_(facts::kCppAnalyzerAbi, &vocabulary, &settings));
}

fs::path find_compile_database(const fs::path& explicit_dir, const std::string& configured,
                               const fs::path& root) {
  std::error_code ec;
  auto database_in = [&](const fs::path& p) -> fs::path {
    if (fs::is_regular_file(p, ec)) return p;
    if (fs::is_regular_file(p / "compile_commands.json", ec)) return p / "compile_commands.json";
    return {};
  };
  if (!explicit_dir.empty()) return database_in(fs::absolute(explicit_dir, ec));
  if (!configured.empty()) {
    const fs::path p = fs::path(configured).is_absolute() ? fs::path(configured) : root / configured;
    return database_in(p);
  }
  // As clang-tidy does: the nearest compile_commands.json in the directory or above it.
  for (fs::path dir = root; !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_regular_file(dir / "compile_commands.json", ec)) return dir / "compile_commands.json";
    if (dir == dir.parent_path()) break;
  }
  return {};
}

facts::CppProjectSettings cpp_project_settings(const Config& config, const fs::path& compile_database) {
  facts::CppProjectSettings settings;
  settings.project_root = config.root;
  settings.compile_database = compile_database;
  settings.fallback_flags = config.cpp.fallback_flags;
  for (const auto& dir : config.cpp.include_dirs) settings.fallback_include_dirs.push_back(config.root / dir);
  // The project root last: real projects name their own headers from it
  // (`#include "sherpa-onnx/csrc/model.h"`), and a header not found is a class not seen.
  std::error_code ec;
  for (const fs::path& dir : {config.root / "include", config.root / "runtime" / "include", config.root})
    if (fs::is_directory(dir, ec)) settings.fallback_include_dirs.push_back(dir);
  return settings;
}

}  // namespace kvlint
