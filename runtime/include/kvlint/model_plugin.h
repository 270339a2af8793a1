// The C++ model plugin contract of `kvlint confirm` (runtime/README.md, "C++ models").
//
// A C++ model is a shared library that `kvlint-model-host` (runtime/host) loads in a child
// process. It exports two `extern "C"` symbols, both defined by the macros below:
//
//   kvlint_model_plugin_stamp   what the plugin was built against (API version, libstdc++ ABI,
//                               LibTorch version); the host refuses a plugin whose stamp differs
//                               from its own, before calling anything else in it
//   kvlint_model_create_v1      builds the model from the boot entry's `config` table
//
//   #include <kvlint/model_plugin.h>
//   class TalkerPlugin final : public kvlint::model_plugin::Model { ... };
//   KVLINT_MODEL_PLUGIN(TalkerPlugin)   // TalkerPlugin(const kvlint::model_plugin::Config&)
//
// The host then calls `run(path, concurrency, steps)` once per path and concurrency of the boot
// entry, and after each `model_local_kv_specs()` and `root()` (walked for registered buffers).
// An exception from the constructor or run() is reported as the harness reports a Python
// exception; a crash or hang kills only the child.
#pragma once

#include <cxxabi.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

#include "kvlint/model_local_kv.h"

#if defined(__has_include)
#if __has_include(<torch/version.h>)
#include <torch/version.h>
#endif
#endif

namespace torch::nn {
class Module;
}

namespace kvlint::model_plugin {

// 2: Spec carries where it is declared (declared_file, declared_line), which changed its layout.
inline constexpr std::uint32_t kApiVersion = 2;

// What a plugin was built against. Plain data, so the host can read it from a plugin built with
// another C++ ABI before anything of that ABI crosses the boundary.
struct Stamp {
  std::uint32_t api_version;
  std::int32_t cxx11_abi;  // _GLIBCXX_USE_CXX11_ABI: std::string's layout differs between 0 and 1
  char torch_version[32];  // TORCH_VERSION of the headers it was compiled with; "" without LibTorch
};

#ifdef TORCH_VERSION
#define KVLINT_MODEL_PLUGIN_TORCH_VERSION TORCH_VERSION
#else
#define KVLINT_MODEL_PLUGIN_TORCH_VERSION ""
#endif

// The boot entry's `[tool.kvlint.runtime.models.NAME.config]` table, values as strings.
class Config {
 public:
  Config(std::map<std::string, std::string> values, std::string device)
      : values_(std::move(values)), device_(std::move(device)) {}
  // "cpu" or "cuda": the resolved device the model must be built on.
  const std::string& device() const { return device_; }
  std::string get(const std::string& key, const std::string& fallback) const {
    auto it = values_.find(key);
    return it == values_.end() ? fallback : it->second;
  }
  std::int64_t get_int(const std::string& key, std::int64_t fallback) const {
    auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    char* end = nullptr;
    const long long value = std::strtoll(it->second.c_str(), &end, 10);
    if (end == it->second.c_str() || *end != '\0')
      throw std::invalid_argument("config " + key + " = \"" + it->second + "\" is not an integer");
    return value;
  }

 private:
  std::map<std::string, std::string> values_;
  std::string device_;
};

// One collected declaration: the class whose model_local_kv_specs() returned it, and the spec.
struct Declared {
  std::string owner;
  model_local_kv::Spec spec;
};

// The unqualified class name ("CppTalker" for kvlint_example::CppTalker), as static findings name it.
template <typename T>
std::string class_name() {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(typeid(T).name(), nullptr, nullptr, &status), std::free);
  std::string name = status == 0 && demangled ? demangled.get() : typeid(T).name();
  name = name.substr(0, name.find('<'));
  const auto colon = name.rfind("::");
  return colon == std::string::npos ? name : name.substr(colon + 2);
}

// The specs `declarer.model_local_kv_specs()` returns, credited to its class.
template <typename T>
std::vector<Declared> declarations_of(const T& declarer) {
  std::vector<Declared> out;
  for (auto& spec : declarer.model_local_kv_specs())
    out.push_back(Declared{class_name<T>(), std::move(spec)});
  return out;
}

// What a plugin implements. The host owns the object (deleted before the host exits).
class Model {
 public:
  virtual ~Model() = default;
  // Drives one path ("eager", "streaming", ...) with `concurrency` requests in flight for `steps`
  // steps, as the Python driver does. Throws for an unknown path or a failure.
  virtual void run(const std::string& path, int concurrency, int steps) = 0;
  // The declarations the engine would collect from this model now (empty: declares nothing).
  virtual std::vector<Declared> model_local_kv_specs() const = 0;
  // The root module: its registered buffers (recursively) are the K/V the host can reach by name.
  // nullptr when the model holds no torch::nn::Module.
  virtual const torch::nn::Module* root() const = 0;
};

using CreateFn = Model* (*)(const Config* config);
using StampFn = const Stamp* (*)();

}  // namespace kvlint::model_plugin

// Defines the stamp; every plugin uses it once (KVLINT_MODEL_PLUGIN does).
#define KVLINT_MODEL_PLUGIN_STAMP()                                                                      \
  extern "C" __attribute__((visibility("default"))) const ::kvlint::model_plugin::Stamp*                 \
  kvlint_model_plugin_stamp() {                                                                          \
    static const ::kvlint::model_plugin::Stamp stamp{                                                    \
        ::kvlint::model_plugin::kApiVersion, _GLIBCXX_USE_CXX11_ABI, KVLINT_MODEL_PLUGIN_TORCH_VERSION}; \
    return &stamp;                                                                                       \
  }

// Defines the stamp and the entry that builds `ModelClass` from the boot entry's config.
#define KVLINT_MODEL_PLUGIN(ModelClass)                                                                    \
  KVLINT_MODEL_PLUGIN_STAMP()                                                                              \
  extern "C" __attribute__((visibility("default"))) ::kvlint::model_plugin::Model* kvlint_model_create_v1( \
      const ::kvlint::model_plugin::Config* config) {                                                      \
    return new ModelClass(*config);                                                                        \
  }
