// The reference table's talker as a C++ plugin: a serialized talker with a registered static K/V
// buffer of 2048 positions, bf16, 24 layers x 2 kv-heads x head-dim 64 = 24.00 MiB per row.
// Config: `declared_positions` (default 2048) is what its declaration claims, so a boot entry
// with 1024 is the wrong-declaration variant (RT002).
#include <kvlint/model_local_kv.h>
#include <kvlint/model_plugin.h>
#include <torch/nn/module.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <memory>
#include <vector>

namespace mlkv = kvlint::model_local_kv;

namespace kvlint_tests {

struct Qwen2Config {
  int num_hidden_layers = 24;
  int num_attention_heads = 14;
  int num_key_value_heads = 2;
  int hidden_size = 896;
};

constexpr std::int64_t kMaxCacheLen = 2048;

class StaticTalker : public torch::nn::Module {
 public:
  StaticTalker(Qwen2Config config, std::int64_t declared_positions, torch::Device device)
      : config_(config), declared_positions_(declared_positions) {
    const std::int64_t head_dim = config.hidden_size / config.num_attention_heads;
    // [layers, rows, kv_heads, positions, head_dim], one row: the talker is serialized.
    const std::vector<std::int64_t> shape{config.num_hidden_layers, 1, config.num_key_value_heads,
                                          kMaxCacheLen, head_dim};
    const auto options = torch::TensorOptions().dtype(torch::kBFloat16).device(device);
    k_cache_ = register_buffer("k_cache", torch::zeros(shape, options));
    v_cache_ = register_buffer("v_cache", torch::zeros(shape, options));
  }

  // One request's AR loop, inline: every step writes one position in every layer.
  void generate(int steps) {
    for (int position = 0; position < steps; ++position) {
      k_cache_.select(3, position).normal_();
      v_cache_.select(3, position).normal_();
    }
  }

  std::vector<mlkv::Spec> model_local_kv_specs() const {
    return {mlkv::spec_from_config(config_, {.name = "talker_static_kv",
                                             .physical_capacity_positions = declared_positions_,
                                             .capacity_source = "static buffer of kMaxCacheLen positions",
                                             .scope = mlkv::Scope::Invocation,
                                             .dtype = torch::kBFloat16,
                                             .rows = mlkv::RowDriver::Fixed,
                                             .rows_fixed = 1,
                                             .rows_reason = "the talker serves one request at a time"})};
  }

 private:
  Qwen2Config config_;
  std::int64_t declared_positions_;
  torch::Tensor k_cache_, v_cache_;
};

class StaticTalkerPlugin final : public kvlint::model_plugin::Model {
 public:
  explicit StaticTalkerPlugin(const kvlint::model_plugin::Config& config)
      : talker_(std::make_shared<StaticTalker>(Qwen2Config{},
                                               config.get_int("declared_positions", kMaxCacheLen),
                                               torch::Device(config.device()))) {}

  // "generate", and "graph" (captured by the host on CUDA).
  void run(const std::string& path, int concurrency, int steps) override {
    if (path != "generate" && path != "graph") throw std::invalid_argument("unknown path " + path);
    torch::NoGradGuard no_grad;
    for (int request = 0; request < concurrency; ++request) talker_->generate(steps);  // one at a time
  }
  std::vector<kvlint::model_plugin::Declared> model_local_kv_specs() const override {
    return kvlint::model_plugin::declarations_of(*talker_);
  }
  const torch::nn::Module* root() const override { return talker_.get(); }

 private:
  std::shared_ptr<StaticTalker> talker_;
};

}  // namespace kvlint_tests

KVLINT_MODEL_PLUGIN(kvlint_tests::StaticTalkerPlugin)
