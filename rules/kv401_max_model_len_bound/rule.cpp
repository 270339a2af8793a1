// KV401 max-model-len-bound: a declared capacity derived from max_model_len.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include "rules/common/spec_support.hpp"

namespace kvlint {
namespace {

namespace ss = spec_support;

constexpr RuleInfo kInfo{
    "KV401", "max-model-len-bound", Severity::Warning,
    "A declared capacity derived from max_model_len: no known model-local cache is bounded by it.",
    R"doc(## What it does
Warns when a spec's `physical_capacity_positions` reads a name containing `max_model_len`
(`vllm_config.model_config.max_model_len`, `self.max_model_len`, `MAX_MODEL_LEN`), directly or
through a module or class constant assigned from one (`CODEC_POSITIONS = DEFAULTS.max_model_len`).
A capacity taken from a local variable assigned from `max_model_len` earlier in the method is not
seen (the facts carry no local assignments).

## Why it matters
The reference document: "**No cache is bounded by `max_model_len`.** Each has its own mechanism:
a sliding window, a decode-loop trip count, an encoder frame limit, a constant." `max_model_len`
bounds the engine's paged KV, not a model-local cache; a capacity read from it is almost always a
placeholder, and since bytes per row scale with capacity it can be off by orders of magnitude
(Qwen3-TTS's codec decoder holds `sliding_window - 1 = 71` positions, not thousands).

## Example
```python
spec_from_hf_config(self.config, name="local_transformer_cache",
                    physical_capacity_positions=self.vllm_config.model_config.max_model_len,  # KV401
                    ...)
```
Fixed (MiMo-Audio's local transformer is bounded by its decode loop):
```python
                    physical_capacity_positions=self.group_size + max(self.delay_pattern),
                    capacity_source="group_size + max(delay_pattern)",
```

## How to fix
Find what really bounds the cache (the constructor's `max_cache_len`, the sliding window, the
decode-loop trip count, the encoder frame limit) and read the capacity from that same value.
)doc"};

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    for (const auto& ref : ss::all_specs(project)) {
      const auto* capacity = ss::field_value(*ref.spec, "physical_capacity_positions");
      if (!capacity) continue;
      const std::string& owner = ref.declaration->owner_class;
      // Directly, or through a module/class constant assigned from it.
      const facts::Constant* via = nullptr;
      if (!ss::reads_name_containing(*capacity, "max_model_len")) {
        if (!ss::is_plain_name(*capacity)) continue;
        std::string dotted = ss::without_whitespace(capacity->text);
        via = project.constant(*ref.file, owner, facts::simple_name(dotted));
        if (!via || !ss::reads_name_containing(via->value, "max_model_len")) continue;
      }
      facts::Location loc = ss::field_loc(*ref.spec, "physical_capacity_positions");
      Finding f = kvlint::make_finding(kInfo, loc, owner);
      f.message = fmt::format(
          "`{}` declares the capacity of {} from `max_model_len` (`{}`, line {}): no model-local cache is "
          "bounded by max_model_len; read the capacity from the cache's own bound (max_cache_len, sliding "
          "window, decode-loop trip count, encoder frame limit)",
          owner, ss::spec_label(*ref.spec),
          via ? fmt::format("{} = {}", capacity->text, via->value.text) : capacity->text, loc.line);
      f.related.push_back({ref.spec->loc, "the spec"});
      if (via && via->value.loc.line)
        f.related.push_back({via->value.loc, "constant assigned from max_model_len"});
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv401_max_model_len_bound() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
