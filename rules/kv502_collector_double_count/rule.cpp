// KV502 collector-double-count: A collector walks both a graph wrapper and its runnable without unwrap().
#include "rules/rule.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV502", "collector-double-count", Severity::Error,
    "A collector walks both a graph wrapper and its runnable without unwrap().",
    R"doc(## What it does
A collector walks both a graph wrapper and its runnable without unwrap().

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

std::unique_ptr<Rule> make_kv502_collector_double_count() { return std::make_unique<Check>(); }

}  // namespace kvlint
