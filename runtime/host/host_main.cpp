// kvlint-model-host: boots one C++ model plugin (kvlint/model_plugin.h) in this process and streams
// the same JSON-lines events as the Python harness (runtime/python/kvlint_runtime), so `kvlint
// confirm` reconciles C++ and Python models alike. `kvlint confirm` runs it in a child process
// group with the boot entry's timeout; a crash or hang of the plugin ends only this process.
//
//   kvlint-model-host --name NAME --plugin LIB.so [--device auto|cpu|cuda] [--steps N]
//                     [--path P]... [--concurrency C]... [--owner CLASS]... [--config KEY=VALUE]...
//
// What it reports per path and concurrency (see runtime/README.md, "C++ models"):
// - "cache" per module holding registered K/V buffers (names like k_cache, v_cache, kv_cache):
//   rows, positions and layers from their shapes ([..., rows, kv_heads, positions, head_dim]);
// - "cache" per owner class for memory the model allocated on the path, still alive after it and
//   reachable through no parameter or buffer (a std::unordered_map of K/V, a plain tensor member),
//   at the allocating source line; rows: the live allocations of its busiest line;
// - "declaration" per spec the model's model_local_kv_specs() returns, at its declaring line;
// - on CUDA: a path named "graph" (or "graph_...") runs inside a CUDAGraph capture, then the graph
//   replays once ("capture" event with the caching allocator's reserved/allocated deltas), and
//   every path_done carries the caching allocator's allocated/reserved bytes, current and peak.
#include <ATen/Context.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Type.h>
#include <dlfcn.h>
#include <kvlint/model_plugin.h>
#include <link.h>
#include <torch/nn/module.h>
#include <torch/version.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

#include "allocation_tracker.hpp"
#include "cuda_device.hpp"
#include "json_line.hpp"
#include "symbolizer.hpp"

namespace kvlint::model_host {
namespace {

namespace plugin = kvlint::model_plugin;

struct Arguments {
  std::string name, plugin_path, device = "auto";
  int steps = 4;
  std::vector<std::string> paths, owners;
  std::vector<int> concurrency;
  std::map<std::string, std::string> config;
};

Arguments parse_arguments(int argc, char** argv) {
  Arguments args;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument("missing value after " + flag);
    const std::string value = argv[++i];
    if (flag == "--name") {
      args.name = value;
    } else if (flag == "--plugin") {
      args.plugin_path = value;
    } else if (flag == "--device") {
      args.device = value;
    } else if (flag == "--steps") {
      args.steps = std::stoi(value);
    } else if (flag == "--path") {
      args.paths.push_back(value);
    } else if (flag == "--concurrency") {
      args.concurrency.push_back(std::stoi(value));
    } else if (flag == "--owner") {
      args.owners.push_back(value);
    } else if (flag == "--config") {
      const auto eq = value.find('=');
      if (eq == std::string::npos) throw std::invalid_argument("--config wants KEY=VALUE, got " + value);
      args.config[value.substr(0, eq)] = value.substr(eq + 1);
    } else {
      throw std::invalid_argument("unknown argument " + flag);
    }
  }
  if (args.plugin_path.empty()) throw std::invalid_argument("--plugin is required");
  if (args.concurrency.empty()) args.concurrency = {1};
  return args;
}

// The JSON stream owns the real stdout; fd 1 then points at stderr, so whatever the plugin
// prints (std::cout, printf, a library's logging) cannot corrupt the stream.
class EventStream {
 public:
  explicit EventStream(std::string model) : model_(std::move(model)) {
    std::fflush(stdout);
    const int fd = ::dup(1);
    ::dup2(2, 1);
    out_ = fd >= 0 ? ::fdopen(fd, "w") : nullptr;
  }
  ~EventStream() {
    if (out_ != nullptr) std::fclose(out_);
  }
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;
  JsonLine line(std::string_view event) const { return JsonLine(event, model_); }
  void emit(const JsonLine& line) {
    if (out_ == nullptr) return;
    const std::string text = line.str();
    std::fwrite(text.data(), 1, text.size(), out_);
    std::fflush(out_);
  }

