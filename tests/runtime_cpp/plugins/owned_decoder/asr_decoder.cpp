#include "asr_decoder.h"

namespace asr {

namespace mlkv = kvlint::model_local_kv;

Decoder::Decoder(DecoderConfig config) : config_(config) {}

void Decoder::start(int64_t batch) {
  const auto shape = std::vector<int64_t>{config_.num_hidden_layers, batch, config_.num_key_value_heads,
                                          config_.max_cache_len, config_.head_dim};
  past_k_ = torch::zeros(shape);
  past_v_ = torch::zeros(shape);
  last_hidden_ = torch::zeros({batch, config_.hidden_size});
  position_ = 0;
}

std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> Decoder::forward(const torch::Tensor& hidden) {
  const int64_t batch = hidden.size(0);
  auto k = torch::ones({config_.num_hidden_layers, batch, config_.num_key_value_heads, config_.head_dim});
  auto v = k * 2;
  return {hidden + 1, k, v};
}

void Decoder::step() {
  auto [hidden, k, v] = forward(last_hidden_);
  past_k_.select(3, position_).copy_(k);
  past_v_.select(3, position_).copy_(v);
  last_hidden_ = hidden;
  position_ = (position_ + 1) % config_.max_cache_len;
}

std::vector<mlkv::Spec> Decoder::model_local_kv_specs() const {
  return {mlkv::spec_from_config(config_, {.name = "asr_decoder_kv",
                                           .physical_capacity_positions = config_.max_cache_len,
                                           .capacity_source = "DecoderConfig::max_cache_len",
                                           .scope = mlkv::Scope::Request,
                                           .dtype = torch::kFloat32,
                                           .rows = mlkv::RowDriver::Fixed,
                                           .rows_fixed = 1,
                                           .rows_reason = "one stream at a time"})};
}

}  // namespace asr
