// KV203 per-sequence-claim-on-serialized-cache: RowDriver.MAX_NUM_SEQS on a
// cache whose owner serves one request at a time or one per session.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include "rules/common/spec_support.hpp"
#include "rules/common/spelling.hpp"

namespace kvlint {
namespace {

namespace ss = spec_support;
using facts::BatchEvidence;
using facts::CacheSite;

constexpr RuleInfo kInfo{
    "KV203", "per-sequence-claim-on-serialized-cache", Severity::Warning,
    "RowDriver.MAX_NUM_SEQS on a cache whose owner serves one request at a time or one per session.",
    R"doc(## What it does
Links each cache site to the spec that describes it (same linking as KV202) and warns when the
spec says `rows=RowDriver.MAX_NUM_SEQS` while the owner
- serves one request at a time: it takes element `[0]` of its batch
  (`runtime_additional_information[0]`) or asserts batch size 1 -- itself, in the holder that
  declares for it, or in a class that directly holds it and drives it inline (ming's
  `MingTalker.forward` takes `[0]` and calls its `MingAudioGenerator`); or
- keeps one cache per session (a container keyed by a session id).
Stays silent when the cache is also kept per request (a container keyed by request id), built in
a loop over requests, or when the same method iterates its requests: then one row per sequence
is right.

## Why it matters
`scope` is lifetime, not multiplicity, and the reference document records what deriving width
from anything else cost: "ming's talker is per-call but serialized -- `forward` takes
`runtime_additional_information[0]` and runs the whole AR loop inline -- so scaling it by
`max_num_seqs` over-reported it by that factor." And "MiniCPM-o's encoder is per *session*, not
per sequence, so `max_num_seqs` is simply the wrong number for it." An over-report is not
harmless: the reported total is what operators size deployments from.

## Example
```python
def forward(self, input_ids, runtime_additional_information=None):
    info = runtime_additional_information[0]          # one request per call
    cache = StaticCache(config=self._llm_config, max_batch_size=1, max_cache_len=TALKER_MAX_CACHE_LEN)

def model_local_kv_specs(self):
    return [spec_from_hf_config(self._llm_config, name="talker_static_cache", ...,
                                rows=RowDriver.MAX_NUM_SEQS)]      # KV203
```
Fixed:
```python
                                rows=RowDriver.FIXED, rows_fixed=1,
                                rows_reason="forward takes runtime_additional_information[0]; one call at a time")
```

In C++:
```cpp
kv_cache_[session_id] = torch::zeros({...});   // one per session
...
.rows = mlkv::RowDriver::MaxNumSeqs  // KV203
```

## How to fix
Declare `rows=RowDriver.FIXED` with `rows_fixed=1` and a `rows_reason` saying why (serialized
forward, one session). Where the real count is invisible to the model (the session cap), declare
the honest unit and say so in `allocation_note`. In C++: `.rows = mlkv::RowDriver::Fixed,
.rows_fixed = 1, .rows_reason = "..."`.

## Runtime verdict
`kvlint confirm` drives the owner at concurrency c > 1. Confirmed when the observed rows of the
cache stay 1 while the declaration scales with concurrency; refuted when the observed rows grow
with c; not-exercised when no entry reaches the cache's path.
)doc"};

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    for (const auto& match : ss::all_matches(project)) {
      const auto& spec = *match.spec.spec;
      if (spec.rows != facts::RowsDriver::MaxNumSeqs) continue;
      const CacheSite& site = *match.site;
      if (per_request(project, match)) continue;
      const rules::Spelling spelling = rules::Spelling::of(*match.site_file);

      std::string evidence_text;
      facts::Location evidence_loc;
      std::string evidence_note;
      if (site.retention == facts::Retention::SelfContainer && site.container_key &&
          ss::mentions_session(key_text(*site.container_key))) {
        evidence_text = fmt::format("keeps one cache per session (`{}[{}]`, line {})",
                                    spelling.code(site.retained_as), site.container_key->text, site.loc.line);
        evidence_loc = site.loc;
        evidence_note = "cache kept per session here";
      } else {
        const BatchEvidence* serial = ss::serialized_evidence(project, match);
        if (!serial) continue;
        std::string who = serial->owner_class == site.owner_class
                              ? std::string("serves")
                              : fmt::format("is driven by `{}`, which serves", serial->owner_class);
        evidence_text =
            fmt::format("{} one request at a time (`{}` {} in {}, line {})", who, serial->expression.text,
                        serial->kind == BatchEvidence::Kind::TakesFirstElement ? "takes the first element"
                                                                               : "asserts batch 1",
                        spelling.method_phrase(serial->method), serial->loc.line);
        evidence_loc = serial->loc;
        evidence_note = "one request at a time here";
      }

      facts::Location loc = ss::field_loc(spec, "rows");
      std::string declarer = match.spec.declaration->owner_class;
      std::string where = ss::declared_in_suffix(declarer, site.owner_class);
      Finding f = kvlint::make_finding(kInfo, loc, site.owner_class);
      f.message = fmt::format(
          "`{}` {} but {}{} declares `{}` (line {}) for its `{}` (line {}): it "
          "over-reports by `max_num_seqs`; declare `{}` with `{}` and a `{}`",
          site.owner_class, evidence_text, ss::spec_label(spec), where,
          spelling.enum_value("RowDriver", "MAX_NUM_SEQS"), loc.line, spelling.code(site.written),
          site.loc.line, spelling.enum_value("RowDriver", "FIXED"), spelling.field("rows_fixed", "1"),
          spelling.field("rows_reason"));
      f.related.push_back({evidence_loc, evidence_note});
      if (evidence_loc != site.loc)
        f.related.push_back({site.loc, fmt::format("`{}` built here", spelling.code(site.written))});
      out.push_back(std::move(f));
    }
  }

 private:
  static std::string key_text(const facts::Expression& key) {
    std::string text = key.text;
    for (const auto& n : key.names) text += " " + n;
    return text;
  }

  // Evidence that the cache is per request after all: then MAX_NUM_SEQS is right.
  static bool per_request(const facts::Project& project, const ss::SiteSpecMatch& match) {
    const CacheSite& site = *match.site;
    if (site.retention == facts::Retention::SelfContainer && site.container_key &&
        ss::mentions_request(*site.container_key))
      return true;
    for (const auto& g : site.guards)
      if (g.origin == facts::Guard::Origin::Loop && ss::iterates_requests(g.condition)) return true;
    for (const auto* e : project.batch_evidence_of(match.owner))
      if (e->kind == BatchEvidence::Kind::IteratesRequests && e->method == site.method &&
          e->owner_class == site.owner_class)
        return true;
    return false;
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv203_per_sequence_claim_on_serialized_cache() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