 private:
  std::string model_;
  std::FILE* out_ = nullptr;
};

// The K/V names the host reaches by name (the C++ front end's default vocabulary): with or
// without a trailing '_'; rotary tables (cos_cache, sin_cache) are not K/V.
bool is_kv_name(std::string name) {
  static const std::set<std::string> kNames{"k_cache",         "v_cache",   "kv_cache",    "key_cache",
                                            "value_cache",     "past_keys", "past_values", "past_key_values",
                                            "key_value_cache", "k_buffer",  "v_buffer"};
  while (!name.empty() && name.back() == '_') name.pop_back();
  return kNames.count(name) != 0;
}

std::string unqualified(std::string name) {
  name = name.substr(0, name.find('<'));
  const auto colon = name.rfind("::");
  return colon == std::string::npos ? name : name.substr(colon + 2);
}

struct KvGroup {  // registered K/V buffers of one module
  std::string owner;
  std::vector<at::Tensor> tensors;
};

// Walks the module tree through named_children() (no shared_from_this: the plugin may hold its
// root by value) collecting K/V buffers per module, every parameter/buffer storage and the modules.
void walk(const torch::nn::Module& module, std::vector<KvGroup>& groups, std::set<const void*>& reachable,
          std::vector<const torch::nn::Module*>& modules) {
  modules.push_back(&module);
  KvGroup group{unqualified(module.name()), {}};
  for (const auto& item : module.named_buffers(/*recurse=*/false)) {
    const at::Tensor& tensor = item.value();
    if (!tensor.defined()) continue;
    if (tensor.has_storage()) reachable.insert(tensor.storage().data());
    if (is_kv_name(item.key()) && tensor.dim() >= 2) group.tensors.push_back(tensor);
  }
  for (const auto& item : module.named_parameters(/*recurse=*/false))
    if (item.value().defined() && item.value().has_storage()) reachable.insert(item.value().storage().data());
  if (!group.tensors.empty()) groups.push_back(std::move(group));
  for (const auto& child : module.named_children()) walk(*child.value(), groups, reachable, modules);
}

// A tensor data member of a module holding a live allocation (its storage's data).
struct MemberSlot {
  std::string owner;  // the class declaring the member
  std::string name;   // "past_values_"
  at::Tensor tensor;
  const void* instance;  // the object holding it: one stream's state among those of a pool
  // The member of another class the object was reached through (StreamPool's streams_ for a
  // StreamState in it): where a static finding on the holder names the K/V. Empty for the root
  // objects (the plugin's model, the walked modules).
  std::pair<std::string, std::string> held_in;  // declaring class, member name
};

// The K/V word of a member's name: `stem` is the name with that word as '*' ("buf_*" for buf_k
// and buf_v, "past_*_" for past_key_ and past_value_, "*Cache" for kCache), so a class's K and V
// members have one stem. None when no word is K's or V's, or both are (key_value_cache: one member).
struct KvWord {
  std::string stem;
  bool is_key = false;
};

std::optional<KvWord> kv_word(const std::string& name) {
  static const std::set<std::string> kKey{"k", "key", "keys"}, kValue{"v", "val", "vals", "value", "values"};
  std::optional<KvWord> found;
  bool both = false;
  // Words split at '_' and at a lower-to-upper case step (pastKey).
  for (std::size_t begin = 0; begin < name.size();) {
    std::size_t end = begin + 1;
    while (end < name.size() && name[end] != '_' &&
           !(std::isupper(static_cast<unsigned char>(name[end])) != 0 &&
             std::islower(static_cast<unsigned char>(name[end - 1])) != 0))
      ++end;
    std::string word = name.substr(begin, end - begin);
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool key = kKey.count(word) != 0, value = kValue.count(word) != 0;
    if (key || value) {
      both = both || (found && found->is_key != key);
      if (!found) found = KvWord{name.substr(0, begin) + "*" + name.substr(end), key};
    }
    begin = end < name.size() && name[end] == '_' ? end + 1 : end;
  }
  if (both) return std::nullopt;
  return found;
}

// A spec's declared_file as the plugin's compiler saw it: absolute under CMake, normalised.
std::string declared_path(const char* file) {
  return std::filesystem::path(file).lexically_normal().string();
}

// Paths the host runs inside a CUDA-graph capture on CUDA, as the Python fixtures' "graph" path
// replays captured graphs; "eager" and the rest run as they are.
bool is_capture_path(const std::string& path) {
  return path == "graph" || path.rfind("graph_", 0) == 0;
}

std::int64_t product(at::IntArrayRef sizes, std::size_t begin, std::size_t end) {
  std::int64_t out = 1;
  for (std::size_t i = begin; i < end; ++i) out *= sizes[i];
  return out;
}

class Host {
 public:
  Host(Arguments args, EventStream& stream) : args_(std::move(args)), stream_(stream) {}

