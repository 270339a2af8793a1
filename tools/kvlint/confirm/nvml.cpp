#include "tools/kvlint/confirm/nvml.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <vector>

namespace kvlint::confirm {
namespace {

// The few NVML declarations used, mirrored from nvml.h (stable ABI) so no header is needed.
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlErrorInsufficientSize = 7;
constexpr unsigned long long kNvmlValueNotAvailable = ULLONG_MAX;

// nvmlProcessInfo_t as taken by the _v2 and _v3 entry points.
struct NvmlProcessInfo {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
// nvmlProcessInfo_v1_t, taken by the unversioned entry point of older drivers.
struct NvmlProcessInfoV1 {
  unsigned int pid;
  unsigned long long usedGpuMemory;
};

using InitFn = nvmlReturn_t (*)();
using ShutdownFn = nvmlReturn_t (*)();
using CountFn = nvmlReturn_t (*)(unsigned int*);
using HandleFn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using ProcessesFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, void*);

class LibraryHandle {
 public:
  explicit LibraryHandle(void* handle) : handle_(handle) {}
  ~LibraryHandle() {
    if (handle_ != nullptr) ::dlclose(handle_);
  }
  LibraryHandle(const LibraryHandle&) = delete;
  LibraryHandle& operator=(const LibraryHandle&) = delete;
  void* get() const { return handle_; }

 private:
  void* handle_;
};

template <typename Fn>
Fn symbol(void* handle, const char* name) {
  return reinterpret_cast<Fn>(::dlsym(handle, name));
}

}  // namespace

struct NvmlSampler::Api {
  explicit Api(void* handle) : library(handle) {}
  LibraryHandle library;
  ShutdownFn shutdown = nullptr;
  ProcessesFn processes = nullptr;
  bool processes_v1 = false;  // the old struct layout
  std::vector<nvmlDevice_t> devices;
  bool initialized = false;
  ~Api() {
    if (initialized && shutdown != nullptr) shutdown();
  }
};

NvmlSampler::NvmlSampler(const std::string& library) {
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = ::dlerror();
    reason_ = error != nullptr ? error : "dlopen failed";
    return;
  }
  auto api = std::make_unique<Api>(handle);
  auto init = symbol<InitFn>(handle, "nvmlInit_v2");
  if (init == nullptr) init = symbol<InitFn>(handle, "nvmlInit");
  api->shutdown = symbol<ShutdownFn>(handle, "nvmlShutdown");
  auto count_fn = symbol<CountFn>(handle, "nvmlDeviceGetCount_v2");
  if (count_fn == nullptr) count_fn = symbol<CountFn>(handle, "nvmlDeviceGetCount");
  auto handle_fn = symbol<HandleFn>(handle, "nvmlDeviceGetHandleByIndex_v2");
  if (handle_fn == nullptr) handle_fn = symbol<HandleFn>(handle, "nvmlDeviceGetHandleByIndex");
  api->processes = symbol<ProcessesFn>(handle, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (api->processes == nullptr)
    api->processes = symbol<ProcessesFn>(handle, "nvmlDeviceGetComputeRunningProcesses_v2");
  if (api->processes == nullptr) {
    api->processes = symbol<ProcessesFn>(handle, "nvmlDeviceGetComputeRunningProcesses");
    api->processes_v1 = true;
  }
  if (init == nullptr || api->shutdown == nullptr || count_fn == nullptr || handle_fn == nullptr ||
      api->processes == nullptr) {
    reason_ = "libnvidia-ml lacks the expected symbols";
    return;
  }
  if (init() != kNvmlSuccess) {
    reason_ = "nvmlInit failed (no GPU or driver)";
    return;
  }
  api->initialized = true;
  unsigned int count = 0;
  if (count_fn(&count) != kNvmlSuccess || count == 0) {
    reason_ = "no GPU";
    return;
  }
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t device = nullptr;
    if (handle_fn(i, &device) == kNvmlSuccess) api->devices.push_back(device);
  }
  if (api->devices.empty()) {
    reason_ = "no GPU handle";
    return;
  }
  api_ = std::move(api);
}

NvmlSampler::~NvmlSampler() = default;

bool NvmlSampler::available() const {
  return api_ != nullptr;
}

std::optional<uint64_t> NvmlSampler::sample(pid_t pid, pid_t pgid) const {
  if (!api_) return std::nullopt;
  std::optional<uint64_t> total;
  auto account = [&](unsigned int process_pid, unsigned long long used) {
    if (used == kNvmlValueNotAvailable) return;
    auto p = static_cast<pid_t>(process_pid);
    if (p != pid && ::getpgid(p) != pgid) return;
    total = total.value_or(0) + used;
  };
  for (nvmlDevice_t device : api_->devices) {
    unsigned int count = 64;
    // Retry once with the size NVML asks for when more processes run than fit.
    // The two API versions differ only in the record layout.
    auto query = [&](auto record) {
      std::vector<decltype(record)> infos(count);
      unsigned int n = count;
      const nvmlReturn_t rc = api_->processes(device, &n, infos.data());
      if (rc == kNvmlErrorInsufficientSize) {
        count = n + 8;
        return false;
      }
      if (rc == kNvmlSuccess)
        for (unsigned int i = 0; i < n && i < infos.size(); ++i)
          account(infos[i].pid, infos[i].usedGpuMemory);
      return true;
    };
    for (int attempt = 0; attempt < 2; ++attempt) {
      const bool done = api_->processes_v1 ? query(NvmlProcessInfoV1{}) : query(NvmlProcessInfo{});
      if (done) break;
    }
  }
  return total;
}

}  // namespace kvlint::confirm
