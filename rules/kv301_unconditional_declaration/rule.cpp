// KV301 unconditional-declaration: The cache is built only under a condition the owner can see, but the declaration is unconditional.
#include "rules/rule.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV301", "unconditional-declaration", Severity::Error,
    "The cache is built only under a condition the owner can see, but the declaration is unconditional.",
    R"doc(## What it does
The cache is built only under a condition the owner can see, but the declaration is unconditional.

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

std::unique_ptr<Rule> make_kv301_unconditional_declaration() { return std::make_unique<Check>(); }

}  // namespace kvlint
