#include "speech_decoder.h"

namespace speech {

StreamingDecoder::StreamingDecoder(DecoderConfig config) : config_(config) {}

void StreamingDecoder::start(int64_t batch) {
  const std::vector<int64_t> empty{config_.num_layers, batch, config_.num_kv_heads, 0, config_.head_dim};
  past_keys_ = torch::zeros(empty, torch::kFloat32);
  past_values_ = torch::zeros(empty, torch::kFloat32);
}

torch::Tensor StreamingDecoder::step(const torch::Tensor& hidden) {
  const int64_t batch = hidden.size(0);
  auto k = torch::randn({config_.num_layers, batch, config_.num_kv_heads, 1, config_.head_dim});
  auto v = torch::randn({config_.num_layers, batch, config_.num_kv_heads, 1, config_.head_dim});
  past_keys_ = torch::cat({past_keys_, k}, 3);
  past_values_ = torch::cat({past_values_, v}, 3);
  last_hidden_ = torch::tanh(hidden);
  return last_hidden_;
}

void StreamingDecoder::finish() {
  past_keys_ = torch::Tensor();
  past_values_ = torch::Tensor();
}

PromptEncoder::PromptEncoder(DecoderConfig config) {
  k_cache_ = torch::zeros({config.num_layers, 1, config.num_kv_heads, 16, config.head_dim});
  v_cache_ = torch::zeros({config.num_layers, 1, config.num_kv_heads, 16, config.head_dim});
}

torch::Tensor Drafter::propose(const torch::Tensor& hidden) {
  past_keys_ = torch::cat({past_keys_, hidden.unsqueeze(1)}, 1);
  return hidden;
}

torch::Tensor Vocoder::synthesize(const torch::Tensor& frames) {
  overlap_ = frames.slice(1, frames.size(1) / 2).clone();
  return frames;
}

}  // namespace speech
