// The boot entry's side of the ASR decoder: the engine owns it through a std::unique_ptr and
// serves `concurrency` streams in one batch ("generate"). Nothing here tells the host where the
// K/V is: it finds past_k_ / past_v_ from the plugin's debug information.
#include <kvlint/model_plugin.h>

#include <memory>
#include <stdexcept>

#include "asr_decoder.h"

namespace asr {

class AsrEngine final : public kvlint::model_plugin::Model {
 public:
  explicit AsrEngine(const kvlint::model_plugin::Config&)
      : decoder_(std::make_unique<Decoder>(DecoderConfig{})) {}

  void run(const std::string& path, int concurrency, int steps) override {
    if (path != "generate") throw std::invalid_argument("unknown path " + path);
    torch::NoGradGuard no_grad;
    decoder_->start(concurrency);
    for (int i = 0; i < steps; ++i) decoder_->step();
  }
  std::vector<kvlint::model_plugin::Declared> model_local_kv_specs() const override {
    return kvlint::model_plugin::declarations_of(*decoder_);
  }
  const torch::nn::Module* root() const override { return nullptr; }

 private:
  std::unique_ptr<Decoder> decoder_;
};

}  // namespace asr

KVLINT_MODEL_PLUGIN(asr::AsrEngine)
