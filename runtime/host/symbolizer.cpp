#include "symbolizer.hpp"

#include <cxxabi.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <utility>

#ifdef KVLINT_HOST_WITH_LLVM
#include <llvm/DebugInfo/DWARF/DWARFContext.h>
#include <llvm/DebugInfo/Symbolize/Symbolize.h>
#include <llvm/Object/ObjectFile.h>

#include <unordered_map>
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

namespace {

// "StreamingDecoder" for "speech::StreamingDecoder", "Cache<int>" for "ns::Cache<int>".
std::string last_component(const std::string& qualified) {
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i + 1 < qualified.size(); ++i) {
    if (qualified[i] == '<') ++depth;
    if (qualified[i] == '>') --depth;
    if (depth == 0 && qualified[i] == ':' && qualified[i + 1] == ':') start = i + 2;
  }
  return qualified.substr(start);
}

bool is_library_type(const std::string& qualified) {
  for (const char* prefix : {"std::", "__gnu_cxx::", "c10::", "at::", "torch::", "caffe2::", "kvlint::"})
    if (qualified.rfind(prefix, 0) == 0) return true;
  return false;
}

// "asr::Decoder" for "std::unique_ptr<asr::Decoder, std::default_delete<asr::Decoder> >".
std::string first_template_argument(const std::string& type) {
  const auto open = type.find('<');
  if (open == std::string::npos) return "";
  int depth = 0;
  for (std::size_t i = open + 1; i < type.size(); ++i) {
    if (type[i] == '<') ++depth;
    if ((type[i] == ',' || type[i] == '>') && depth == 0) {
      std::string out = type.substr(open + 1, i - open - 1);
      while (!out.empty() && out.back() == ' ') out.pop_back();
      return out;
    }
    if (type[i] == '>') --depth;
  }
  return "";
}

}  // namespace

// A member of class type `type` that leads to another of the model's objects: an owning smart
// pointer to a model class, or a model class held by value.
std::optional<ObjectEdge> object_edge(const std::string& type) {
  for (const char* owning : {"std::unique_ptr<", "std::shared_ptr<"})
    if (type.rfind(owning, 0) == 0) {
      std::string pointee = first_template_argument(type);
      if (pointee.empty() || is_library_type(pointee)) return std::nullopt;
      ObjectEdge edge;
      edge.pointee = std::move(pointee);
      edge.by_pointer = true;
      return edge;
    }
  if (type.empty() || is_library_type(type)) return std::nullopt;
  ObjectEdge edge;
  edge.pointee = type;
  return edge;
}

std::string vector_element(const std::string& type) {
  return type.rfind("std::vector<", 0) == 0 ? first_template_argument(type) : std::string();
}

#ifdef KVLINT_HOST_WITH_LLVM
namespace {
namespace dw = llvm::dwarf;

bool is_class_tag(dw::Tag tag) {
  return tag == dw::DW_TAG_class_type || tag == dw::DW_TAG_structure_type || tag == dw::DW_TAG_union_type;
}

// "speech::StreamingDecoder": the DIE's name under its enclosing namespaces and classes.
std::string qualified_name(const llvm::DWARFDie& die) {
  const char* own = die.getShortName();
  std::string name = own != nullptr ? own : "";
  for (llvm::DWARFDie parent = die.getParent(); parent.isValid(); parent = parent.getParent()) {
    const dw::Tag tag = parent.getTag();
    if (tag != dw::DW_TAG_namespace && !is_class_tag(tag)) break;
    const char* scope = parent.getShortName();
    name = std::string(scope != nullptr ? scope : "(anonymous namespace)") + "::" + name;
  }
  return name;
}

// Through typedefs (`torch::Tensor` is `at::Tensor`) and cv-qualifiers.
llvm::DWARFDie underlying_type(llvm::DWARFDie type) {
  for (int i = 0; i < 16 && type.isValid(); ++i) {
    const dw::Tag tag = type.getTag();
    if (tag != dw::DW_TAG_typedef && tag != dw::DW_TAG_const_type && tag != dw::DW_TAG_volatile_type) break;
    type = type.getAttributeValueAsReferencedDie(dw::DW_AT_type);
  }
  return type;
}

std::optional<std::uint64_t> member_offset(const llvm::DWARFDie& die) {
  auto location = die.find(dw::DW_AT_data_member_location);
  if (!location) return std::nullopt;
  auto offset = location->getAsUnsignedConstant();
  if (!offset) return std::nullopt;
  return *offset;
}

}  // namespace

struct Symbolizer::Impl {
  llvm::symbolize::LLVMSymbolizer symbolizer{[] {
    llvm::symbolize::LLVMSymbolizer::Options options;
    options.Demangle = true;
    options.RelativeAddresses = false;
    return options;
  }()};
  // The plugin's DWARF, read on the first tensor_members() call.
  bool loaded = false;
  llvm::object::OwningBinary<llvm::object::ObjectFile> binary;
  std::unique_ptr<llvm::DWARFContext> dwarf;
  std::unordered_map<std::string, std::vector<llvm::DWARFDie>> definitions;  // short name -> DIEs

  void load(const std::string& path) {
    loaded = true;
    auto file = llvm::object::ObjectFile::createObjectFile(path);
    if (!file) {
      llvm::consumeError(file.takeError());
      return;
    }
    binary = std::move(*file);
    auto quiet = [](llvm::Error error) { llvm::consumeError(std::move(error)); };
    dwarf = llvm::DWARFContext::create(
        *binary.getBinary(), llvm::DWARFContext::ProcessDebugRelocations::Process, nullptr, "", quiet, quiet);
    for (const auto& unit : dwarf->compile_units())
      for (const auto& entry : unit->dies()) {
        const llvm::DWARFDie die(unit.get(), &entry);
        if (!is_class_tag(die.getTag()) || !die.hasChildren() || die.find(dw::DW_AT_declaration)) continue;
        if (const char* name = die.getShortName()) definitions[name].push_back(die);
      }
  }