  void run() {
    tracker_.install();
    const std::string device = resolve_device();
    on_cuda_ = device == "cuda";
    const std::string untracked = on_cuda_ ? cuda_.start_tracking(tracker_) : std::string();
    stream_.emit(stream_.line("start")
                     .add("pid", static_cast<std::int64_t>(::getpid()))
                     .null("python")
                     .add("torch", TORCH_VERSION)
                     .null("transformers")
                     .add("device", device)
                     .add("host", "kvlint-model-host")
                     .add("plugin", args_.plugin_path)
                     .add("line_info", Symbolizer::has_line_info())
                     .add("cuda_support", CudaDevice::built_in())
                     .add("cuda_allocations_tracked", on_cuda_ && untracked.empty()));
    // Not fatal: registered buffers, declarations, captures and the allocator's figures remain.
    if (!untracked.empty()) std::fprintf(stderr, "kvlint-model-host: %s\n", untracked.c_str());
    plugin::CreateFn create = load_plugin();
    if (create == nullptr) return;

    const std::uint64_t before_build = tracker_.sequence();
    std::unique_ptr<plugin::Model> model;
    try {
      const plugin::Config config(args_.config, device);
      model.reset(create(&config));
      if (!model) throw std::runtime_error("kvlint_model_create_v1 returned null");
    } catch (...) {
      error("build", 0, std::current_exception());
      return;
    }
    report_observations(*model, "build", 0, before_build);
    for (const auto& path : args_.paths)
      for (int concurrency : args_.concurrency) run_path(*model, path, concurrency);
  }

  void error(const std::optional<std::string>& path, std::optional<int> concurrency,
             std::exception_ptr failure, const std::string& prefix = "") {
    std::string kind = "exception", message;
    try {
      std::rethrow_exception(failure);
    } catch (const std::bad_alloc& e) {
      kind = "memory";
      message = std::string("std::bad_alloc: ") + e.what();
    } catch (const c10::OutOfMemoryError& e) {
      kind = "memory";
      message = std::string("OutOfMemoryError: ") + e.what_without_backtrace();
    } catch (const c10::Error& e) {
      message = std::string("c10::Error: ") + e.what_without_backtrace();
    } catch (const std::exception& e) {
      message = demangled_type(e) + ": " + e.what();
    } catch (...) {
      message = "a non-standard exception";
    }
    emit_error(path, concurrency, kind, prefix + message);
  }

  void emit_error(const std::optional<std::string>& path, std::optional<int> concurrency,
                  const std::string& kind, const std::string& message) {
    auto line = stream_.line("error");
    line.add("path", path)
        .add("concurrency", concurrency)
        .add("kind", kind)
        .add("message", message.substr(0, 2000));
    stream_.emit(line);
  }

 private:
  static std::string demangled_type(const std::exception& e) {
    int status = 0;
    char* name = abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status);
    std::string out = status == 0 && name != nullptr ? name : typeid(e).name();
    std::free(name);
    return out;
  }

  std::string resolve_device() const {
    if (args_.device == "auto" || args_.device.empty()) return CudaDevice::available() ? "cuda" : "cpu";
    if (args_.device == "cuda" && !CudaDevice::available())
      throw std::runtime_error(CudaDevice::unavailable_reason());
    if (args_.device != "cuda" && args_.device != "cpu")
      throw std::invalid_argument("device '" + args_.device + "': the host runs on cpu or cuda");
    return args_.device;
  }

  // dlopen + the stamp check; emits the "import" error and returns null when the plugin is unusable.
  plugin::CreateFn load_plugin() {
    handle_ = ::dlopen(args_.plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* why = ::dlerror();
      emit_error(std::nullopt, std::nullopt, "import",
                 std::string("cannot load plugin: ") + (why ? why : "?"));
      return nullptr;
    }
    auto stamp_fn = reinterpret_cast<plugin::StampFn>(::dlsym(handle_, "kvlint_model_plugin_stamp"));
    if (stamp_fn == nullptr) {
      emit_error(std::nullopt, std::nullopt, "import",
                 args_.plugin_path +
                     " is not a kvlint model plugin: it exports no kvlint_model_plugin_stamp "
                     "(define the model with KVLINT_MODEL_PLUGIN)");
      return nullptr;
    }
    const plugin::Stamp& stamp = *stamp_fn();
    const std::string plugin_torch(stamp.torch_version,
                                   strnlen(stamp.torch_version, sizeof stamp.torch_version));
    std::string mismatch;
    if (stamp.api_version != plugin::kApiVersion)
      mismatch = "plugin API version " + std::to_string(stamp.api_version) + ", the host speaks " +
                 std::to_string(plugin::kApiVersion);
    else if (stamp.cxx11_abi != _GLIBCXX_USE_CXX11_ABI)
      mismatch =
          "the plugin was built with _GLIBCXX_USE_CXX11_ABI=" + std::to_string(stamp.cxx11_abi) +
          ", the host and its LibTorch with _GLIBCXX_USE_CXX11_ABI=" + std::to_string(_GLIBCXX_USE_CXX11_ABI);
    else if (!plugin_torch.empty() && plugin_torch != TORCH_VERSION)
      mismatch =
          "the plugin was built against LibTorch " + plugin_torch + ", the host runs LibTorch " TORCH_VERSION;
    if (!mismatch.empty()) {
      emit_error(std::nullopt, std::nullopt, "import", "ABI mismatch: " + mismatch + "; rebuild the plugin");
      return nullptr;
    }
    auto create = reinterpret_cast<plugin::CreateFn>(::dlsym(handle_, "kvlint_model_create_v1"));
    if (create == nullptr) {
      emit_error(
          std::nullopt, std::nullopt, "import",
          args_.plugin_path + " exports no entry symbol kvlint_model_create_v1 (KVLINT_MODEL_PLUGIN(Model))");
      return nullptr;
    }
    locate_plugin(reinterpret_cast<const void*>(create));
    return create;
  }

