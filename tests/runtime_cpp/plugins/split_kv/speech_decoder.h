// A streaming speech decoder laid out as LibTorch projects are: the classes in this header, their
// methods in speech_decoder.cpp, past keys and values as two tensor members grown with torch::cat
// on every step. No <cstdint>: <torch/torch.h> brings int64_t. Nothing here declares its K/V, so
// `kvlint check` gives a KV101 per member at its first construction and at its growth.
#pragma once

#include <torch/torch.h>

namespace speech {

struct DecoderConfig {
  int64_t num_layers = 4;
  int64_t num_kv_heads = 2;
  int64_t head_dim = 64;
  int64_t hidden_size = 128;
};

class StreamingDecoder : public torch::nn::Module {
 public:
  explicit StreamingDecoder(DecoderConfig config);
  // A new batch of streams: empty past keys and values, one row per stream.
  void start(int64_t batch);
  torch::Tensor step(const torch::Tensor& hidden);
  // The streams ended: their K/V goes, the last hidden state stays for the vocoder's tail.
  void finish();

 private:
  DecoderConfig config_;
  torch::Tensor past_keys_;
  torch::Tensor past_values_;
  torch::Tensor last_hidden_;  // not K/V: the step's output, kept for the next chunk
};

// The prompt's K/V, computed once when the model is built and kept: two members filled by the
// out-of-line constructor, one line apart.
class PromptEncoder : public torch::nn::Module {
 public:
  explicit PromptEncoder(DecoderConfig config);

 private:
  torch::Tensor k_cache_;
  torch::Tensor v_cache_;
};

// A draft model beside the decoder with a member of the same name; this run never drafts.
class Drafter : public torch::nn::Module {
 public:
  torch::Tensor propose(const torch::Tensor& hidden);

 private:
  torch::Tensor past_keys_;
};

// The vocoder after the decoder: an overlap tail between chunks, no K/V.
class Vocoder : public torch::nn::Module {
 public:
  torch::Tensor synthesize(const torch::Tensor& frames);

 private:
  torch::Tensor overlap_;
};

}  // namespace speech
