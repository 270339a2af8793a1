// KV105 unreachable-declarer: A class that is not a submodule declares, and no module that holds it forwards its specs.
#include "rules/rule.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV105", "unreachable-declarer", Severity::Error,
    "A class that is not a submodule declares, and no module that holds it forwards its specs.",
    R"doc(## What it does
A class that is not a submodule declares, and no module that holds it forwards its specs.

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

std::unique_ptr<Rule> make_kv105_unreachable_declarer() { return std::make_unique<Check>(); }

}  // namespace kvlint