  // The plugin's load address and segments, for the allocator's frame filter and the symbolizer.
  void locate_plugin(const void* symbol) {
    Dl_info info{};
    if (::dladdr(symbol, &info) == 0 || info.dli_fbase == nullptr) return;
    struct Search {
      std::uintptr_t base;
      std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;
    } search{reinterpret_cast<std::uintptr_t>(info.dli_fbase), {}};
    ::dl_iterate_phdr(
        [](dl_phdr_info* phdr, std::size_t, void* data) {
          auto* s = static_cast<Search*>(data);
          std::uintptr_t low = UINTPTR_MAX;
          for (int i = 0; i < phdr->dlpi_phnum; ++i)
            if (phdr->dlpi_phdr[i].p_type == PT_LOAD)
              low = std::min<std::uintptr_t>(low, phdr->dlpi_addr + phdr->dlpi_phdr[i].p_vaddr);
          if (low != s->base) return 0;
          for (int i = 0; i < phdr->dlpi_phnum; ++i) {
            const auto& segment = phdr->dlpi_phdr[i];
            if (segment.p_type == PT_LOAD && (segment.p_flags & PF_X) != 0)
              s->ranges.emplace_back(phdr->dlpi_addr + segment.p_vaddr,
                                     phdr->dlpi_addr + segment.p_vaddr + segment.p_memsz);
          }
          s->base = phdr->dlpi_addr;
          return 1;
        },
        &search);
    tracker_.set_plugin_ranges(search.ranges);
    symbolizer_ = std::make_unique<Symbolizer>(info.dli_fname != nullptr ? info.dli_fname : args_.plugin_path,
                                               search.base);
  }

  void run_path(plugin::Model& model, const std::string& path, int concurrency) {
    const std::uint64_t before = tracker_.sequence();
    const bool capture = on_cuda_ && is_capture_path(path);
    if (on_cuda_) cuda_.reset_peaks();
    std::optional<CaptureFigures> captured;
    bool ok = true;
    try {
      if (capture)
        captured = cuda_.capture_and_replay([&] { model.run(path, concurrency, args_.steps); });
      else
        model.run(path, concurrency, args_.steps);
    } catch (...) {
      ok = false;
      error(path, concurrency, std::current_exception());
    }
    report_observations(model, path, concurrency, before);
    if (captured) report_capture(model, path, concurrency, *captured);
    if (ok) report_declarations(model, path, concurrency);
    auto done = stream_.line("path_done");
    done.add("path", path).add("concurrency", concurrency).add("ok", ok);
    if (on_cuda_) {
      const CudaMemory memory = cuda_.memory();
      done.add("cuda_allocated_bytes", memory.allocated).add("cuda_reserved_bytes", memory.reserved);
      done.add("cuda_peak_allocated_bytes", memory.peak_allocated)
          .add("cuda_peak_reserved_bytes", memory.peak_reserved);
    }
    stream_.emit(done);
  }

  // The capture the host made around the path's K/V step, as the harness reports a
  // CUDAGraph.capture_begin/capture_end pair: at the plugin (line 0: the host, not a source line,
  // began it), owned by the root module's class.
  void report_capture(const plugin::Model& model, const std::string& path, int concurrency,
                      const CaptureFigures& figures) {
    std::string owner = args_.owners.empty() ? std::string() : args_.owners.front();
    if (const torch::nn::Module* root = model.root()) owner = unqualified(root->name());
    auto line = stream_.line("capture");
    line.add("path", path).add("concurrency", concurrency).add("kind", "capture_begin");
    line.add("file", args_.plugin_path).add("line", std::int64_t{0});
    if (owner.empty())
      line.null("owner");
    else
      line.add("owner", owner);
    line.add("count", std::int64_t{1}).add("resident_bytes", figures.resident_bytes);
    line.add("allocated_bytes", figures.allocated_bytes);
    stream_.emit(line);
  }

