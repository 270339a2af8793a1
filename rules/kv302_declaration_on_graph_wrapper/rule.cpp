// KV302 declaration-on-graph-wrapper: The eager path allocates the cache, yet the only declaration lives on the CUDA-graph wrapper.
#include "rules/rule.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV302", "declaration-on-graph-wrapper", Severity::Error,
    "The eager path allocates the cache, yet the only declaration lives on the CUDA-graph wrapper.",
    R"doc(## What it does
The eager path allocates the cache, yet the only declaration lives on the CUDA-graph wrapper.

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

std::unique_ptr<Rule> make_kv302_declaration_on_graph_wrapper() { return std::make_unique<Check>(); }

}  // namespace kvlint
