// KV403 hand-written-geometry: Layers, kv-heads, head-dim or dtype written as literals where spec_from_hf_config could derive them.
#include "rules/rule.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV403", "hand-written-geometry", Severity::Info,
    "Layers, kv-heads, head-dim or dtype written as literals where spec_from_hf_config could derive them.",
    R"doc(## What it does
Layers, kv-heads, head-dim or dtype written as literals where spec_from_hf_config could derive them.

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

std::unique_ptr<Rule> make_kv403_hand_written_geometry() { return std::make_unique<Check>(); }

}  // namespace kvlint