  SourceSite site_of(const LiveAllocation& allocation) {
    if (!symbolizer_ || allocation.frame_count == 0) return {};
    return symbolizer_->site({allocation.frames.begin(), allocation.frames.begin() + allocation.frame_count});
  }

  JsonLine cache_line(const std::string& path, int concurrency, const std::string& cache_class,
                      const SourceSite& site, const std::string& owner) {
    auto line = stream_.line("cache");
    line.add("path", path).add("concurrency", concurrency).add("class", cache_class);
    line.add("file", site.file.empty() ? args_.plugin_path : site.file)
        .add("line", static_cast<std::int64_t>(site.line));
    if (owner.empty())
      line.null("owner");
    else
      line.add("owner", owner);
    return line;
  }

  void report_observations(plugin::Model& model, const std::string& path, int concurrency,
                           std::uint64_t since) {
    std::vector<KvGroup> groups;
    std::set<const void*> reachable;
    std::vector<const torch::nn::Module*> modules;
    if (const torch::nn::Module* root = model.root()) walk(*root, groups, reachable, modules);
    for (const auto& group : groups) report_buffers(group, path, concurrency);
    report_unreachable(path, concurrency, since, reachable, members_of(model, modules));
  }

  // The tensor data members of the model's objects (their classes' layouts from the plugin's debug
  // information), by the storage they hold: which member of which class a live allocation is stored
  // in. The objects: the walked modules, and every object reached from the plugin's model through
  // members held by value or by std::unique_ptr / std::shared_ptr, so a decoder that is no
  // torch::nn::Module (a TorchScript wrapper with its past_k_ / past_v_) is found without the
  // plugin naming it.
  std::map<const void*, MemberSlot> members_of(const plugin::Model& model,
                                               const std::vector<const torch::nn::Module*>& modules) {
    std::map<const void*, MemberSlot> out;
    if (!symbolizer_) return out;
    std::set<std::pair<const char*, std::string>> seen;
    for (const torch::nn::Module* module : modules)
      visit(static_cast<const char*>(dynamic_cast<const void*>(module)),
            c10::demangle(typeid(*module).name()), {}, 0, seen, out);
    visit(static_cast<const char*>(dynamic_cast<const void*>(&model)), c10::demangle(typeid(model).name()),
          {}, 0, seen, out);
    return out;
  }

  void visit(const char* object, const std::string& type, const std::pair<std::string, std::string>& held_in,
             int depth, std::set<std::pair<const char*, std::string>>& seen,
             std::map<const void*, MemberSlot>& out) {
    if (object == nullptr || depth > 12 || !seen.insert({object, type}).second) return;
    for (const auto& member : symbolizer_->tensor_members(type)) {
      // The debug information says an at::Tensor (or a std::vector of them) lies there.
      for (const char* at : elements(object + member.offset, member.in_vector, sizeof(at::Tensor))) {
        const auto& tensor = *reinterpret_cast<const at::Tensor*>(at);
        if (!tensor.defined() || !tensor.has_storage() || tensor.storage().data() == nullptr) continue;
        out.emplace(tensor.storage().data(),
                    MemberSlot{member.declaring_class, member.name, tensor, object, held_in});
      }
    }
    for (const auto& edge : symbolizer_->object_edges(type)) {
      const std::pair<std::string, std::string> via{edge.declaring_class, edge.name};
      for (const char* at : elements(object + edge.offset, edge.in_vector, edge.stride)) {
        if (!edge.by_pointer) {
          visit(at, edge.pointee, via, depth + 1, seen, out);
          continue;
        }
        const char* target = *reinterpret_cast<const char* const*>(at);
        if (target == nullptr) continue;
        std::string dynamic = edge.pointee;
        most_derived(target, dynamic);
        visit(target, dynamic, via, depth + 1, seen, out);
      }
    }
  }

