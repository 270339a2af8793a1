// KV204 scope-derived-multiplicity: Rows or scaling computed from scope: lifetime is not multiplicity.
#include "rules/rule.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV204", "scope-derived-multiplicity", Severity::Error,
    "Rows or scaling computed from scope: lifetime is not multiplicity.",
    R"doc(## What it does
Rows or scaling computed from scope: lifetime is not multiplicity.

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

std::unique_ptr<Rule> make_kv204_scope_derived_multiplicity() { return std::make_unique<Check>(); }

}  // namespace kvlint
