// The boot entry's side of the speech decoder: the pipeline owns the decoder, the drafter and
// the vocoder (and the prompt's K/V) as registered submodules, as a LibTorch serving process does.
//   "generate": `concurrency` streams decoded for `steps` steps; their K/V stays open.
//   "finish":   the same, then the streams end (their K/V is freed, the last hidden state stays).
#include <kvlint/model_plugin.h>

#include <memory>
#include <stdexcept>

#include "speech_decoder.h"

namespace speech {

class SpeechPipeline : public torch::nn::Module {
 public:
  SpeechPipeline()
      : decoder_(register_module("decoder", std::make_shared<StreamingDecoder>(DecoderConfig{}))),
        prompt_(register_module("prompt", std::make_shared<PromptEncoder>(DecoderConfig{}))),
        drafter_(register_module("drafter", std::make_shared<Drafter>())),
        vocoder_(register_module("vocoder", std::make_shared<Vocoder>())) {}

  void serve(int64_t streams, int steps, bool finish) {
    decoder_->start(streams);
    torch::Tensor hidden = torch::ones({streams, DecoderConfig{}.hidden_size});
    for (int i = 0; i < steps; ++i) hidden = decoder_->step(hidden);
    vocoder_->synthesize(hidden);
    if (finish) decoder_->finish();
  }

 private:
  std::shared_ptr<StreamingDecoder> decoder_;
  std::shared_ptr<PromptEncoder> prompt_;
  std::shared_ptr<Drafter> drafter_;
  std::shared_ptr<Vocoder> vocoder_;
};

class SpeechPlugin final : public kvlint::model_plugin::Model {
 public:
  explicit SpeechPlugin(const kvlint::model_plugin::Config&)
      : pipeline_(std::make_shared<SpeechPipeline>()) {}

  void run(const std::string& path, int concurrency, int steps) override {
    if (path != "generate" && path != "finish") throw std::invalid_argument("unknown path " + path);
    torch::NoGradGuard no_grad;
    pipeline_->serve(concurrency, steps, path == "finish");
  }
  std::vector<kvlint::model_plugin::Declared> model_local_kv_specs() const override { return {}; }
  const torch::nn::Module* root() const override { return pipeline_.get(); }

 private:
  std::shared_ptr<SpeechPipeline> pipeline_;
};

}  // namespace speech

KVLINT_MODEL_PLUGIN(speech::SpeechPlugin)