  // The definition of a class a DIE names (a base may be only declared in that unit).
  llvm::DWARFDie definition(const llvm::DWARFDie& die) {
    if (!die.find(dw::DW_AT_declaration)) return die;
    return definition(qualified_name(die));
  }
  llvm::DWARFDie definition(const std::string& qualified) {
    auto found = definitions.find(last_component(qualified));
    if (found == definitions.end()) return {};
    for (const auto& candidate : found->second)
      if (qualified_name(candidate) == qualified) return candidate;
    return {};
  }

  // A std::vector member's element type: the instance's template argument (its first), else the
  // class its name spells; with its definition, whose byte size is the elements' stride.
  llvm::DWARFDie vector_element_type(const llvm::DWARFDie& vector, const std::string& vector_name) {
    for (const llvm::DWARFDie& child : vector.children())
      if (child.getTag() == dw::DW_TAG_template_type_parameter) {
        const llvm::DWARFDie element =
            underlying_type(child.getAttributeValueAsReferencedDie(dw::DW_AT_type));
        if (element.isValid() && is_class_tag(element.getTag())) return definition(element);
        return {};
      }
    return definition(vector_element(vector_name));
  }

  // The member `child` (at `offset`) of type std::vector<...>: a tensor member per element, or an
  // edge to each element of one of the model's classes (by value or owning pointer).
  void collect_vector(const llvm::DWARFDie& child, const llvm::DWARFDie& type, const std::string& type_name,
                      std::uint64_t offset, const char* cls_name, std::vector<TensorMember>& out,
                      std::vector<ObjectEdge>& edges) {
    const llvm::DWARFDie element = vector_element_type(type, type_name);
    if (!element.isValid()) return;
    const std::string element_name = qualified_name(element);
    if (element_name == "at::Tensor") {
      out.push_back({child.getShortName(), offset, cls_name != nullptr ? cls_name : "", true});
      return;
    }
    const auto size = element.find(dw::DW_AT_byte_size);
    const std::uint64_t stride = size ? size->getAsUnsignedConstant().getValueOr(0) : 0;
    auto edge = object_edge(element_name);
    if (!edge || stride == 0) return;
    edge->offset = offset;
    edge->in_vector = true;
    edge->stride = stride;
    edge->name = child.getShortName();
    edge->declaring_class = cls_name != nullptr ? cls_name : "";
    edges.push_back(std::move(*edge));
  }

  void collect(const llvm::DWARFDie& cls, std::uint64_t base, std::vector<TensorMember>& out,
               std::vector<ObjectEdge>& edges, int depth) {
    const char* cls_name = cls.getShortName();
    for (const llvm::DWARFDie& child : cls.children()) {
      const dw::Tag tag = child.getTag();
      const auto offset = member_offset(child);
      if (!offset) continue;  // a static member, a method, a nested type
      if (tag == dw::DW_TAG_inheritance && depth < 8) {
        const llvm::DWARFDie parent =
            definition(underlying_type(child.getAttributeValueAsReferencedDie(dw::DW_AT_type)));
        if (parent.isValid()) collect(parent, base + *offset, out, edges, depth + 1);
      } else if (tag == dw::DW_TAG_member && child.getShortName() != nullptr) {
        const llvm::DWARFDie type = underlying_type(child.getAttributeValueAsReferencedDie(dw::DW_AT_type));
        if (!type.isValid() || !is_class_tag(type.getTag())) continue;
        const std::string type_name = qualified_name(type);
        if (type_name == "at::Tensor")
          out.push_back({child.getShortName(), base + *offset, cls_name != nullptr ? cls_name : "", false});
        else if (type_name.rfind("std::vector<", 0) == 0)
          collect_vector(child, definition(type), type_name, base + *offset, cls_name, out, edges);
        else if (auto edge = object_edge(type_name)) {
          edge->offset = base + *offset;
          edge->name = child.getShortName();
          edge->declaring_class = cls_name != nullptr ? cls_name : "";
          edges.push_back(std::move(*edge));
        }
      }
    }
  }
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

void add_frame(std::vector<SourceSite>& chain, SourceSite frame) {
  const bool seen = std::any_of(chain.begin(), chain.end(), [&](const SourceSite& s) {
    return s.line == frame.line && s.file == frame.file;
  });
  if (!seen) chain.push_back(std::move(frame));
}

std::vector<SourceSite> Symbolizer::chain(const std::vector<std::uintptr_t>& return_addresses) {
  std::vector<SourceSite> out;
  for (std::uintptr_t address : return_addresses)
    for (auto& frame : frames_at(address))
      if (!frame.file.empty() && !is_library_source(frame.file)) add_frame(out, frame);
  return out;
}

const Symbolizer::Layout& Symbolizer::layout(const std::string& qualified) {
  auto cached = layouts_.find(qualified);
  if (cached != layouts_.end()) return cached->second;
  Layout out;
#ifdef KVLINT_HOST_WITH_LLVM
  if (!impl_->loaded) impl_->load(module_path_);
  const llvm::DWARFDie cls = impl_->definition(qualified);
  if (cls.isValid()) impl_->collect(cls, 0, out.tensors, out.edges, 0);
#endif
  return layouts_.emplace(qualified, std::move(out)).first->second;
}

std::vector<TensorMember> Symbolizer::tensor_members(const std::string& qualified) {
  return layout(qualified).tensors;
}

std::vector<ObjectEdge> Symbolizer::object_edges(const std::string& qualified) {
  return layout(qualified).edges;
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
