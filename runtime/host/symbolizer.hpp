// Return addresses inside the plugin -> the plugin source line that allocated. With LLVM's
// symbolizer library (llvm-14-dev; the plugin built with -g) that is file:line and the function,
// inlined frames included; without it (the GPU machine has no -dev packages), dladdr's symbol name.
// With LLVM the plugin's debug information also gives each class's tensor data members and their
// offsets, so the host can tell which member (`past_values_`) a live allocation is stored in.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kvlint::model_host {

struct SourceSite {
  std::string file;  // "" when unknown
  std::uint32_t line = 0;
  std::string function;  // demangled, "" when unknown
  std::string owner;     // the class of `function` ("CppTalker" for ns::CppTalker::step(int)), or ""
};

// Appends `frame` unless `chain` already has its file:line (a call chain names each line once).
void add_frame(std::vector<SourceSite>& chain, SourceSite frame);

// An `at::Tensor` data member of a class (or of one of its bases) at `offset` in the object, or a
// std::vector<at::Tensor> member (a tensor per layer): each of its elements is that member's.
struct TensorMember {
  std::string name;             // "past_values_"
  std::uint64_t offset = 0;     // bytes from the start of the most-derived object
  std::string declaring_class;  // the class that declares it, unqualified ("StreamingDecoder")
  bool in_vector = false;       // a std::vector<at::Tensor> lies at `offset`
};

// A class-typed member through which another object of the model is reached: held by value, or
// owned through std::unique_ptr / std::shared_ptr (whose first word is the pointer in libstdc++);
// or a std::vector of either (one state struct per stream or per layer), whose elements lie
// `stride` bytes apart from the vector's first word (libstdc++: begin, end, capacity).
struct ObjectEdge {
  std::uint64_t offset = 0;  // bytes from the start of the most-derived object
  std::string pointee;       // the held class, qualified as typeid demangles it ("asr::Decoder")
  bool by_pointer = false;   // the member (or each element) is an owning pointer to it
  bool in_vector = false;    // a std::vector of such elements lies at `offset`
  std::uint64_t stride = 0;  // the element's size, when in_vector
  std::string name;          // the member ("streams_")
  std::string declaring_class;  // the class declaring it, unqualified ("StreamPool")
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
  // Every such frame, innermost first, each file:line once: the creating call chain in the model.
  std::vector<SourceSite> chain(const std::vector<std::uintptr_t>& return_addresses);
  // The `at::Tensor` data members of class `qualified` ("speech::StreamingDecoder", as
  // typeid demangles it) and of its bases, from the plugin's debug information. Empty without
  // LLVM, or when the plugin has no definition of the class. Cached per class.
  std::vector<TensorMember> tensor_members(const std::string& qualified);
  // The members of class `qualified` (and of its bases) that hold the model's own objects: by value
  // or through an owning smart pointer; library types (std::, c10::, at::, torch::) are not followed.
  // Empty without LLVM. Cached per class.
  std::vector<ObjectEdge> object_edges(const std::string& qualified);
  // Whether file:line information is available (LLVM's symbolizer was built in).
  static bool has_line_info();

 private:
  std::vector<SourceSite> frames_at(std::uintptr_t return_address);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string module_path_;
  std::uintptr_t load_base_;
  std::map<std::uintptr_t, std::vector<SourceSite>> cache_;
  struct Layout {
    std::vector<TensorMember> tensors;
    std::vector<ObjectEdge> edges;
  };
  const Layout& layout(const std::string& qualified);
  std::map<std::string, Layout> layouts_;
};

// The edge a member of class type `type` ("std::unique_ptr<asr::Decoder, ...>", "asr::Tier") is, at
// offset 0: none for library types and pointers to them (a std::vector's elements are read apart,
// from the vector's template argument: vector_element).
std::optional<ObjectEdge> object_edge(const std::string& type);
// The element type of a std::vector type ("asr::Tier" for "std::vector<asr::Tier, std::allocator<...> >"),
// or "" for any other type.
std::string vector_element(const std::string& type);
// "CppTalker" for "ns::CppTalker::step(int) const"; "" for a free function.
std::string owner_of_function(const std::string& function);
// Whether a demangled function is LibTorch's or the standard library's (instantiated in the plugin).
bool is_library_function(const std::string& function);

}  // namespace kvlint::model_host
