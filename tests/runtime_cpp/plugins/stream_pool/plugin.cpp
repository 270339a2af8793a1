// The boot entry's side of the stream pool: "generate" opens `concurrency` streams and steps them
// `steps` times; the streams stay open after the path. Config `declare = 0`: the pool declares
// nothing (its K/V is then what a KV101 names). Nothing here tells the host where the K/V
// is: it finds buf_k / buf_v through the vector of the pool's streams and past_key_ / past_value_
// in the drafter, from the plugin's debug information.
#include <kvlint/model_plugin.h>

#include <memory>
#include <stdexcept>

#include "stream_pool.h"

namespace tts {

class StreamEngine final : public kvlint::model_plugin::Model {
 public:
  explicit StreamEngine(const kvlint::model_plugin::Config& config)
      : pool_(std::make_unique<StreamPool>(PoolConfig{}, config.get_int("declare", 1) != 0)) {}

  void run(const std::string& path, int concurrency, int steps) override {
    if (path != "generate") throw std::invalid_argument("unknown path " + path);
    torch::NoGradGuard no_grad;
    pool_->open(concurrency);
    for (int i = 0; i < steps; ++i) pool_->step();
  }
  std::vector<kvlint::model_plugin::Declared> model_local_kv_specs() const override {
    return kvlint::model_plugin::declarations_of(*pool_);
  }
  const torch::nn::Module* root() const override { return nullptr; }

 private:
  std::unique_ptr<StreamPool> pool_;
};

}  // namespace tts

KVLINT_MODEL_PLUGIN(tts::StreamEngine)
