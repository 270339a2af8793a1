// KV402 capacity-drift: The declared capacity and the allocation's bound are different literals or names.
#include "rules/rule.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV402", "capacity-drift", Severity::Error,
    "The declared capacity and the allocation's bound are different literals or names.",
    R"doc(## What it does
The declared capacity and the allocation's bound are different literals or names.

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

std::unique_ptr<Rule> make_kv402_capacity_drift() { return std::make_unique<Check>(); }

}  // namespace kvlint
