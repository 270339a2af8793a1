// KV202 unsupported-fixed-row-claim: RowDriver.FIXED on a cache the code keeps per request.
#include "rules/rule.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV202", "unsupported-fixed-row-claim", Severity::Error,
    "RowDriver.FIXED on a cache the code keeps per request.",
    R"doc(## What it does
RowDriver.FIXED on a cache the code keeps per request.

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

std::unique_ptr<Rule> make_kv202_unsupported_fixed_row_claim() { return std::make_unique<Check>(); }

}  // namespace kvlint
