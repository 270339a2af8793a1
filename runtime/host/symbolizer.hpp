// Return addresses inside the plugin -> the plugin source line that allocated. With LLVM's
// symbolizer library (llvm-14-dev; the plugin built with -g) that is file:line and the function,
// inlined frames included; without it (the GPU machine has no -dev packages), dladdr's symbol name.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kvlint::model_host {

struct SourceSite {
  std::string file;  // "" when unknown
  std::uint32_t line = 0;
  std::string function;  // demangled, "" when unknown
  std::string owner;     // the class of `function` ("CppTalker" for ns::CppTalker::step(int)), or ""
};

class Symbolizer {
 public:
  // `module_path`: the plugin file; `load_base`: where it is mapped (dl_iterate_phdr's dlpi_addr).
  Symbolizer(std::string module_path, std::uintptr_t load_base);
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // The first frame (innermost first, inlined frames expanded) whose source is the model's own:
  // not a LibTorch, C++ library or system header. Cached per address.
  SourceSite site(const std::vector<std::uintptr_t>& return_addresses);
  // Whether file:line information is available (LLVM's symbolizer was built in).
  static bool has_line_info();

 private:
  std::vector<SourceSite> frames_at(std::uintptr_t return_address);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string module_path_;
  std::uintptr_t load_base_;
  std::map<std::uintptr_t, std::vector<SourceSite>> cache_;
};

// "CppTalker" for "ns::CppTalker::step(int) const"; "" for a free function.
std::string owner_of_function(const std::string& function);
// Whether a demangled function is LibTorch's or the standard library's (instantiated in the plugin).
bool is_library_function(const std::string& function);

}  // namespace kvlint::model_host
