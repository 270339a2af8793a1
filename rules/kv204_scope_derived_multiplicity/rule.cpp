// KV204 scope-derived-multiplicity: rows or scaling computed from `scope`.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include <set>
#include <utility>

#include "rules/common/spec_support.hpp"

namespace kvlint {
namespace {

namespace ss = spec_support;

constexpr RuleInfo kInfo{"KV204", "scope-derived-multiplicity", Severity::Error,
                         "Rows or scaling computed from `scope`: lifetime is not multiplicity.",
                         R"doc(## What it does
Reports code that derives a row count or a scaling factor from a spec's `scope`
(`ModelLocalKVScope.INVOCATION | REQUEST | SESSION | MODEL`):
- a computation the front end recognises as rows derived from scope
  (`rows = max_num_seqs if spec.scope == ModelLocalKVScope.REQUEST else 1`), in a model or in a
  consumer;
- a spec whose `rows` or `rows_fixed` expression reads `scope` or the scope enum
  (`rows=RowDriver.MAX_NUM_SEQS if scope is ModelLocalKVScope.REQUEST else RowDriver.FIXED`).

## Why it matters
The reference document: "`scope` records when memory appears and goes. It does **not** decide how
wide the allocation is, and an earlier revision that derived scaling from it was wrong in two
different directions at once" -- ming's talker is per call but serialized (scaling by
`max_num_seqs` over-reported it by that factor), and MiniCPM-o's encoder is per session, for which
`max_num_seqs` "is simply the wrong number". Width is declared explicitly by naming the driver.

## Example
```python
rows = RowDriver.MAX_NUM_SEQS if scope == ModelLocalKVScope.REQUEST else RowDriver.FIXED
spec_from_hf_config(self.config, ..., scope=scope, rows=rows)          # KV204
```
Fixed:
```python
spec_from_hf_config(self.config, ..., scope=ModelLocalKVScope.REQUEST,
                    rows=RowDriver.MAX_NUM_SEQS)   # one row per in-flight sequence
```

## How to fix
Name the rows driver for what actually widens the cache: `RowDriver.MAX_NUM_SEQS` when the engine
holds one per in-flight sequence, `RowDriver.FIXED` with a `rows_reason` otherwise. Consumers read
`rows`/`rows_fixed`, never `scope`, to size a declaration.
)doc"};

bool reads_scope(const facts::Expression& e, const facts::Vocabulary& vocabulary) {
  if (ss::contains_ci(e.text, vocabulary.scope_enum)) return true;
  for (const auto& n : e.names)
    if (ss::contains_ci(facts::simple_name(n), "scope") || ss::contains_ci(n, vocabulary.scope_enum))
      return true;
  for (const auto& w : ss::identifier_words(e.text))
    if (w == "scope") return true;
  return false;
}

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    std::set<std::pair<std::string, uint32_t>> reported;
    for (const auto& file : project.files()) {
      for (const auto& use : file.protocol_uses) {
        if (use.kind != facts::ProtocolUse::Kind::ScopeDerivedRows) continue;
        if (!reported.emplace(use.loc.file, use.loc.line).second) continue;
        std::string where = function_label(use);
        Finding f = kvlint::make_finding(kInfo, use.loc, use.owner_class);
        f.message = fmt::format(
            "{} derives rows from scope with `{}` (line {}): scope is lifetime, not multiplicity; name "
            "the rows driver (`RowDriver.MAX_NUM_SEQS` or `RowDriver.FIXED` with a reason) instead",
            where, use.expression.text, use.loc.line);
        f.related.push_back(
            {use.expression.loc.line ? use.expression.loc : use.loc, "rows computed from scope"});
        out.push_back(std::move(f));
      }
    }
    for (const auto& ref : ss::all_specs(project)) {
      for (std::string_view field : {"rows", "rows_fixed"}) {
        const auto* value = ss::field_value(*ref.spec, field);
        if (!value || !reads_scope(*value, project.vocabulary())) continue;
        facts::Location loc = ss::field_loc(*ref.spec, field);
        if (!reported.emplace(loc.file, loc.line).second) continue;
        const std::string& owner = ref.declaration->owner_class;
        Finding f = kvlint::make_finding(kInfo, loc, owner);
        f.message = fmt::format(
            "`{}` computes `{}` of {} from scope: `{}` (line {}); scope is lifetime, not multiplicity: "
            "name the rows driver explicitly",
            owner, field, ss::spec_label(*ref.spec), value->text, loc.line);
        f.related.push_back({ref.spec->loc, "the spec"});
        out.push_back(std::move(f));
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv204_scope_derived_multiplicity() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
