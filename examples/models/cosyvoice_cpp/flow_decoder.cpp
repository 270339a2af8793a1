// A LibTorch port of a streaming flow decoder: it keeps attention K/V per request
// and captures a CUDA graph over its decode step. Planted problems: the per-request
// K/V is declared as one fixed row (KV202), and the captured graph pool is not
// declared (KV103) nor skipped under enforce_eager (KV303).
#include <ATen/cuda/CUDAGraph.h>
#include <kvlint/model_local_kv.h>
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace mlkv = kvlint::model_local_kv;

struct FlowConfig {
  int64_t num_hidden_layers = 6;
  int64_t num_key_value_heads = 8;
  int64_t head_dim = 64;
  int64_t chunk_positions = 256;
  bool enforce_eager = false;
};

class FlowDecoderImpl : public torch::nn::Module {
 public:
  explicit FlowDecoderImpl(const FlowConfig& config) : config_(config) {}

  torch::Tensor decode_chunk(const std::string& request_id, torch::Tensor mel) {
    kv_cache_.try_emplace(request_id, torch::zeros({2, config_.num_hidden_layers, config_.chunk_positions,
                                                    config_.num_key_value_heads, config_.head_dim}));
    return mel;
  }

  // After the weights are loaded, the decode step is captured once.
  void load_weights() { capture_step(torch::zeros({1, 80})); }

  void capture_step(torch::Tensor mel) {
    graph_.capture_begin();
    step_output_ = step(mel);
    graph_.capture_end();
  }

  torch::Tensor step(torch::Tensor mel) {
    step_k_cache_.index_copy_(1, mel, mel);
    return mel;
  }

  std::vector<mlkv::Spec> model_local_kv_specs() const {
    return {mlkv::spec_from_config(config_, {.name = "flow_decoder_chunk_kv",
                                             .physical_capacity_positions = 256,
                                             .capacity_source = "one chunk of chunk_positions",
                                             .scope = mlkv::Scope::Request,
                                             .dtype = torch::kBFloat16,
                                             .rows = mlkv::RowDriver::Fixed,
                                             .rows_fixed = 1,
                                             .rows_reason = "one decoder instance"})};
  }

 private:
  FlowConfig config_;
  std::unordered_map<std::string, torch::Tensor> kv_cache_;
  torch::Tensor step_k_cache_ = torch::zeros({6, 1, 8, 64});
  at::cuda::CUDAGraph graph_;
  torch::Tensor step_output_;
};
TORCH_MODULE(FlowDecoder);
