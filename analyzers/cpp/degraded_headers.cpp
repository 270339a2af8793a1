#include "analyzers/cpp/degraded_headers.hpp"

#include <string>

namespace kvlint::cpp {

namespace {

constexpr std::string_view kTorch = R"cpp(
#ifndef KVLINT_DEGRADED_TORCH
#define KVLINT_DEGRADED_TORCH
#include <cstdint>  // LibTorch's headers bring the fixed-width integer types
#include <initializer_list>
namespace c10 {
enum class ScalarType { Byte, Char, Short, Int, Long, Half, Float, Double, Bool, BFloat16 };
struct Device { template <class... A> Device(A&&...) {} };
template <class T> struct optional { optional() {} template <class U> optional(U&&) {} };
}  // namespace c10
namespace at {
using c10::ScalarType;
struct TensorOptions {
  template <class... A> TensorOptions(A&&...) {}
  template <class... A> TensorOptions dtype(A&&...) const { return {}; }
  template <class... A> TensorOptions device(A&&...) const { return {}; }
  template <class... A> TensorOptions requires_grad(A&&...) const { return {}; }
};
struct Tensor {
  Tensor() {}
  template <class... A> Tensor index(A&&...) const { return {}; }
  template <class... A> Tensor narrow(A&&...) const { return {}; }
  template <class... A> Tensor slice(A&&...) const { return {}; }
  template <class... A> Tensor select(A&&...) const { return {}; }
  template <class... A> Tensor to(A&&...) const { return {}; }
  template <class... A> Tensor view(A&&...) const { return {}; }
  template <class... A> Tensor copy_(A&&...) const { return {}; }
  template <class... A> Tensor index_put_(A&&...) const { return {}; }
  template <class... A> Tensor index_copy_(A&&...) const { return {}; }
  template <class... A> Tensor zero_(A&&...) const { return {}; }
  template <class... A> Tensor fill_(A&&...) const { return {}; }
  template <class... A> Tensor matmul(A&&...) const { return {}; }
  template <class... A> Tensor transpose(A&&...) const { return {}; }
  template <class... A> Tensor contiguous(A&&...) const { return {}; }
  template <class... A> Tensor softmax(A&&...) const { return {}; }
  long size(long) const { return 0; }
  long dim() const { return 0; }
  long numel() const { return 0; }
  bool defined() const { return true; }
  template <class... A> Tensor operator[](A&&...) const { return {}; }
  template <class U> Tensor operator+(const U&) const { return {}; }
  template <class U> Tensor operator*(const U&) const { return {}; }
};
// Sizes are usually a braced list: `torch::zeros({layers, len, heads, dim}, options)`.
template <class... A> Tensor zeros(std::initializer_list<long long>, A&&...) { return {}; }
template <class... A> Tensor empty(std::initializer_list<long long>, A&&...) { return {}; }
template <class... A> Tensor full(std::initializer_list<long long>, A&&...) { return {}; }
template <class... A> Tensor ones(std::initializer_list<long long>, A&&...) { return {}; }
template <class... A> Tensor zeros(A&&...) { return {}; }
template <class... A> Tensor empty(A&&...) { return {}; }
template <class... A> Tensor full(A&&...) { return {}; }
template <class... A> Tensor ones(A&&...) { return {}; }
template <class... A> Tensor zeros_like(A&&...) { return {}; }
template <class... A> Tensor empty_like(A&&...) { return {}; }
template <class... A> Tensor cat(std::initializer_list<Tensor>, A&&...) { return {}; }
template <class... A> Tensor cat(A&&...) { return {}; }
template <class... A> Tensor randn(A&&...) { return {}; }
template <class... A> Tensor arange(A&&...) { return {}; }
namespace cuda {
struct CUDAGraph {
  template <class... A> void capture_begin(A&&...) {}
  void capture_end() {}
  void replay() {}
  void reset() {}
};
}  // namespace cuda
}  // namespace at
namespace torch {
using at::Tensor;
using at::TensorOptions;
using at::zeros; using at::empty; using at::full; using at::ones; using at::zeros_like; using at::empty_like;
using at::cat; using at::randn; using at::arange;
constexpr c10::ScalarType kFloat = c10::ScalarType::Float, kFloat32 = c10::ScalarType::Float,
    kHalf = c10::ScalarType::Half, kFloat16 = c10::ScalarType::Half, kBFloat16 = c10::ScalarType::BFloat16,
    kLong = c10::ScalarType::Long, kInt64 = c10::ScalarType::Long, kInt = c10::ScalarType::Int, kBool = c10::ScalarType::Bool;
template <class... A> TensorOptions dtype(A&&...) { return {}; }
template <class... A> TensorOptions device(A&&...) { return {}; }
struct Device { template <class... A> Device(A&&...) {} };
constexpr int kCUDA = 1, kCPU = 0;
struct NoGradGuard {};
namespace cuda {
inline bool is_available() { return false; }
inline int device_count() { return 0; }
using at::cuda::CUDAGraph;
}  // namespace cuda
namespace nn {
struct Module {
  virtual ~Module() {}
  template <class T> T register_buffer(const char*, T value) { return value; }
  template <class T> T register_parameter(const char*, T value, bool = true) { return value; }
  template <class T> T register_module(const char*, T module) { return module; }
  void eval() {}
  void train(bool = true) {}
};
template <class Impl> struct Cloneable : Module {};
template <class Impl> struct ModuleHolder {
  ModuleHolder() {}
  ModuleHolder(decltype(nullptr)) {}
  template <class... A> explicit ModuleHolder(A&&...) {}
  Impl* operator->() { return impl_; }
  const Impl* operator->() const { return impl_; }
  Impl& operator*() { return *impl_; }
  template <class... A> auto operator()(A&&... a) -> decltype(((Impl*)nullptr)->forward(static_cast<A&&>(a)...)) {
    return impl_->forward(static_cast<A&&>(a)...);
  }
  Impl* get() { return impl_; }
  Impl* impl_ = nullptr;
};
struct LinearImpl : Module { template <class... A> LinearImpl(A&&...) {} Tensor forward(const Tensor&) { return {}; } };
struct Linear : ModuleHolder<LinearImpl> { using ModuleHolder<LinearImpl>::ModuleHolder; };
struct EmbeddingImpl : Module { template <class... A> EmbeddingImpl(A&&...) {} Tensor forward(const Tensor&) { return {}; } };
struct Embedding : ModuleHolder<EmbeddingImpl> { using ModuleHolder<EmbeddingImpl>::ModuleHolder; };
struct ModuleListImpl : Module { template <class T> void push_back(T) {} };
struct ModuleList : ModuleHolder<ModuleListImpl> { using ModuleHolder<ModuleListImpl>::ModuleHolder; };
}  // namespace nn
}  // namespace torch
#define TORCH_MODULE(Name) \
  class Name : public torch::nn::ModuleHolder<Name##Impl> { \
   public: \
    using torch::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
  }
// A statement, as c10 defines it (`if (!(cond)) { throw ... }`): real code calls it without a `;`
// (DeepSpeed: `#define EVOFORMER_CHECK TORCH_CHECK` then `EVOFORMER_CHECK(false, "...")`).
#define TORCH_CHECK(...) if (false) {}
#endif
)cpp";

