// KV102 implicit-cache: A call passes use_cache=True without a cache, so transformers builds one behind it, and no declaration covers it.
#include "rules/rule.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV102", "implicit-cache", Severity::Error,
    "A call passes use_cache=True without a cache, so transformers builds one behind it, and no declaration covers it.",
    R"doc(## What it does
A call passes use_cache=True without a cache, so transformers builds one behind it, and no declaration covers it.

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

std::unique_ptr<Rule> make_kv102_implicit_cache() { return std::make_unique<Check>(); }

}  // namespace kvlint
