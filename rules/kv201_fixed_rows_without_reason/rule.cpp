// KV201 fixed-rows-without-reason: RowDriver.FIXED without a rows_reason or rows_fixed >= 1, or MAX_NUM_SEQS with rows_fixed.
#include "rules/rule.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV201", "fixed-rows-without-reason", Severity::Error,
    "RowDriver.FIXED without a rows_reason or rows_fixed >= 1, or MAX_NUM_SEQS with rows_fixed.",
    R"doc(## What it does
RowDriver.FIXED without a rows_reason or rows_fixed >= 1, or MAX_NUM_SEQS with rows_fixed.

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

std::unique_ptr<Rule> make_kv201_fixed_rows_without_reason() { return std::make_unique<Check>(); }

}  // namespace kvlint