  // Where the elements of a member lie: the member itself, or each element of the std::vector at
  // `at` (libstdc++: its first two words are begin and end), at most 65536 of them.
  static std::vector<const char*> elements(const char* at, bool in_vector, std::uint64_t stride) {
    if (!in_vector) return {at};
    const auto* words = reinterpret_cast<const char* const*>(at);
    const char* begin = words[0];
    const char* end = words[1];
    if (begin == nullptr || end < begin || stride == 0) return {};
    const auto span = static_cast<std::uint64_t>(end - begin);
    if (span % stride != 0 || span / stride > 65536) return {};
    std::vector<const char*> out;
    for (std::uint64_t i = 0; i < span / stride; ++i) out.push_back(begin + i * stride);
    return out;
  }

  // A polymorphic object behind a pointer to its base: the most-derived object and its class, from
  // its vtable pointer when that points into a vtable symbol the plugin exports ("vtable for X").
  static void most_derived(const char*& object, std::string& type) {
    const void* vptr = *reinterpret_cast<const void* const*>(object);
    Dl_info info{};
    if (vptr == nullptr || ::dladdr(vptr, &info) == 0 || info.dli_sname == nullptr ||
        std::strncmp(info.dli_sname, "_ZTV", 4) != 0 ||
        static_cast<const char*>(vptr) < static_cast<const char*>(info.dli_saddr) + 2 * sizeof(void*))
      return;
    const std::string name = c10::demangle(info.dli_sname);
    const std::string prefix = "vtable for ";
    if (name.rfind(prefix, 0) != 0) return;
    object += reinterpret_cast<const std::ptrdiff_t*>(vptr)[-2];  // offset to top
    type = name.substr(prefix.size());
  }

  // One event per module holding registered K/V buffers: [..., rows, kv_heads, positions, head_dim].
  void report_buffers(const KvGroup& group, const std::string& path, int concurrency) {
    std::int64_t rows = 0, positions = 0, layers = 0, logical = 0, bytes = 0;
    std::set<const void*> storages;
    LiveAllocation first{};
    bool located = false;
    for (const auto& tensor : group.tensors) {
      const auto sizes = tensor.sizes();
      const std::size_t n = sizes.size();
      rows = std::max<std::int64_t>(rows, n >= 4 ? sizes[n - 4] : sizes[0]);
      positions = std::max<std::int64_t>(positions, sizes[n - 2]);
      layers = std::max<std::int64_t>(layers, n > 4 ? product(sizes, 0, n - 4) : 1);
      logical += static_cast<std::int64_t>(tensor.numel()) * static_cast<std::int64_t>(tensor.element_size());
      const void* data = tensor.storage().data();
      if (storages.insert(data).second) bytes += static_cast<std::int64_t>(tensor.storage().nbytes());
      if (!located) located = tracker_.find(data, first);
    }
    const SourceSite site = located ? site_of(first) : SourceSite{};
    auto line = cache_line(path, concurrency, "registered K/V buffers", site, group.owner);
    line.add("rows", rows).add("positions", positions).add("layers", layers).add("bytes", bytes);
    line.add("bytes_per_row", rows > 0 ? logical / rows : 0).add("logical_bytes", logical);
    line.add("objects", static_cast<std::int64_t>(group.tensors.size())).add("alive_after_step", true);
    line.add("in_capture", false).add("growth", std::vector<std::int64_t>{});
    stream_.emit(line);
  }

  // Which of its class's caches a member's memory belongs to: a K member and a V member of one
  // stem are one cache whatever their shapes (buf_k and buf_v, past_key_ and a narrower
  // past_value_), named by the stem; else "" for the K/V names; else K/V by shape (one shape and
  // dtype, 3+ dims); else a cache of its own (a last hidden state, an overlap tail). `pairs`: the
  // stems of the owner's members that have both a K and a V member.
  static std::string kv_group_of(const MemberSlot& member, const std::set<std::string>& pairs) {
    if (const auto word = kv_word(member.name); word && pairs.count(word->stem) != 0) return "*" + word->stem;
    if (is_kv_name(member.name)) return "";
    if (member.tensor.dim() < 3) return member.name;
    std::string signature = "[";
    for (const std::int64_t size : member.tensor.sizes()) signature += std::to_string(size) + ",";
    return signature + "] " + std::string(member.tensor.dtype().name());
  }

