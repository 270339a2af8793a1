// A streaming TTS decoder's K/V laid out as LibTorch serving code keeps it: one state struct per
// open stream, its keys and values as two members (buf_k / buf_v), the structs held by the pool in
// a std::vector<std::unique_ptr<StreamState>>; and a drafter with past_key_ / past_value_ as plain
// members, held by value. Keys are wider than values (a rotary part rides with each key, as in
// MLA-style decoders), so K and V never have one shape. Nothing here is kvlint-specific but the
// declarations (left out when built with `declares` false); nothing tells the host where the K/V is.
#pragma once

#include <kvlint/model_local_kv.h>
#include <torch/torch.h>

#include <memory>
#include <vector>

namespace tts {

struct PoolConfig {
  int64_t num_hidden_layers = 2;
  int64_t num_key_value_heads = 2;
  int64_t key_head_dim = 48;  // 32 + a 16-wide rotary part
  int64_t value_head_dim = 16;
  int64_t max_positions = 8;
  int64_t hidden_size = 16;
};

// One stream's state, alive while the stream is open.
struct StreamState {
  torch::Tensor buf_k;   // [layers, 1, kv_heads, max_positions, key_head_dim]
  torch::Tensor buf_v;   // [layers, 1, kv_heads, max_positions, value_head_dim]
  torch::Tensor hidden;  // [1, hidden_size]: the last output, not K/V
  int64_t position = 0;
};

// The draft model: one draft row, its own K/V as two members.
class Drafter {
 public:
  explicit Drafter(PoolConfig config) : config_(config) {}
  void start();
  void step();

 private:
  PoolConfig config_;
  int64_t position_ = 0;
  torch::Tensor past_key_;    // [1, 1, kv_heads, max_positions, key_head_dim]
  torch::Tensor past_value_;  // [1, 1, kv_heads, max_positions, value_head_dim]
};

class StreamPool {
 public:
  StreamPool(PoolConfig config, bool declares) : config_(config), drafter_(config), declares_(declares) {}
  // Closes the open streams and opens `streams` new ones.
  void open(int64_t streams);
  void step();
  // Declares one row for the streams' K/V (it under-declares: a row is kept per open stream) and
  // the drafter's one row; nothing when built not to declare.
  std::vector<kvlint::model_local_kv::Spec> model_local_kv_specs() const;

 private:
  PoolConfig config_;
  std::vector<std::unique_ptr<StreamState>> streams_;
  Drafter drafter_;
  bool declares_;
};

}  // namespace tts
