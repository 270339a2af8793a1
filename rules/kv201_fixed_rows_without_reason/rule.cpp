// KV201 fixed-rows-without-reason: RowDriver.FIXED without a rows_reason or
// rows_fixed >= 1, or MAX_NUM_SEQS with rows_fixed.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include "rules/common/spec_support.hpp"
#include "rules/common/spelling.hpp"

namespace kvlint {
namespace {

namespace ss = spec_support;

constexpr RuleInfo kInfo{"KV201", "fixed-rows-without-reason", Severity::Error,
                         "A FIXED rows claim without a rows_reason or with rows_fixed < 1, or MAX_NUM_SEQS "
                         "that also sets rows_fixed.",
                         R"doc(## What it does
Checks the rows driver of every spec as written:
- `rows=RowDriver.FIXED` with no `rows_reason`, an empty one, or one that is only whitespace;
- `rows=RowDriver.FIXED` with a literal `rows_fixed` below 1;
- `rows=RowDriver.MAX_NUM_SEQS` that also passes `rows_fixed` (the engine supplies the count; the
  field is ignored and misleads the reader).

Earlier protocol spellings (`Fixed(n, because=...)`, `MaxNumSeqs()`, `batch_capacity=`) are checked
the same way once mapped to the canonical fields.

## Why it matters
The protocol declares width explicitly, by naming the driver. `FIXED` is "a count the model
controls, with `rows_fixed` and a required `rows_reason`", and the reference document is blunt:
"`rows_fixed=1` on a cache that looks per-request is a claim a reviewer must be able to check."
A fixed count with no reason cannot be checked, and `rows_fixed=0` silently declares zero bytes
for memory that exists. A `rows_fixed` next to `MAX_NUM_SEQS` suggests a count that nothing uses.

## Example
```python
spec_from_hf_config(
    self._llm_config, name="talker_static_cache",
    physical_capacity_positions=TALKER_MAX_CACHE_LEN, capacity_source="max_cache_len constant",
    scope=ModelLocalKVScope.INVOCATION, dtype=self._llm_config.torch_dtype,
    rows=RowDriver.FIXED, rows_fixed=1)          # KV201: no rows_reason
```
Fixed:
```python
    rows=RowDriver.FIXED, rows_fixed=1,
    rows_reason="forward takes runtime_additional_information[0] and runs the AR loop inline")
```

In C++ (the header's `Spec` throws at construction, the linter says so before):
```cpp
return {mlkv::spec_from_config(config_, {.name = "talker_kv", ...,
                                         .rows = mlkv::RowDriver::Fixed,  // KV201: no .rows_reason
                                         .rows_fixed = 1})};
```

## How to fix
Say why the count is fixed (one session, serialized forward, a captured bucket list) in
`rows_reason`, and make `rows_fixed` at least 1. For `MAX_NUM_SEQS`, delete `rows_fixed`.
In C++: `.rows_reason = "..."` and `.rows_fixed` at least 1; with `mlkv::RowDriver::MaxNumSeqs`,
leave `.rows_fixed` out.
)doc"};

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    for (const auto& ref : ss::all_specs(project)) {
      const auto& spec = *ref.spec;
      const std::string& owner = ref.declaration->owner_class;
      const rules::Spelling spelling = rules::Spelling::of(*ref.file);
      const std::string fixed_rows = spelling.enum_value("RowDriver", "FIXED");
      const std::string per_sequence = spelling.enum_value("RowDriver", "MAX_NUM_SEQS");
      if (spec.rows == facts::RowsDriver::Fixed) {
        check_reason(ref, owner, spelling, out);
        if (const auto* fixed = spec.field("rows_fixed")) {
          auto value = ss::int_value(project, *ref.file, owner, fixed->value);
          if (value && *value < 1)
            out.push_back(make(ss::field_loc(spec, "rows_fixed"), owner,
                               fmt::format("`{}` declares {} with `{}` and `{}` "
                                           "(line {}): a fixed count below 1 declares no memory for a "
                                           "cache that exists; give the real count",
                                           owner, ss::spec_label(spec), fixed_rows,
                                           spelling.field("rows_fixed", fixed->value.text),
                                           ss::field_loc(spec, "rows_fixed").line),
                               spec));
        }
      } else if (spec.rows == facts::RowsDriver::MaxNumSeqs) {
        if (const auto* fixed = spec.field("rows_fixed"))
          out.push_back(make(ss::field_loc(spec, "rows_fixed"), owner,
                             fmt::format("`{}` declares {} with `{}` but also passes "
                                         "`{}` (line {}): the engine supplies the row count "
                                         "for {}, so the field is ignored; remove it or declare "
                                         "{} with a reason",
                                         owner, ss::spec_label(spec), per_sequence,
                                         spelling.field("rows_fixed", fixed->value.text),
                                         ss::field_loc(spec, "rows_fixed").line,
                                         spelling.is_cpp() ? per_sequence : "MAX_NUM_SEQS",
                                         spelling.is_cpp() ? fixed_rows : "FIXED"),
                             spec));
      }
    }
  }

 private:
  static Finding make(const facts::Location& loc, const std::string& owner, std::string message,
                      const facts::SpecFact& spec) {
    Finding f = kvlint::make_finding(kInfo, loc, owner);
    f.message = std::move(message);
    f.related.push_back({spec.loc, "the spec"});
    return f;
  }

  static void check_reason(const ss::SpecRef& ref, const std::string& owner, const rules::Spelling& spelling,
                           std::vector<Finding>& out) {
    const auto& spec = *ref.spec;
    const auto* reason = spec.field("rows_reason");
    if (!reason && spec.may_set("rows_reason")) return;  // may come through `**kwargs`: unseen, not absent
    std::string problem;
    if (!reason || reason->value.literal == facts::LiteralKind::NoneValue)
      problem = fmt::format("gives no `{}`", spelling.field("rows_reason"));
    else if (reason->value.literal == facts::LiteralKind::String &&
             ss::trim(reason->value.literal_value).empty())
      problem = fmt::format("gives an empty `{}`", spelling.field("rows_reason"));
    if (problem.empty()) return;
    facts::Location loc = ss::field_loc(spec, "rows");
    out.push_back(make(loc, owner,
                       fmt::format("`{}` declares {} with `{}` (line {}) but {}: a fixed row "
                                   "count is a claim a reviewer must be able to check; say why the count "
                                   "is fixed (one session, serialized forward, captured buckets)",
                                   owner, ss::spec_label(spec), spelling.enum_value("RowDriver", "FIXED"),
                                   loc.line, problem),
                       spec));
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv201_fixed_rows_without_reason() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