  // Memory allocated on this path, alive after it and behind no parameter or buffer: hidden state
  // such as a per-request std::unordered_map of K/V or unregistered tensor members. Grouped by owner
  // class: the class declaring the member the allocation is stored in, else the allocating
  // function's. K and V (two allocations on two lines, two members) are one event: members with K/V
  // names, or of one shape and dtype (3+ dims); any other tensor member is an event of its own. Each event
  // names its members and carries every allocating line's call chain in the model, so a finding on either
  // member or line is its. Rows: from the shapes when every allocation is a K/V member ([..., rows, kv_heads,
  // positions, head_dim], as registered buffers), else the live allocations of the busiest line.
  void report_unreachable(const std::string& path, int concurrency, std::uint64_t since,
                          const std::set<const void*>& reachable,
                          const std::map<const void*, MemberSlot>& slots) {
    struct Line {
      SourceSite site;
      std::int64_t count = 0, bytes = 0;
      bool in_capture = false;
    };
    struct Group {
      std::map<std::pair<std::string, std::uint32_t>, Line> lines;
      std::vector<SourceSite> chain;
      // declaring class, name -> the holders' members the objects were reached through
      std::map<std::pair<std::string, std::string>, std::set<std::pair<std::string, std::string>>> members;
      std::map<const void*, std::vector<at::Tensor>> tensors;  // the members' tensors, per object
      bool all_members = true;
    };
    // Per declaring class, the stems its K and V members share (StreamState's buf_k and buf_v).
    std::map<std::string, std::set<std::string>> pairs;
    {
      std::map<std::pair<std::string, std::string>, std::set<bool>> sides;
      for (const auto& [data, slot] : slots)
        if (const auto word = kv_word(slot.name)) sides[{slot.owner, word->stem}].insert(word->is_key);
      for (const auto& [key, seen] : sides)
        if (seen.size() == 2) pairs[key.first].insert(key.second);
    }
    std::map<std::pair<std::string, std::string>, Group> by_owner;  // owner, non-K/V member or ""
    for (const auto& allocation : tracker_.live()) {
      if (allocation.sequence <= since || reachable.count(allocation.data) != 0 ||
          allocation.frame_count == 0)
        continue;
      SourceSite site = site_of(allocation);
      if (site.file.empty() && site.function.empty()) continue;
      const auto slot = slots.find(allocation.data);
      const MemberSlot* member = slot == slots.end() ? nullptr : &slot->second;
      const std::string owner = member != nullptr ? member->owner : site.owner;
      Group& group = by_owner[{owner, member != nullptr ? kv_group_of(*member, pairs[member->owner]) : ""}];
      if (member != nullptr) {
        auto& held_in = group.members[{member->owner, member->name}];
        if (!member->held_in.second.empty()) held_in.insert(member->held_in);
        group.tensors[member->instance].push_back(member->tensor);
      } else {
        group.all_members = false;
      }
      for (auto& frame : chain_of(allocation)) add_frame(group.chain, std::move(frame));
      Line& line = group.lines[{site.file, site.line}];
      line.site = site;
      line.count += 1;
      line.bytes += static_cast<std::int64_t>(allocation.bytes);
      line.in_capture = line.in_capture || allocation.in_capture;
    }
    for (const auto& [key, group] : by_owner) {
      const Line* busiest = nullptr;
      std::int64_t bytes = 0, objects = 0;
      bool in_capture = false;
      for (const auto& [where, line] : group.lines) {
        bytes += line.bytes;
        objects += line.count;
        in_capture = in_capture || line.in_capture;
        if (busiest == nullptr || line.count > busiest->count ||
            (line.count == busiest->count && line.bytes > busiest->bytes))
          busiest = &line;
      }
      std::int64_t rows = busiest->count, positions = 0, layers = 0, logical = bytes;
      const bool kv = key.second.empty() || key.second.front() == '[' || key.second.front() == '*';
      if (group.all_members && kv && !group.tensors.empty()) {
        // Each object's rows from its shapes; the objects' rows add up (one state per stream).
        rows = positions = layers = logical = 0;
        for (const auto& [instance, tensors] : group.tensors) {
          std::int64_t object_rows = 0;
          for (const auto& tensor : tensors) {
            const auto sizes = tensor.sizes();
            const std::size_t n = sizes.size();
            if (n == 0) continue;
            object_rows = std::max<std::int64_t>(object_rows, n >= 4 ? sizes[n - 4] : sizes[0]);
            positions = std::max<std::int64_t>(positions, n >= 2 ? sizes[n - 2] : 0);
            layers = std::max<std::int64_t>(layers, n > 4 ? product(sizes, 0, n - 4) : 1);
            logical +=
                static_cast<std::int64_t>(tensor.numel()) * static_cast<std::int64_t>(tensor.element_size());
          }
          rows += object_rows;
        }
      }
      auto event = cache_line(path, concurrency, "allocation", busiest->site, key.first);
      event.add("rows", rows).add("positions", positions).add("layers", layers).add("bytes", bytes);
      event.add("bytes_per_row", rows > 0 ? logical / rows : 0).add("logical_bytes", logical);
      event.add("objects", objects).add("alive_after_step", true).add("in_capture", in_capture);
      event.add("growth", std::vector<std::int64_t>{}).add("function", busiest->site.function);
      std::vector<JsonLine> chain, members;
      for (const auto& frame : group.chain)
        chain.push_back(JsonLine()
                            .add("file", frame.file)
                            .add("line", static_cast<std::int64_t>(frame.line))
                            .add("owner", frame.owner));
      for (const auto& [member, holders] : group.members) {
        std::vector<JsonLine> held_in;
        for (const auto& [holder, name] : holders)
          held_in.push_back(JsonLine().add("owner", holder).add("name", name));
        members.push_back(
            JsonLine().add("owner", member.first).add("name", member.second).add("held_in", held_in));
      }
      event.add("chain", chain).add("members", members);
      stream_.emit(event);
    }
  }

