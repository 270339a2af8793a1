// KV303 capture-ignores-enforce-eager: Graph capture not gated on enforce_eager: the pool stays resident in eager deployments.
#include "rules/rule.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV303", "capture-ignores-enforce-eager", Severity::Warning,
    "Graph capture not gated on enforce_eager: the pool stays resident in eager deployments.",
    R"doc(## What it does
Graph capture not gated on enforce_eager: the pool stays resident in eager deployments.

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

std::unique_ptr<Rule> make_kv303_capture_ignores_enforce_eager() { return std::make_unique<Check>(); }

}  // namespace kvlint
