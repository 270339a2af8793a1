// KV202 unsupported-fixed-row-claim: RowDriver.FIXED on a cache the code keeps per request.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "rules/common/rule_support.hpp"
#include "rules/common/spec_support.hpp"
#include "rules/common/spelling.hpp"

namespace kvlint {
namespace {

namespace ss = spec_support;
using facts::BatchEvidence;
using facts::CacheSite;
using facts::Guard;

constexpr RuleInfo kInfo{"KV202", "unsupported-fixed-row-claim", Severity::Error,
                         "RowDriver.FIXED on a cache the code keeps per request (keyed by request, sized "
                         "from the batch, built per request).",
                         R"doc(## What it does
Links each cache site to the spec that describes it (see "Linking" below) and fires when the
spec says `rows=RowDriver.FIXED` while the code says the cache is per request:
- it is kept in a container keyed by something request-like
  (`self._caches[request_id] = DynamicCache()`; keys naming request/req/seq/rid/stream, or a bare
  id/uid that no other noun qualifies -- `layer_id`, `bucket_id`, `speaker_id` are not requests);
- its batch dimension is sized from the input (`max_batch_size=input_ids.shape[0]`,
  `batch_size=len(requests)`);
- it is built inside a loop over requests, or in a method that iterates its requests;
- it is raw K/V (plain tensors, see KV101) whose rows axis is one slot per sequence: the
  dimension the shape gives the rows reads `max_num_seqs` or names slots
  (`torch.zeros(num_slots, RING, qd)` with `num_slots = scheduler_config.max_num_seqs`).
  Raw K/V kept per request id is per request as above.
The finding quotes the evidence and its line.

Stays silent for:
- a per-session cache (the key names a session) declared as a fixed row whose `rows_reason` or
  `allocation_note` says it is per session -- the reference's MiniCPM-o Whisper encoder, "one
  object per session", which "declares one session rather than scaling by a number it would have
  to guess at";
- batch sizing and per-request loops in an owner that serves one request at a time (takes
  `runtime_additional_information[0]`, asserts batch size 1; the evidence may sit in the owner,
  the holder declaring for it, or a class directly holding it) -- ming's talker. A container keyed by
  request id still fires there: it outlives the call, so serializing the call does not bound it.

Linking: the specs covering a site are those of its owner's declaration (own or inherited), then
those of holders that declare specs themselves. Among several, a site matches the spec whose
capacity names the site's bound argument, else the one whose `name`/`allocation_note` mentions
the cache's attribute or class, else the only one. When that is ambiguous the rule stays silent.

## Why it matters
`FIXED` is a count the model controls. A cache kept per request is widened by the engine: the
reference's Qwen3-TTS codec decoder is 4.44 MiB per request, "so a server at `max_num_seqs=256`
reaches roughly 1.1 GiB that no per-stage number predicted". Declaring one fixed row for it
under-reports by the concurrency.

## Example
```python
def decode_chunk(self, request_id, codes):
    if request_id not in self._caches:
        self._caches[request_id] = DynamicCache(config=self.config)     # per request

def model_local_kv_specs(self):
    return [spec_from_hf_config(self.config, name="codec_decoder_cache", ...,
                                rows=RowDriver.FIXED, rows_fixed=1,    # KV202
                                rows_reason="one decoder")]
```
Fixed:
```python
                                rows=RowDriver.MAX_NUM_SEQS)
```

In C++:
```cpp
if (!k_cache_.count(request_id)) k_cache_[request_id] = torch::zeros({...});  // kept per request
...
.rows = mlkv::RowDriver::Fixed,  // KV202
```

## How to fix
Declare `rows=RowDriver.MAX_NUM_SEQS` for a cache held per in-flight request. If the cache really
is bounded by something the model controls (one per session, a serialized forward), say so in
`rows_reason` so a reviewer can check it, and make the code show it (assert batch size 1).
In C++: `.rows = mlkv::RowDriver::MaxNumSeqs`, or a `.rows_reason` that says what bounds it.

## Runtime verdict
`kvlint confirm` boots the model and drives it at concurrency c > 1. Confirmed when the rows
observed for the cache at c exceed the declared `rows_fixed`; refuted when they stay within it;
not-exercised when no entry reaches the cache's path.
)doc"};

struct Evidence {
  facts::Location loc;
  std::string quote;    // for the message
  std::string related;  // for the related location
};

bool sizes_batch_from_input(const facts::Project& project, const facts::FileFacts& file,
                            const CacheSite& site, const facts::Argument& arg) {
  if (arg.keyword != "max_batch_size" && arg.keyword != "batch_size") return false;
  if (ss::int_value(project, file, site.owner_class, arg.value)) return false;
  std::string text = ss::without_whitespace(arg.value.text);
  if (text.find("shape[0]") != std::string::npos || text.find(".size(0)") != std::string::npos ||
      text.find("len(") != std::string::npos)
    return true;
  // Read straight from a parameter of the enclosing method.
  facts::ClassRef cls = project.class_of(file, site.owner_class);
  if (!cls) return false;
  for (const facts::CodeRef& code : project.methods_of(cls)) {
    const facts::MethodFact& m = *code.method;
    if (m.name != site.method) continue;
    for (const auto& name : arg.value.names) {
      std::string_view head = std::string_view(name).substr(0, name.find('.'));
      for (const auto& p : m.parameters)
        if (p == head) return true;
    }
  }
  return false;
}

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    for (const auto& match : ss::all_matches(project)) {
      const auto& spec = *match.spec.spec;
      if (spec.rows != facts::RowsDriver::Fixed) continue;
      const CacheSite& site = *match.site;
      const rules::Spelling spelling = rules::Spelling::of(*match.site_file);
      std::vector<Evidence> evidence;
      std::string per = "per request";

      if (site.retention == facts::Retention::SelfContainer && site.container_key) {
        const auto& key = *site.container_key;
        std::string key_text = key.text;
        for (const auto& n : key.names) key_text += " " + n;
        if (ss::mentions_session(key_text)) {
          bool says_session = ss::mentions_session(ss::field_string(spec, "rows_reason")) ||
                              ss::mentions_session(ss::field_string(spec, "allocation_note"));
          if (!says_session) {
            per = "per session";
            evidence.push_back({site.loc,
                                fmt::format("keeps one cache per `{}` in `{}` (line {})", key.text,
                                            spelling.code(site.retained_as), site.loc.line),
                                "cache kept per session here"});
          }
        } else if (ss::mentions_request(key)) {
          evidence.push_back({site.loc,
                              fmt::format("keeps one cache per `{}` in `{}` (line {})", key.text,
                                          spelling.code(site.retained_as), site.loc.line),
                              "cache kept per request here"});
        }
      }

      // Raw K/V whose rows axis is one slot per sequence: `torch.zeros(num_slots, RING, qd)` with
      // `num_slots` from `max_num_seqs`.
      if (site.raw_kv && site.raw_kv->rows_axis && *site.raw_kv->rows_axis < site.raw_kv->shape.size()) {
        const facts::Expression& rows = site.raw_kv->shape[*site.raw_kv->rows_axis];
        if (rules::mentions(rows, "max_num_seqs") || rules::mentions(rows, "num_seqs") ||
            rules::mentions(rows, "slot")) {
          const std::string via =
              rows.alias_of.empty() ? std::string() : fmt::format(" (`{}`)", rows.alias_of);
          evidence.push_back(
              {rows.loc.line ? rows.loc : site.loc,
               fmt::format("allocates raw K/V {} with one row per sequence slot, `{}`{} (line {})",
                           rules::raw_kv_members(*site.raw_kv), rows.text, via,
                           rows.loc.line ? rows.loc.line : site.loc.line),
               "one row per sequence slot here"});
        }
      }

      const BatchEvidence* serialized = ss::serialized_evidence(project, match);
      if (!serialized) {
        for (const auto& arg : site.args)
          if (sizes_batch_from_input(project, *match.site_file, site, arg))
            evidence.push_back(
                {arg.value.loc.line ? arg.value.loc : site.loc,
                 fmt::format("sizes its cache from the input with `{}={}` (line {})", arg.keyword,
                             arg.value.text, arg.value.loc.line ? arg.value.loc.line : site.loc.line),
                 "batch size taken from the input here"});
        for (const Guard& g : site.guards)
          if (g.origin == Guard::Origin::Loop && ss::iterates_requests(g.condition))
            evidence.push_back(
                {g.condition.loc.line ? g.condition.loc : site.loc,
                 fmt::format("builds its cache inside a loop over `{}` (line {})", g.condition.text,
                             g.condition.loc.line ? g.condition.loc.line : site.loc.line),
                 "loop over requests here"});
        for (const auto* e : project.batch_evidence_of(match.owner))
          if (e->kind == BatchEvidence::Kind::IteratesRequests && e->method == site.method &&
              e->owner_class == site.owner_class && ss::iterates_requests(e->expression) &&
              std::none_of(evidence.begin(), evidence.end(),
                           [&](const Evidence& x) { return x.loc == e->loc; }))
            evidence.push_back(
                {e->loc,
                 fmt::format("builds its cache in {}, which iterates `{}` (line {})",
                             spelling.method_phrase(site.method), e->expression.text, e->loc.line),
                 "the method iterates its requests here"});
      }
      if (evidence.empty()) continue;

      facts::Location loc = ss::field_loc(spec, "rows");
      const auto* fixed = spec.field("rows_fixed");
      std::string claim =
          fixed ? fmt::format("`{}`", spelling.field("rows_fixed", fixed->value.text))
          : spec.may_set("rows_fixed")
              ? fmt::format("the `rows_fixed` passed through `{}`", spec.unpacked.front().text)
              : fmt::format("the default `{}`", spelling.field("rows_fixed", "1"));
      std::string declarer = match.spec.declaration->owner_class;
      std::string where = ss::declared_in_suffix(declarer, site.owner_class);
      Finding f = kvlint::make_finding(kInfo, loc, site.owner_class);
      f.message = fmt::format(
          "`{}` {} but {}{} declares `{}` with {} (line {}): the cache is {}, so a fixed "
          "count under-reports it by the concurrency; declare `{}`{}",
          site.owner_class, evidence.front().quote, ss::spec_label(spec), where,
          spelling.enum_value("RowDriver", "FIXED"), claim, loc.line, per,
          spelling.enum_value("RowDriver", "MAX_NUM_SEQS"),
          per == "per session"
              ? fmt::format(", or say in `{}` that one row is one session", spelling.field("rows_reason"))
              : std::string());
      if (evidence.front().loc != site.loc)
        f.related.push_back({site.loc, fmt::format("`{}` built here", spelling.code(site.written))});
      for (const auto& e : evidence) f.related.push_back({e.loc, e.related});
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv202_unsupported_fixed_row_claim() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