constexpr std::string_view kCuda = R"cpp(
#ifndef KVLINT_DEGRADED_CUDA
#define KVLINT_DEGRADED_CUDA
typedef struct CUstream_st* cudaStream_t;
typedef struct CUgraph_st* cudaGraph_t;
typedef struct CUgraphExec_st* cudaGraphExec_t;
typedef int cudaError_t;
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed };
template <class... A> cudaError_t cudaStreamBeginCapture(A...) { return 0; }
template <class... A> cudaError_t cudaStreamEndCapture(A...) { return 0; }
template <class... A> cudaError_t cudaGraphInstantiate(A...) { return 0; }
template <class... A> cudaError_t cudaGraphLaunch(A...) { return 0; }
template <class... A> cudaError_t cudaStreamCreate(A...) { return 0; }
template <class... A> cudaError_t cudaStreamSynchronize(A...) { return 0; }
template <class... A> cudaError_t cudaMalloc(A...) { return 0; }
template <class... A> cudaError_t cudaFree(A...) { return 0; }
template <class... A> cudaError_t cudaMemcpy(A...) { return 0; }
#endif
)cpp";

// The declaration header's shape (runtime/include/kvlint/model_local_kv.h), for a project
// that does not put it on the include path: the field order matters for positional braces.
constexpr std::string_view kModelLocalKv = R"cpp(
#ifndef KVLINT_DEGRADED_MODEL_LOCAL_KV
#define KVLINT_DEGRADED_MODEL_LOCAL_KV
namespace kvlint { namespace model_local_kv {
enum class Scope { Invocation, Request, Session, Model };
enum class RowDriver { Fixed, MaxNumSeqs };
struct DType { DType() {} template <class T> DType(T) {} };
struct Text { Text() {} Text(const char*) {} template <class T> Text(const T&) {} };
struct Spec {
  Text name;
  long layers = 0;
  long kv_heads = 0;
  long head_dim = 0;
  long physical_capacity_positions = 0;
  Text capacity_source;
  Scope scope = Scope::Invocation;
  DType dtype;
  RowDriver rows = RowDriver::MaxNumSeqs;
  long rows_fixed = 1;
  Text rows_reason;
  Text allocation_note;
  long bytes_per_row() const { return 0; }
};
template <class Config> Spec spec_from_config(const Config&, Spec fields) { return fields; }
}}  // namespace kvlint::model_local_kv
#endif
)cpp";

}  // namespace

std::string_view degraded_header(std::string_view name) {
  if (name == "kvlint/model_local_kv.h") return kModelLocalKv;
  if (name.starts_with("torch/") || name.starts_with("ATen/") || name.starts_with("c10/") || name == "torch.h")
    return kTorch;
  if (name.starts_with("cuda_runtime") || name == "cuda.h" || name.starts_with("cuda/")) return kCuda;
  // Any other missing header (a project header outside the fallback include path) may be
  // the one that brought LibTorch, CUDA or the kvlint header in: all three, each guarded.
  static const std::string everything = std::string(kTorch) + std::string(kCuda) + std::string(kModelLocalKv);
  return everything;
}

}  // namespace kvlint::cpp
