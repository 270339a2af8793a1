// The host's CUDA side, behind an interface without CUDA headers. cuda_device.cpp implements it
// against libtorch_cuda/libc10_cuda (built only when the torch wheel has them and the CUDA runtime
// headers are found, from the nvidia-* wheels; no CUDA toolkit needed); cuda_absent.cpp otherwise.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace kvlint::model_host {

class AllocationTracker;

// The CUDA caching allocator's device statistics (all pools, current device), in bytes.
struct CudaMemory {
  std::int64_t allocated = 0, reserved = 0, peak_allocated = 0, peak_reserved = 0;
};

// What one capture added: the reserved delta (the graph's private pool, resident while the graph
// lives) and the allocated delta, as the Python harness reports them.
struct CaptureFigures {
  std::int64_t resident_bytes = 0, allocated_bytes = 0;
};

class CudaDevice {
 public:
  CudaDevice();
  ~CudaDevice();
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  // Whether this host was built with CUDA support.
  static bool built_in();
  // Whether a CUDA device is usable now (torch::cuda::is_available()).
  static bool available();
  // Why `--device cuda` cannot run here ("" when it can).
  static std::string unavailable_reason();

  // Initialises CUDA and routes the caching allocator's allocations and frees into `tracker`, so
  // device memory is attributed to the allocating plugin line as CPU memory is. Returns "" or why
  // device allocations cannot be attributed (an allocator backend without a trace callback, such
  // as PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync): the run goes on without it.
  std::string start_tracking(AllocationTracker& tracker);
  CudaMemory memory() const;
  void reset_peaks();
  // Runs `step` inside an at::cuda::CUDAGraph capture on a side stream (as torch.cuda.graph
  // does), then replays the graph once. The graph is kept, as a model keeps its captures.
  // Rethrows what `step` or the capture throws.
  CaptureFigures capture_and_replay(const std::function<void()>& step);

 private:
  struct Graphs;
  std::unique_ptr<Graphs> graphs_;
};

}  // namespace kvlint::model_host
