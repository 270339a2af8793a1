// KV104 orphan-declaration: A declaration whose owner neither builds a cache nor captures one.
#include "rules/rule.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV104", "orphan-declaration", Severity::Warning,
    "A declaration whose owner neither builds a cache nor captures one.",
    R"doc(## What it does
A declaration whose owner neither builds a cache nor captures one.

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

std::unique_ptr<Rule> make_kv104_orphan_declaration() { return std::make_unique<Check>(); }

}  // namespace kvlint
