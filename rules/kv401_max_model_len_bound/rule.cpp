// KV401 max-model-len-bound: A declared capacity derived from max_model_len, which bounds no known cache.
#include "rules/rule.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV401", "max-model-len-bound", Severity::Warning,
    "A declared capacity derived from max_model_len, which bounds no known cache.",
    R"doc(## What it does
A declared capacity derived from max_model_len, which bounds no known cache.

TODO(rule author): why it matters, example, how to fix.
)doc"};

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    (void)project;
    (void)out;  // TODO(rule author): not implemented yet
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv401_max_model_len_bound() { return std::make_unique<Check>(); }

}  // namespace kvlint
