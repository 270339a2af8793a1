// KV401 max-model-len-bound: a declared capacity derived from max_model_len.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include "rules/common/spec_support.hpp"

namespace kvlint {
namespace {

namespace ss = spec_support;

constexpr RuleInfo kInfo{
    "KV401", "max-model-len-bound", Severity::Warning,
    "A declared capacity derived from max_model_len or the checkpoint's max_position_embeddings: no known "
    "model-local cache is bounded by it.",
    R"doc(## What it does
Warns when a spec's `physical_capacity_positions` reads a name containing `max_model_len`
(`vllm_config.model_config.max_model_len`, `self.max_model_len`, `MAX_MODEL_LEN`) or the
checkpoint's `max_position_embeddings` -- the same bound under its transformers name
(`self.config.max_position_embeddings`, a local config `cfg.max_position_embeddings`,
`getattr(config, "max_position_embeddings")`) -- directly, through a local variable assigned
from one earlier in the declaration (`positions = self.config.max_position_embeddings`), or
through a module or class constant assigned from one (`CODEC_POSITIONS = DEFAULTS.max_model_len`).

Silent when the declaring class (or a class it holds) allocates raw K/V whose shape reads the same
bound -- a pool of `ceil(max_model_len / block_size)` pages per slot really is bounded by it.

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

The checkpoint's `max_position_embeddings` is the model's positional limit, the transformers
twin of `max_model_len`: a cache sized to it is the worst case, not what any cache holds.

In C++:
```cpp
.physical_capacity_positions = config_.max_model_len,  // KV401
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
      // Directly, or through a local of the declaration or a module/class constant assigned from it.
      std::string_view bound = engine_bound(*capacity);
      const facts::Expression* via = nullptr;
      std::string_view via_kind;
      if (bound.empty()) {
        if (!ss::is_plain_name(*capacity)) continue;
        std::string dotted = ss::without_whitespace(capacity->text);
        if (const facts::LocalAssignment* local = last_local(*ref.declaration, dotted, ref.spec->loc)) {
          via = &local->value;
          via_kind = "local";
        } else if (const facts::Constant* c =
                       project.constant(*ref.file, owner, facts::simple_name(dotted))) {
          via = &c->value;
          via_kind = "constant";
        }
        if (!via) continue;
        bound = engine_bound(*via);
        if (bound.empty()) continue;
      }
      if (facts::ClassRef cls = project.class_of(*ref.file, owner);
          cls && raw_kv_sized_by(project, cls, bound))
        continue;
      facts::Location loc = ss::field_loc(*ref.spec, "physical_capacity_positions");
      Finding f = kvlint::make_finding(kInfo, loc, owner);
      f.message = fmt::format(
          "`{}` declares the capacity of {} from `{}` (`{}`, line {}): no model-local cache is bounded by "
          "{}; read the capacity from the cache's own bound (max_cache_len, sliding window, decode-loop trip "
          "count, encoder frame limit)",
          owner, ss::spec_label(*ref.spec), bound,
          via ? fmt::format("{} = {}", capacity->text, via->text) : capacity->text, loc.line, bound);
      f.related.push_back({ref.spec->loc, "the spec"});
      if (via && via->loc.line)
        f.related.push_back({via->loc, fmt::format("{} assigned from {}", via_kind, bound)});
      out.push_back(std::move(f));
    }
  }

 private:
  // The engine-wide bound an expression reads, or empty.
  static std::string_view engine_bound(const facts::Expression& e) {
    for (std::string_view name : {"max_model_len", "max_position_embeddings"})
      if (ss::reads_name_containing(e, name)) return name;
    return {};
  }
  // The owner (or a class it holds) allocates raw K/V whose shape reads `bound`, directly, through
  // a local (`total_blocks`) or through an attribute assigned from it (`self._blocks_per_slot =
  // ceil(max_model_len / block_size)`): the pool really is sized by the engine's bound.
  static bool raw_kv_sized_by(const facts::Project& project, facts::ClassRef owner, std::string_view bound) {
    for (facts::ClassRef k : project.owned_closure(owner))
      for (const facts::CacheSite* site : project.cache_sites_of(k)) {
        if (!site->raw_kv) continue;
        for (const facts::Expression& dim : site->raw_kv->shape) {
          if (ss::reads_name_containing(dim, bound)) return true;
          for (const std::string& name : dim.names) {
            if (!name.starts_with("self.")) continue;
            const std::string attribute = name.substr(5, name.find('.', 5) - 5);
            for (const facts::AttributeAssignment* a : project.attribute_assignments_of(k, attribute))
              if (ss::reads_name_containing(a->value, bound)) return true;
          }
        }
      }
    return false;
  }
  // The declaration's last assignment to `name` before the spec.
  static const facts::LocalAssignment* last_local(const facts::Declaration& d, std::string_view name,
                                                  const facts::Location& before) {
    const facts::LocalAssignment* found = nullptr;
    for (const auto& a : d.local_assignments)
      if (a.name == name && (a.loc.line < before.line || before.line == 0)) found = &a;
    return found;
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv401_max_model_len_bound() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
