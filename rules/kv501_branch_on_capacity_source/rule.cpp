// KV501 branch-on-capacity-source: code branches on capacity_source.
#include "rules/rule.hpp"

#include <fmt/format.h>

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{"KV501", "branch-on-capacity-source", Severity::Error,
                         "Code branches on or compares `capacity_source`, which is diagnostic text.",
                         R"doc(## What it does
Reports every condition or comparison that reads a spec's `capacity_source`
(`if spec.capacity_source == "max_model_len": ...`, `"sliding" in s.capacity_source`,
`x if spec.capacity_source.startswith(...) else y`), in models and in consumers alike.

## Why it matters
The reference document: "`capacity_source` is diagnostic text -- never branch on it." It is
written for a human reading the load-time log ("sliding_window - 1 = 71", "hardcoded
max_cache_len = 2048"); its wording changes freely between models and revisions. Code that
switches on it breaks silently the next time someone improves a message, and it hides real
information (the bound, the rows driver) behind string matching.

## Example
```python
for spec in collect_model_local_kv_specs(model):
    if spec.capacity_source == "max_model_len":      # KV501
        positions = self.max_model_len
```
Fixed:
```python
for spec in collect_model_local_kv_specs(model):
    positions = spec.physical_capacity_positions
```

## How to fix
Read the structured fields (`physical_capacity_positions`, `rows`, `rows_fixed`, `scope`). If the
code needs a fact the spec does not carry, add it to the protocol rather than parsing the text.
)doc"};

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    for (const auto& file : project.files()) {
      for (const auto& use : file.protocol_uses) {
        if (use.kind != facts::ProtocolUse::Kind::CapacitySourceBranch) continue;
        std::string where = function_label(use);
        Finding f = kvlint::make_finding(kInfo, use.loc, use.owner_class);
        f.message = fmt::format(
            "{} branches on `capacity_source` with `{}` (line {}): capacity_source is diagnostic text, "
            "never branch on it; read `physical_capacity_positions` / `rows` instead",
            where, use.expression.text, use.loc.line);
        f.related.push_back(
            {use.expression.loc.line ? use.expression.loc : use.loc, "condition reads capacity_source"});
        out.push_back(std::move(f));
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv501_branch_on_capacity_source() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
