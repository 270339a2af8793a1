// KV403 hand-written-geometry: layers / kv_heads / head_dim / dtype written as
// literals where the cache is built from a config that has them.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include <set>

#include "rules/common/spec_support.hpp"
#include "rules/common/spelling.hpp"

namespace kvlint {
namespace {

namespace ss = spec_support;

constexpr RuleInfo kInfo{"KV403", "hand-written-geometry", Severity::Info,
                         "layers / kv_heads / head_dim / dtype written as literals where the config the "
                         "cache is built from has them.",
                         R"doc(## What it does
Reports a spec that writes its geometry by hand -- `layers`, `kv_heads` or `head_dim` as an
integer literal, or `dtype` as a literal dtype (`torch.float16`, `torch.bfloat16`, `"float32"`) --
when the values are available from a config: the spec is built with
`spec_from_hf_config(config, ...)`, or the cache it describes (linked as in KV202) is constructed
from a config (`StaticCache(config=self._llm_config, ...)`, `DynamicCache(config=self.config)`).
`spec_from_hf_config` takes `dtype` as an argument rather than deriving it, so a literal `dtype`
is reported only in the second case, where the config the cache is built from carries it.
Values read from the config (`layers=self.config.num_hidden_layers`,
`dtype=self.config.torch_dtype`) are silent.

## Why it matters
The cache's geometry is whatever the config says at load time; a literal is a copy that goes
stale when the checkpoint changes. The reference document's ming talker makes the point: its
`self._llm_config` "is a `Qwen2Config` from the checkpoint, so layers, kv-heads, head-dim and dtype
are only knowable after load. That is what makes this a runtime query rather than a table."
Bytes per row are `2 x layers x kv_heads x head_dim x positions x dtype size`: each literal is a
factor that can silently be wrong.

## Example
```python
spec_from_hf_config(self._llm_config, name="talker_static_cache",
                    layers=28, kv_heads=4, head_dim=128, dtype=torch.bfloat16,   # KV403
                    ...)
```
Fixed:
```python
spec_from_hf_config(self._llm_config, name="talker_static_cache",
                    dtype=self._llm_config.torch_dtype, ...)   # layers/kv_heads/head_dim derived
```

In C++:
```cpp
mlkv::spec_from_config(config_, {.name = "talker_kv", .layers = 28, ...})  // KV403: from the config already
```

## How to fix
Drop the literal fields and let `spec_from_hf_config()` derive them from the same config object
the cache is built from ("it raises rather than guessing when an attribute is missing"), or read
them from that config explicitly. In C++, `mlkv::spec_from_config(config_, {...})` derives them
the same way: drop `.layers`, `.kv_heads` and `.head_dim`.
)doc"};

bool literal_dtype(const facts::Expression& e) {
  static constexpr std::string_view kDtypes[] = {"float16",     "half",    "bfloat16", "float32",
                                                 "float",       "float64", "double",   "float8_e4m3fn",
                                                 "float8_e5m2", "int8",    "uint8"};
  std::string text = ss::without_whitespace(e.text);
  std::string tail;
  if (e.literal == facts::LiteralKind::String)
    tail = ss::lowercase(e.literal_value);
  else if (text.starts_with("torch.") && ss::is_plain_name(e))
    tail = ss::lowercase(facts::simple_name(text));
  else
    return false;
  for (auto d : kDtypes)
    if (tail == d) return true;
  return false;
}

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    // Specs whose cache is built from a config, and the site that shows it.
    std::vector<std::pair<const facts::SpecFact*, const facts::CacheSite*>> config_sites;
    for (const auto& m : ss::all_matches(project))
      if (ss::site_config(*m.site)) config_sites.emplace_back(m.spec.spec, m.site);

    for (const auto& ref : ss::all_specs(project)) {
      const auto& spec = *ref.spec;
      const facts::CacheSite* site = nullptr;
      for (const auto& [s, cs] : config_sites)
        if (s == &spec) site = cs;
      const bool derivable = spec.constructor == "spec_from_hf_config" && spec.config;
      if (!derivable && !site) continue;

      std::vector<const facts::Argument*> literals;
      for (const auto& field : spec.fields) {
        bool geometry =
            field.keyword == "layers" || field.keyword == "kv_heads" || field.keyword == "head_dim";
        // spec_from_hf_config takes dtype as an argument rather than deriving it, so a
        // literal dtype is reported only where the cache itself is built from a config.
        if ((geometry && field.value.literal == facts::LiteralKind::Int) ||
            (site && field.keyword == "dtype" && literal_dtype(field.value)))
          literals.push_back(&field);
      }
      if (literals.empty()) continue;
      const rules::Spelling spelling = rules::Spelling::of(*ref.file);

      std::string source = site ? fmt::format("the cache is built from `{}` (line {})",
                                              ss::site_config(*site)->value.text, site->loc.line)
                                : fmt::format("`{}({})` can derive them",
                                              spelling.spec_constructor(spec.constructor), spec.config->text);

      std::string fields;
      for (const auto* a : literals)
        fields +=
            fmt::format("{}`{}`", fields.empty() ? "" : ", ", spelling.field(a->keyword, a->value.text));
      const std::string& owner = ref.declaration->owner_class;
      facts::Location loc = literals.front()->value.loc.line ? literals.front()->value.loc : spec.loc;
      Finding f = kvlint::make_finding(kInfo, loc, owner);
      f.message = fmt::format(
          "`{}` writes the geometry of {} by hand ({}, line {}) but {}: a literal goes stale when the "
          "checkpoint changes; derive it from the config",
          owner, ss::spec_label(spec), fields, loc.line, source);
      for (const auto* a : literals)
        if (a->value.loc.line)
          f.related.push_back({a->value.loc, fmt::format("literal `{}`", spelling.field(a->keyword))});
      if (site) f.related.push_back({site->loc, "cache built from a config here"});
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv403_hand_written_geometry() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
