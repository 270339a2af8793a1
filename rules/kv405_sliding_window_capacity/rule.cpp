// KV405 sliding-window-capacity: A sliding-window cache declared with a capacity other than sliding_window - 1.
#include "rules/rule.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV405", "sliding-window-capacity", Severity::Warning,
    "A sliding-window cache declared with a capacity other than sliding_window - 1.",
    R"doc(## What it does
A sliding-window cache declared with a capacity other than sliding_window - 1.

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

std::unique_ptr<Rule> make_kv405_sliding_window_capacity() { return std::make_unique<Check>(); }

}  // namespace kvlint
