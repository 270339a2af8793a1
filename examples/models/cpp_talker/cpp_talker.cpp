// A LibTorch talker with a planted problem, for `kvlint check` and `kvlint confirm`.
//
// It keeps one K/V tensor per request in a std::unordered_map (sessions stay open across calls),
// yet declares RowDriver::Fixed with rows_fixed = 1: at max_num_seqs = 256 it holds 256 x 24 MiB
// while the declaration reports 24 MiB. `kvlint check` flags the FIXED claim (KV202) and
// `kvlint confirm examples/models` boots this plugin in kvlint-model-host and confirms it: rows = 4
// at concurrency 4. The fix: declare mlkv::RowDriver::MaxNumSeqs.
//
// Built as a plugin (examples/models/cpp_talker/CMakeLists.txt) by runtime/build-host.
#include <kvlint/model_local_kv.h>
#include <kvlint/model_plugin.h>
#include <torch/nn/module.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace mlkv = kvlint::model_local_kv;

namespace kvlint_example {

// The talker LLM's geometry (Qwen2-0.5B: head_dim = 896 / 14 = 64).
struct TalkerConfig {
  int num_hidden_layers = 24;
  int num_attention_heads = 14;
  int num_key_value_heads = 2;
  int hidden_size = 896;
};

constexpr std::int64_t kMaxCacheLen = 2048;

class CppTalker : public torch::nn::Module {
 public:
  CppTalker(TalkerConfig config, torch::Device device) : config_(config), device_(device) {}

  // One decode step of one request: writes this step's K/V position in every layer.
  void step(std::int64_t request_id, std::int64_t position) {
    torch::Tensor& kv = kv_for(request_id);
    kv.select(4, position % kMaxCacheLen).normal_();
  }

  // A request's stream ended: its K/V goes.
  void finish(std::int64_t request_id) { kv_cache_.erase(request_id); }

  std::vector<mlkv::Spec> model_local_kv_specs() const {
    return {mlkv::spec_from_config(config_, {.name = "talker_static_kv",
                                             .physical_capacity_positions = kMaxCacheLen,
                                             .capacity_source = "static buffer of kMaxCacheLen positions",
                                             .scope = mlkv::Scope::Invocation,
                                             .dtype = torch::kBFloat16,
                                             .rows = mlkv::RowDriver::Fixed,
                                             .rows_fixed = 1,
                                             .rows_reason = "the talker serves one request at a time"})};
  }

 private:
  torch::Tensor& kv_for(std::int64_t request_id) {
    auto it = kv_cache_.find(request_id);
    if (it == kv_cache_.end()) {
      // [K/V, layers, rows, kv_heads, positions, head_dim]: one row for this request.
      const std::int64_t head_dim = config_.hidden_size / config_.num_attention_heads;
      const std::vector<std::int64_t> shape{
          2, config_.num_hidden_layers, 1, config_.num_key_value_heads, kMaxCacheLen, head_dim};
      auto kv = torch::zeros(shape, torch::TensorOptions().dtype(torch::kBFloat16).device(device_));
      it = kv_cache_.emplace(request_id, std::move(kv)).first;
    }
    return it->second;
  }

  TalkerConfig config_;
  torch::Device device_;
  std::unordered_map<std::int64_t, torch::Tensor> kv_cache_;  // request id -> its K/V
};

// The boot entry's side: builds the talker and drives "generate" with `concurrency` requests.
class CppTalkerPlugin final : public kvlint::model_plugin::Model {
 public:
  explicit CppTalkerPlugin(const kvlint::model_plugin::Config& config)
      : talker_(std::make_shared<CppTalker>(TalkerConfig{}, torch::Device(config.device()))) {}

  // "generate", and "graph": the same decode steps, which the host captures in a CUDA graph on CUDA.
  void run(const std::string& path, int concurrency, int steps) override {
    if (path != "generate" && path != "graph") throw std::invalid_argument("unknown path " + path);
    torch::NoGradGuard no_grad;
    // The previous drive's requests have finished; this drive's stay open until the next one,
    // as streams of a serving engine do between chunks.
    for (int request = 0; request < open_requests_; ++request) talker_->finish(request);
    open_requests_ = concurrency;
    for (int step = 0; step < steps; ++step)
      for (int request = 0; request < concurrency; ++request) talker_->step(request, step);
  }
  std::vector<kvlint::model_plugin::Declared> model_local_kv_specs() const override {
    return kvlint::model_plugin::declarations_of(*talker_);
  }
  const torch::nn::Module* root() const override { return talker_.get(); }

 private:
  std::shared_ptr<CppTalker> talker_;
  int open_requests_ = 0;
};

}  // namespace kvlint_example

KVLINT_MODEL_PLUGIN(kvlint_example::CppTalkerPlugin)
