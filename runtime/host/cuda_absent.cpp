// The host without CUDA support: the torch it was built against has no libtorch_cuda, or no CUDA
// runtime headers were found. `--device cuda` is then refused with this reason.
#include <torch/version.h>

#include <stdexcept>

#include "cuda_device.hpp"

namespace kvlint::model_host {

struct CudaDevice::Graphs {};

CudaDevice::CudaDevice() = default;
CudaDevice::~CudaDevice() = default;

bool CudaDevice::built_in() {
  return false;
}
bool CudaDevice::available() {
  return false;
}

std::string CudaDevice::unavailable_reason() {
  return "device 'cuda' requested but this kvlint-model-host was built without CUDA support "
         "(LibTorch " TORCH_VERSION
         " without libtorch_cuda, or no CUDA runtime headers found); rebuild it with runtime/build-host "
         "against a "
         "CUDA build of torch";
}

std::string CudaDevice::start_tracking(AllocationTracker& /*tracker*/) {
  return unavailable_reason();
}
CudaMemory CudaDevice::memory() const {
  return {};
}
void CudaDevice::reset_peaks() {}
CaptureFigures CudaDevice::capture_and_replay(const std::function<void()>& /*step*/) {
  throw std::logic_error("CUDA-graph capture without CUDA support");
}

}  // namespace kvlint::model_host
