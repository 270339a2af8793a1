// KV501 branch-on-capacity-source: Code branches on capacity_source, which is diagnostic text.
#include "rules/rule.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV501", "branch-on-capacity-source", Severity::Error,
    "Code branches on capacity_source, which is diagnostic text.",
    R"doc(## What it does
Code branches on capacity_source, which is diagnostic text.

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

std::unique_ptr<Rule> make_kv501_branch_on_capacity_source() { return std::make_unique<Check>(); }

}  // namespace kvlint
