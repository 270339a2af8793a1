// The host's CUDA side (cuda_device.hpp), compiled against the torch wheel's CUDA headers and the
// CUDA runtime headers of the nvidia-* wheels, linked to libtorch_cuda and libc10_cuda.
#include "cuda_device.hpp"

#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <torch/cuda.h>
#include <torch/types.h>
#include <torch/version.h>

#include <string>
#include <vector>

#include "allocation_tracker.hpp"

namespace kvlint::model_host {

namespace allocator = c10::cuda::CUDACachingAllocator;

struct CudaDevice::Graphs {
  std::vector<std::unique_ptr<at::cuda::CUDAGraph>> kept;
};

CudaDevice::CudaDevice() : graphs_(std::make_unique<Graphs>()) {}
// Never reached in the host (it exits with _exit): a graph must not outlive CUDA's teardown.
CudaDevice::~CudaDevice() = default;

bool CudaDevice::built_in() {
  return true;
}

bool CudaDevice::available() {
  return torch::cuda::is_available();
}

std::string CudaDevice::unavailable_reason() {
  if (available()) return {};
  return "device 'cuda' requested but torch::cuda::is_available() is false: LibTorch " TORCH_VERSION
         " (built for CUDA " +
         std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10) +
         ") sees no CUDA device (no GPU, or its driver is not visible)";
}

std::string CudaDevice::start_tracking(AllocationTracker& tracker) {
  // The caching allocator exists once CUDA is initialised; a first allocation does that.
  (void)torch::empty({1}, torch::TensorOptions().device(torch::kCUDA));
  // Called under the allocator's lock on the allocating thread: the stack is the plugin's.
  try {
    allocator::attachAllocatorTraceTracker([&tracker](const allocator::TraceEntry& entry) {
      const auto* data = reinterpret_cast<const void*>(entry.addr_);
      if (entry.action_ == allocator::TraceEntry::ALLOC) {
        const bool private_pool = entry.mempool_.first != 0 || entry.mempool_.second != 0;
        tracker.record(data, entry.size_, private_pool);
      } else if (entry.action_ == allocator::TraceEntry::FREE_REQUESTED) {
        tracker.forget(data);
      }
    });
  } catch (const c10::Error& e) {
    return std::string("the CUDA allocator (") + allocator::name() +
           ") has no trace callback: " + e.what_without_backtrace();
  }
  return {};
}

CudaMemory CudaDevice::memory() const {
  const auto stats = allocator::getDeviceStats(c10::cuda::current_device());
  const auto all = static_cast<std::size_t>(c10::CachingAllocator::StatType::AGGREGATE);
  return CudaMemory{stats.allocated_bytes[all].current, stats.reserved_bytes[all].current,
                    stats.allocated_bytes[all].peak, stats.reserved_bytes[all].peak};
}

void CudaDevice::reset_peaks() {
  allocator::resetPeakStats(c10::cuda::current_device());
}

CaptureFigures CudaDevice::capture_and_replay(const std::function<void()>& step) {
  // As torch.cuda.graph: drain the device and the cache, capture on a side stream (capturing on
  // the default stream is refused), into the graph's own private pool.
  c10::cuda::device_synchronize();
  allocator::emptyCache();
  const CudaMemory before = memory();
  auto graph = std::make_unique<at::cuda::CUDAGraph>();
  {
    const c10::cuda::CUDAStreamGuard on_side_stream(c10::cuda::getStreamFromPool());
    graph->capture_begin();
    try {
      step();
    } catch (...) {
      try {
        graph->capture_end();  // ends the stream's capture; fails for the invalidated graph
      } catch (...) {
      }
      throw;
    }
    graph->capture_end();
  }
  const CudaMemory after = memory();
  graph->replay();
  c10::cuda::device_synchronize();
  graphs_->kept.push_back(std::move(graph));
  return CaptureFigures{after.reserved - before.reserved, after.allocated - before.allocated};
}

}  // namespace kvlint::model_host
