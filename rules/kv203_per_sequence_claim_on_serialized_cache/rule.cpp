// KV203 per-sequence-claim-on-serialized-cache: MAX_NUM_SEQS on a cache whose owner serves one request or one session at a time.
#include "rules/rule.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV203", "per-sequence-claim-on-serialized-cache", Severity::Warning,
    "MAX_NUM_SEQS on a cache whose owner serves one request or one session at a time.",
    R"doc(## What it does
MAX_NUM_SEQS on a cache whose owner serves one request or one session at a time.

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

std::unique_ptr<Rule> make_kv203_per_sequence_claim_on_serialized_cache() { return std::make_unique<Check>(); }

}  // namespace kvlint