  std::vector<SourceSite> chain_of(const LiveAllocation& allocation) {
    if (!symbolizer_ || allocation.frame_count == 0) return {};
    return symbolizer_->chain(
        {allocation.frames.begin(), allocation.frames.begin() + allocation.frame_count});
  }

  void report_declarations(plugin::Model& model, const std::string& path, int concurrency) {
    std::vector<plugin::Declared> declared;
    try {
      declared = model.model_local_kv_specs();
    } catch (...) {
      error(path, concurrency, std::current_exception(), "collecting declarations: ");
      return;
    }
    for (const auto& [owner, spec] : declared) {
      const std::int64_t rows = spec.row_count(concurrency);
      auto line = stream_.line("declaration");
      line.add("path", path).add("concurrency", concurrency).null("collector").add("owner", owner);
      line.add("name", spec.name).add("bytes_per_row", spec.bytes_per_row());
      line.add("rows_driver", std::string(model_local_kv::name_of(spec.rows)));
      if (spec.rows == model_local_kv::RowDriver::Fixed)
        line.add("rows_fixed", spec.rows_fixed);
      else
        line.null("rows_fixed");
      line.add("rows", rows).add("total_bytes", spec.bytes_per_row() * rows);
      line.add("capacity", spec.physical_capacity_positions)
          .add("scope", std::string(model_local_kv::name_of(spec.scope)));
      line.add("capacity_source", spec.capacity_source).add("declared", true);
      // Where the spec is declared (the harness's file/line of model_local_kv_specs): RT003's anchor.
      if (spec.declared_file != nullptr && *spec.declared_file != '\0' && spec.declared_line > 0)
        line.add("file", declared_path(spec.declared_file))
            .add("line", static_cast<std::int64_t>(spec.declared_line));
      stream_.emit(line);
    }
    if (!declared.empty()) return;
    // "Declares nothing" must be visible, as in the Python harness.
    std::vector<std::string> owners = args_.owners.empty() ? std::vector<std::string>{""} : args_.owners;
    for (const auto& owner : owners) {
      auto line = stream_.line("declaration");
      line.add("path", path)
          .add("concurrency", concurrency)
          .null("collector")
          .add("owner", owner)
          .null("name");
      line.add("bytes_per_row", std::int64_t{0})
          .null("rows_driver")
          .null("rows_fixed")
          .add("rows", std::int64_t{0});
      line.add("total_bytes", std::int64_t{0}).null("capacity").null("scope").null("capacity_source");
      line.add("declared", false);
      stream_.emit(line);
    }
  }

  Arguments args_;
  EventStream& stream_;
  AllocationTracker tracker_{c10::GetDefaultCPUAllocator()};
  CudaDevice cuda_;  // declared after the tracker: its trace callback refers to it
  bool on_cuda_ = false;
  void* handle_ = nullptr;  // never dlclose'd: tensors and vtables of the plugin live until exit
  std::unique_ptr<Symbolizer> symbolizer_;
};

}  // namespace
}  // namespace kvlint::model_host

int main(int argc, char** argv) {
  using namespace kvlint::model_host;
  Arguments args;
  try {
    args = parse_arguments(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvlint-model-host: %s\n", e.what());
    return 2;
  }
  EventStream stream(args.name);
  // The host is never destroyed: the allocator it installed must outlive every CPU tensor, and
  // the plugin's static destructors must not run after the plugin's model is gone. The process
  // ends with _exit once "end" is out.
  auto* host = new Host(args, stream);
  try {
    host->run();
  } catch (...) {
    host->error(std::nullopt, std::nullopt, std::current_exception());
  }
  stream.emit(stream.line("end"));
  std::fflush(nullptr);
  ::_exit(0);
}
