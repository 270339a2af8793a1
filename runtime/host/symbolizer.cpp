#include "symbolizer.hpp"

#include <cxxabi.h>
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#ifdef KVLINT_HOST_WITH_LLVM
#include <llvm/DebugInfo/Symbolize/Symbolize.h>
#endif

namespace kvlint::model_host {
namespace {

// Library code compiled into the plugin (torch::zeros, std::unordered_map::emplace are inline):
// the allocation is the model's line that called into it.
bool is_library_source(const std::string& file) {
  return file.empty() || file.rfind("/usr/include/", 0) == 0 || file.rfind("/usr/lib/", 0) == 0 ||
         file.find("/torch/include/") != std::string::npos ||
         file.find("/torch/csrc/") != std::string::npos || file.find("/c10/") != std::string::npos ||
         file.find("/ATen/") != std::string::npos || file.find("/include/c++/") != std::string::npos ||
         file.find("kvlint/model_plugin.h") != std::string::npos;
}

std::string demangle(const char* name) {
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string text = status == 0 && out != nullptr ? out : name;
  std::free(out);
  return text;
}

// A demangled function without its parameter list (the first top-level '(') and template
// arguments: "int& std::vector::emplace_back" for a member template (the return type stays).
std::string unparameterised(const std::string& function) {
  std::string name;
  int depth = 0;
  for (char c : function) {
    if (c == '<') ++depth;
    if (depth == 0 && c == '(') break;
    if (depth == 0) name += c;
    if (c == '>') --depth;
  }
  return name;
}

}  // namespace

// Without line information (no LLVM), a frame's function name tells library code apart: LibTorch's
// and the standard library's inline functions are instantiated inside the plugin too.
bool is_library_function(const std::string& function) {
  std::string name = unparameterised(function);
  name = name.substr(name.rfind(' ') == std::string::npos ? 0 : name.rfind(' ') + 1);  // drop a return type
  for (const char* prefix : {"torch::", "at::", "c10::", "caffe2::", "std::", "__gnu_cxx::",
                             "kvlint::model_plugin::", "kvlint::model_local_kv::"})
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

std::string owner_of_function(const std::string& function) {
  // The component before the last "::" of the name without parameters and template arguments.
  const std::string name = unparameterised(function);
  const auto last = name.rfind("::");
  if (last == std::string::npos) return "";
  std::string scope = name.substr(0, last);
  const auto previous = scope.rfind("::");
  scope = previous == std::string::npos ? scope : scope.substr(previous + 2);
  // A lambda's enclosing "{lambda(...)#1}" or an anonymous namespace is no class.
  if (scope.empty() || scope.front() == '{' || scope.front() == '(') return "";
  return scope;
}

#ifdef KVLINT_HOST_WITH_LLVM
struct Symbolizer::Impl {
  llvm::symbolize::LLVMSymbolizer symbolizer{[] {
    llvm::symbolize::LLVMSymbolizer::Options options;
    options.Demangle = true;
    options.RelativeAddresses = false;
    return options;
  }()};
};
bool Symbolizer::has_line_info() {
  return true;
}
#else
struct Symbolizer::Impl {};
bool Symbolizer::has_line_info() {
  return false;
}
#endif

Symbolizer::Symbolizer(std::string module_path, std::uintptr_t load_base)
    : impl_(std::make_unique<Impl>()), module_path_(std::move(module_path)), load_base_(load_base) {}

Symbolizer::~Symbolizer() = default;

std::vector<SourceSite> Symbolizer::frames_at(std::uintptr_t return_address) {
  auto cached = cache_.find(return_address);
  if (cached != cache_.end()) return cached->second;
  std::vector<SourceSite> frames;
  // The call instruction is just before the return address.
  const std::uintptr_t address = return_address - 1;
#ifdef KVLINT_HOST_WITH_LLVM
  auto inlined = impl_->symbolizer.symbolizeInlinedCode(
      module_path_,
      {static_cast<std::uint64_t>(address - load_base_), llvm::object::SectionedAddress::UndefSection});
  if (inlined) {
    for (std::uint32_t i = 0; i < inlined->getNumberOfFrames(); ++i) {
      const auto& info = inlined->getFrame(i);
      SourceSite frame;
      if (info.FileName != llvm::DILineInfo::BadString)
        frame.file = std::filesystem::path(info.FileName).lexically_normal().string();
      frame.line = info.Line;
      if (info.FunctionName != llvm::DILineInfo::BadString) frame.function = info.FunctionName;
      frame.owner = owner_of_function(frame.function);
      frames.push_back(std::move(frame));
    }
  } else {
    llvm::consumeError(inlined.takeError());
  }
#endif
  if (frames.empty()) {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(address), &info) != 0 && info.dli_sname != nullptr) {
      SourceSite frame;
      frame.function = demangle(info.dli_sname);
      frame.owner = owner_of_function(frame.function);
      frames.push_back(std::move(frame));
    }
  }
  cache_.emplace(return_address, frames);
  return frames;
}

SourceSite Symbolizer::site(const std::vector<std::uintptr_t>& return_addresses) {
  SourceSite fallback;
  for (std::uintptr_t address : return_addresses) {
    for (auto& frame : frames_at(address)) {
      if (!frame.file.empty() && !is_library_source(frame.file)) return frame;
      if (fallback.function.empty() && frame.file.empty() && !is_library_function(frame.function))
        fallback = frame;  // dladdr only
    }
  }
  return fallback;
}

}  // namespace kvlint::model_host
