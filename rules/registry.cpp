#include "rules/registry.hpp"

#include <algorithm>

namespace kvlint {

std::unique_ptr<Rule> make_kv101_undeclared_cache();
std::unique_ptr<Rule> make_kv102_implicit_cache();
std::unique_ptr<Rule> make_kv103_undeclared_graph_capture();
std::unique_ptr<Rule> make_kv104_orphan_declaration();
std::unique_ptr<Rule> make_kv105_unreachable_declarer();
std::unique_ptr<Rule> make_kv201_fixed_rows_without_reason();
std::unique_ptr<Rule> make_kv202_unsupported_fixed_row_claim();
std::unique_ptr<Rule> make_kv203_per_sequence_claim_on_serialized_cache();
std::unique_ptr<Rule> make_kv204_scope_derived_multiplicity();
std::unique_ptr<Rule> make_kv301_unconditional_declaration();
std::unique_ptr<Rule> make_kv302_declaration_on_graph_wrapper();
std::unique_ptr<Rule> make_kv303_capture_ignores_enforce_eager();
std::unique_ptr<Rule> make_kv401_max_model_len_bound();
std::unique_ptr<Rule> make_kv402_capacity_drift();
std::unique_ptr<Rule> make_kv403_hand_written_geometry();
std::unique_ptr<Rule> make_kv404_config_mismatch();
std::unique_ptr<Rule> make_kv405_sliding_window_capacity();
std::unique_ptr<Rule> make_kv501_branch_on_capacity_source();
std::unique_ptr<Rule> make_kv502_collector_double_count();

namespace {

// Engine rules: emitted by the engine (suppression hygiene), documented here.
constexpr RuleInfo kEngineRules[] = {
    {"KV901", "suppression-without-reason", Severity::Warning,
     "A kvlint suppression comment gives no reason.",
     R"doc(## What it does
Reports `# kvlint: ignore[KV101]` (or `ignore-file[...]`) with no reason after the bracket.

## Why it matters
A suppression is a claim that a finding is wrong or accepted. Without a reason, the next
reviewer cannot check the claim, and stale suppressions accumulate.

## Example
```python
self.cache = DynamicCache()  # kvlint: ignore[KV101]
```

## How to fix
Say why: `# kvlint: ignore[KV101] declared by the engine-side wrapper, see runner.py`.
)doc"},
    {"KV902", "unknown-code-in-suppression", Severity::Warning,
     "A kvlint suppression names a code that does not exist.",
     R"doc(## What it does
Reports a suppression comment naming a code no rule has (`ignore[KV999]`).

## Why it matters
A mistyped code suppresses nothing, so the finding it was meant for still fires -- or,
worse, the author believes a finding is silenced that is not.

## Example
```python
self.cache = DynamicCache()  # kvlint: ignore[KV1O1] typo: letter O
```

## How to fix
Use a code listed by `kvlint rules`.
)doc"},
    {"KV903", "unused-suppression", Severity::Warning,
     "A kvlint suppression suppresses nothing.",
     R"doc(## What it does
Reports a suppression comment that matched no finding in this run.

## Why it matters
Stale suppressions hide future findings on the same line and mislead reviewers.

## Example
```python
x = 1  # kvlint: ignore[KV101] nothing here builds a cache
```

## How to fix
Delete the comment. Suppressions of rules not selected in this run are not reported.
)doc"},
    {"KV904", "malformed-suppression", Severity::Warning,
     "A `# kvlint:` comment is not a well-formed suppression, so it suppresses nothing.",
     R"doc(## What it does
Reports a `# kvlint:` comment that is not `ignore[CODES] reason` or `ignore-file[CODES] reason`:
no brackets (`ignore KV101`), empty brackets (`ignore[]`), an unclosed bracket, or an unknown
directive (`disable[KV101]`, `ignored[KV101]`).

## Why it matters
A malformed suppression suppresses nothing. Reading it as "suppress everything" would let a
typo (`# kvlint: ignore KV999`) hide every finding on the line with no trace; reading it
silently as nothing would leave the author believing a finding is silenced.

## Example
```python
self.cache = DynamicCache()  # kvlint: ignore KV101 declared by the runner
```

## How to fix
Put the codes in brackets: `# kvlint: ignore[KV101] declared by the runner`.
)doc"},
};

}  // namespace

bool is_engine_rule(std::string_view code) {
  return std::any_of(std::begin(kEngineRules), std::end(kEngineRules),
                     [&](const RuleInfo& r) { return r.code == code; });
}

std::vector<std::unique_ptr<Rule>> make_all_rules() {
  std::vector<std::unique_ptr<Rule>> rules;
  rules.push_back(make_kv101_undeclared_cache());
  rules.push_back(make_kv102_implicit_cache());
  rules.push_back(make_kv103_undeclared_graph_capture());
  rules.push_back(make_kv104_orphan_declaration());
  rules.push_back(make_kv105_unreachable_declarer());
  rules.push_back(make_kv201_fixed_rows_without_reason());
  rules.push_back(make_kv202_unsupported_fixed_row_claim());
  rules.push_back(make_kv203_per_sequence_claim_on_serialized_cache());
  rules.push_back(make_kv204_scope_derived_multiplicity());
  rules.push_back(make_kv301_unconditional_declaration());
  rules.push_back(make_kv302_declaration_on_graph_wrapper());
  rules.push_back(make_kv303_capture_ignores_enforce_eager());
  rules.push_back(make_kv401_max_model_len_bound());
  rules.push_back(make_kv402_capacity_drift());
  rules.push_back(make_kv403_hand_written_geometry());
  rules.push_back(make_kv404_config_mismatch());
  rules.push_back(make_kv405_sliding_window_capacity());
  rules.push_back(make_kv501_branch_on_capacity_source());
  rules.push_back(make_kv502_collector_double_count());
  return rules;
}

std::vector<RuleInfo> all_rule_infos() {
  std::vector<RuleInfo> infos;
  for (const auto& rule : make_all_rules()) infos.push_back(rule->info());
  infos.insert(infos.end(), std::begin(kEngineRules), std::end(kEngineRules));
  std::sort(infos.begin(), infos.end(),
            [](const RuleInfo& a, const RuleInfo& b) { return a.code < b.code; });
  return infos;
}

const RuleInfo* find_rule_info(std::string_view code) {
  static_assert(sizeof(kEngineRules) > 0);
  for (const auto& r : kEngineRules)
    if (r.code == code) return &r;
  // Rule infos are constexpr statics inside each rule unit, so their addresses outlive the rule.
  for (const auto& rule : make_all_rules())
    if (rule->info().code == code) return &rule->info();
  return nullptr;
}

}  // namespace kvlint
