// KV103 undeclared-graph-capture: A class captures CUDA graphs over code that holds a model-local cache, and no declaration covers the graph pool.
#include "rules/rule.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV103", "undeclared-graph-capture", Severity::Error,
    "A class captures CUDA graphs over code that holds a model-local cache, and no declaration covers the graph pool.",
    R"doc(## What it does
A class captures CUDA graphs over code that holds a model-local cache, and no declaration covers the graph pool.

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

std::unique_ptr<Rule> make_kv103_undeclared_graph_capture() { return std::make_unique<Check>(); }

}  // namespace kvlint
