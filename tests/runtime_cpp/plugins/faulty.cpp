// Misbehaving plugins for the host's fault isolation, one shared library per fault (no LibTorch:
// the contract's types are enough). KVLINT_FAULT selects the fault:
//   1 segfault in run()   2 hang in run()   3 no kvlint_model_create_v1   4 built with another
//   C++ ABI (compiled with -D_GLIBCXX_USE_CXX11_ABI=0; the host must refuse it by its stamp)
#include <kvlint/model_plugin.h>
#include <unistd.h>

namespace kvlint_tests {

class FaultyModel final : public kvlint::model_plugin::Model {
 public:
  explicit FaultyModel(const kvlint::model_plugin::Config& /*config*/) {}
  void run(const std::string& /*path*/, int /*concurrency*/, int /*steps*/) override {
#if KVLINT_FAULT == 1
    volatile int* nowhere = nullptr;
    *nowhere = 1;  // SIGSEGV
#elif KVLINT_FAULT == 2
    for (;;) ::pause();  // until the host's timeout kills the process group
#endif
  }
  std::vector<kvlint::model_plugin::Declared> model_local_kv_specs() const override {
    return {};
  }
  const torch::nn::Module* root() const override {
    return nullptr;
  }
};

}  // namespace kvlint_tests

#if KVLINT_FAULT == 3
KVLINT_MODEL_PLUGIN_STAMP()
#else
KVLINT_MODEL_PLUGIN(kvlint_tests::FaultyModel)
#endif
