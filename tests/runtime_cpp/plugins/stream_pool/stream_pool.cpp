#include "stream_pool.h"

#include <string>
#include <utility>

namespace tts {

namespace mlkv = kvlint::model_local_kv;

void Drafter::start() {
  past_key_ = torch::zeros({1, 1, config_.num_key_value_heads, config_.max_positions, config_.key_head_dim});
  past_value_ =
      torch::zeros({1, 1, config_.num_key_value_heads, config_.max_positions, config_.value_head_dim});
  position_ = 0;
}

void Drafter::step() {
  past_key_.select(3, position_).fill_(1.0);
  past_value_.select(3, position_).fill_(2.0);
  position_ = (position_ + 1) % config_.max_positions;
}

void StreamPool::open(int64_t streams) {
  streams_.clear();
  for (int64_t i = 0; i < streams; ++i) {
    auto state = std::make_unique<StreamState>();
    state->buf_k = torch::zeros({config_.num_hidden_layers, 1, config_.num_key_value_heads,
                                 config_.max_positions, config_.key_head_dim});
    state->buf_v = torch::zeros({config_.num_hidden_layers, 1, config_.num_key_value_heads,
                                 config_.max_positions, config_.value_head_dim});
    state->hidden = torch::zeros({1, config_.hidden_size});
    streams_.push_back(std::move(state));
  }
  drafter_.start();
}

void StreamPool::step() {
  for (auto& state : streams_) {
    state->buf_k.select(3, state->position).fill_(1.0);
    state->buf_v.select(3, state->position).fill_(2.0);
    state->hidden = state->hidden + 1;
    state->position = (state->position + 1) % config_.max_positions;
  }
  drafter_.step();
}

std::vector<mlkv::Spec> StreamPool::model_local_kv_specs() const {
  if (!declares_) return {};
  // K and V per row: layers x kv_heads x positions x (key_head_dim + value_head_dim) x 4 bytes,
  // written as the header's 2 x head_dim with head_dim their mean.
  const int64_t head_dim = (config_.key_head_dim + config_.value_head_dim) / 2;
  auto fixed_one_row = [&](std::string name, int64_t layers, std::string reason) {
    return mlkv::Spec{.name = std::move(name),
                      .layers = layers,
                      .kv_heads = config_.num_key_value_heads,
                      .head_dim = head_dim,
                      .physical_capacity_positions = config_.max_positions,
                      .capacity_source = "PoolConfig::max_positions",
                      .scope = mlkv::Scope::Request,
                      .dtype = torch::kFloat32,
                      .rows = mlkv::RowDriver::Fixed,
                      .rows_fixed = 1,
                      .rows_reason = std::move(reason)};
  };
  return {fixed_one_row("stream_kv", config_.num_hidden_layers, "one stream at a time"),
          fixed_one_row("drafter_kv", 1, "one draft row")};
}

}  // namespace tts
