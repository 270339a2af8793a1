// A model whose declaration invents memory: PhantomDrafter declares a 24.00 MiB-per-row K/V cache
// it never allocates (no buffer, no tensor), so every completed path gives RT003
// phantom-declaration, anchored at the spec_from_config line below (the spec's declared_file /
// declared_line, which the header takes from the call site).
#include <kvlint/model_local_kv.h>
#include <kvlint/model_plugin.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace mlkv = kvlint::model_local_kv;

namespace kvlint_tests {

struct DrafterConfig {
  int num_hidden_layers = 24;
  int num_key_value_heads = 2;
  int head_dim = 64;
};

class PhantomDrafter {
 public:
  std::vector<mlkv::Spec> model_local_kv_specs() const {
    return {mlkv::spec_from_config(config_, {.name = "drafter_kv",  // the declaring line
                                             .physical_capacity_positions = 2048,
                                             .capacity_source = "2048 positions",
                                             .scope = mlkv::Scope::Request,
                                             .dtype = 2,
                                             .rows = mlkv::RowDriver::MaxNumSeqs})};
  }

 private:
  DrafterConfig config_;
};

class PhantomPlugin final : public kvlint::model_plugin::Model {
 public:
  explicit PhantomPlugin(const kvlint::model_plugin::Config& /*config*/) {}
  void run(const std::string& path, int /*concurrency*/, int /*steps*/) override {
    if (path != "generate") throw std::invalid_argument("unknown path " + path);
  }
  std::vector<kvlint::model_plugin::Declared> model_local_kv_specs() const override {
    return kvlint::model_plugin::declarations_of(drafter_);
  }
  const torch::nn::Module* root() const override { return nullptr; }

 private:
  PhantomDrafter drafter_;
};

}  // namespace kvlint_tests

KVLINT_MODEL_PLUGIN(kvlint_tests::PhantomPlugin)
