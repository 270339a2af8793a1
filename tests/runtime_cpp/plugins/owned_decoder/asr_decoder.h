// A streaming ASR decoder laid out as LibTorch projects write one around a TorchScript model: a
// plain class (no torch::nn::Module, nothing registered), its methods in asr_decoder.cpp, the
// past keys and values as two tensor members whose names are not the usual K/V names, written
// from the step's outputs at the current position. The engine holds it through a std::unique_ptr.
#pragma once

#include <kvlint/model_local_kv.h>
#include <torch/torch.h>

#include <tuple>
#include <vector>

namespace asr {

struct DecoderConfig {
  int64_t num_hidden_layers = 4;
  int64_t num_key_value_heads = 2;
  int64_t head_dim = 32;
  int64_t hidden_size = 64;
  int64_t max_cache_len = 16;
};

class Decoder {
 public:
  explicit Decoder(DecoderConfig config);
  // `batch` streams: their K/V, [layers, batch, kv_heads, max_cache_len, head_dim] each.
  void start(int64_t batch);
  void step();
  // What it declares: one row (it believes it serves one stream at a time).
  std::vector<kvlint::model_local_kv::Spec> model_local_kv_specs() const;

 private:
  // The step's outputs: hidden state, this position's keys and values.
  std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> forward(const torch::Tensor& hidden);

  DecoderConfig config_;
  int64_t position_ = 0;
  torch::Tensor past_k_;
  torch::Tensor past_v_;
  torch::Tensor last_hidden_;  // not K/V: the step's output, kept for the next chunk
};

}  // namespace asr
