// KV402 capacity-drift: the declared capacity and the allocation's bound differ.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include "rules/common/rule_support.hpp"
#include "rules/common/spec_support.hpp"
#include "rules/common/spelling.hpp"

namespace kvlint {
namespace {

namespace ss = spec_support;

constexpr RuleInfo kInfo{
    "KV402", "capacity-drift", Severity::Error,
    "The declared capacity and the cache constructor's bound are different literals or different names.",
    R"doc(## What it does
Links each cache site to its spec (same linking as KV202) and compares the spec's
`physical_capacity_positions` with the bound the constructor is given: `max_cache_len`,
`max_length`, or a sliding-window argument (`sliding_window=`, `window_length=`, ...).
It fires when
- both are integers and differ (a name that is a module or class constant with an int literal
  value counts as that integer: `TALKER_MAX_CACHE_LEN = 2048`), or
- both are plain names and their last components differ (`self.max_cache_len` vs
  `self.max_decode_len`).
For a window bound (a window argument, or any bound of a `SlidingWindowCache`) the capacity may be the window or the window minus one (a sliding cache keeps
`sliding_window - 1` positions; KV405 checks which); `X - 1` is compared as `X`.
A literal against a name it cannot resolve stays silent: the rule does not guess.

## Why it matters
Bytes per row are `2 x layers x kv_heads x head_dim x positions x dtype size`, so the capacity is a
direct factor of the reported memory. ming's talker allocates `StaticCache` with a hardcoded
`max_cache_len = 2048` (24.00 MiB per row): a spec saying 1024 reports half of it, and the two
numbers drift further with every edit to one of them.

## Example
```python
self.cache = StaticCache(config=self._llm_config, max_batch_size=1, max_cache_len=2048)
...
spec_from_hf_config(self._llm_config, name="talker_static_cache",
                    physical_capacity_positions=1024, ...)               # KV402
```
Fixed:
```python
TALKER_MAX_CACHE_LEN = 2048
self.cache = StaticCache(config=self._llm_config, max_batch_size=1, max_cache_len=TALKER_MAX_CACHE_LEN)
spec_from_hf_config(..., physical_capacity_positions=TALKER_MAX_CACHE_LEN, ...)
```

In C++ (a `StaticCache` port; its constructor's parameter names are the keywords):
```cpp
Talker(const Config& c) : cache_(c, /*max_cache_len=*/4096) {}
... .physical_capacity_positions = 2048,  // KV402
```

## How to fix
Read both the constructor argument and the declared capacity from one constant or attribute.
)doc"};

// `X - 1` -> `X` text, for window bounds.
std::string strip_minus_one(const std::string& text) {
  std::string squashed = ss::without_whitespace(text);
  if (squashed.size() > 2 && squashed.ends_with("-1")) return squashed.substr(0, squashed.size() - 2);
  return squashed;
}

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    for (const auto& match : ss::all_matches(project)) {
      const auto& spec = *match.spec.spec;
      const auto& site = *match.site;
      const facts::Argument* bound = ss::bound_argument(site);
      const facts::Expression* capacity = ss::field_value(spec, "physical_capacity_positions");
      if (!bound || !capacity) continue;
      bool window = ss::is_window_argument(*bound) || ss::is_sliding_site(site);
      const std::string& declarer = match.spec.declaration->owner_class;
      auto site_value = ss::int_value(project, *match.site_file, site.owner_class, bound->value);
      auto spec_value = ss::int_value(project, *match.spec.file, declarer, *capacity);

      bool drift = false;
      if (site_value && spec_value) {
        drift = *spec_value != *site_value && !(window && *spec_value == *site_value - 1);
      } else if (!site_value && !spec_value) {
        facts::Expression capacity_name = *capacity;
        if (window) capacity_name.text = strip_minus_one(capacity->text);
        if (ss::is_plain_name(bound->value) && ss::is_plain_name(capacity_name)) {
          std::string site_text = ss::without_whitespace(bound->value.text);
          std::string spec_text = ss::without_whitespace(capacity_name.text);
          drift = facts::simple_name(site_text) != facts::simple_name(spec_text);
        }
      }
      if (!drift) continue;

      facts::Location loc = ss::field_loc(spec, "physical_capacity_positions");
      // `kw=value` with the constant's value when it was resolved through a name.
      const rules::Spelling spelling = rules::Spelling::of(*match.site_file);
      auto shown = [](std::string text, const facts::Expression& e, const std::optional<long long>& v) {
        if (v && ss::without_whitespace(e.text) != std::to_string(*v)) text += fmt::format(" (= {})", *v);
        return text;
      };
      std::string where = ss::declared_in_suffix(declarer, site.owner_class);
      Finding f = kvlint::make_finding(kInfo, loc, site.owner_class);
      f.message = fmt::format(
          "`{}` builds `{}` with {} (line {}) but {}{} declares {} (line {}): the declared capacity has "
          "drifted from the allocation's bound; read both from one constant",
          site.owner_class, spelling.code(site.written),
          shown(spelling.argument(bound->keyword, bound->value.text), bound->value, site_value),
          site.loc.line, ss::spec_label(spec), where,
          shown(rules::quoted(spelling.field("physical_capacity_positions", capacity->text)), *capacity,
                spec_value),
          loc.line);
      const std::string bound_text = spelling.is_cpp() ? spelling.argument(bound->keyword, bound->value.text)
                                                       : bound->keyword + "=" + bound->value.text;
      f.related.push_back({bound->value.loc.line ? bound->value.loc : site.loc,
                           fmt::format("the allocation's bound: {}", bound_text)});
      f.related.push_back({spec.loc, "the spec"});
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv402_capacity_drift() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
