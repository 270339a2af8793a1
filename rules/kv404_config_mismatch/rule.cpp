// KV404 config-mismatch: spec_from_hf_config(X) while the cache is built from config Y.
#include "rules/rule.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV404", "config-mismatch", Severity::Error,
    "spec_from_hf_config(X) while the cache is built from config Y.",
    R"doc(## What it does
spec_from_hf_config(X) while the cache is built from config Y.

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

std::unique_ptr<Rule> make_kv404_config_mismatch() { return std::make_unique<Check>(); }

}  // namespace kvlint
