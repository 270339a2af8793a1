// KV102 implicit-cache: a call makes transformers build a cache behind it and no declaration covers it.
#include <cctype>

#include "rules/rule.hpp"

#include <fmt/format.h>

#include "rules/common/declaration_skeleton.hpp"
#include "rules/common/rule_support.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV102", "implicit-cache", Severity::Error,
    "A call to a transformers model passes use_cache=True without a cache, so transformers builds one "
    "behind it, the cache is kept, and no declaration covers it.",
    R"doc(## What it does
Reports a call to something that can be a `transformers` model that passes `use_cache=True`
-- as a keyword or through a `**kwargs` dict (`kwargs.update({"use_cache": True})`,
`**dict(use_cache=True)`, `**{"use_cache": True}`) -- without `past_key_values` (or with
one that starts as `None`), so `transformers` builds a `DynamicCache` behind the call, and
keeps that cache, when no `model_local_kv_specs()` declaration covers the calling class
(own, inherited, or reached from a module that holds it -- the same coverage test as KV101).

The callee must be able to be a model: a submodule attribute (`self.lm(...)`, a held project
module, a class from transformers), a `from_pretrained` / `from_config` result, a method such
as `generate` on one, or a method of the class that takes a cache. Any other function with a
`use_cache` keyword (`self.memcache_get(key, use_cache=True)` in a plain class) is not.

The cache must be kept: stored (on the instance, or in a dict stored there), reused across a
loop's steps (`past = out.past_key_values` fed back as `past_key_values=past`), returned to
the caller, or kept by `generate`'s own decode loop. A one-shot call whose cache is dropped at
once (the result discarded, only its logits or hidden states read, or its cache read by one
more call outside any loop, as in a warm-up) allocates only for that forward: it is reported
at **info** severity with its own message ("dropped at once"), a hint to pass
`use_cache=False`, not an error.

A `past_key_values=self._cache` whose attribute is `None` only in `__init__` but is assigned
before every call that passes it (`self._cache = bucket["cache"]`, in the method or in every
caller within the class) is not an implicit cache: the explicit construction is the finding
(KV101), once.

Ownership follows retention. A transformers-style model that builds a cache only when
its caller asks (`if use_cache and past_key_values is None: past_key_values =
DynamicCache()`) and hands it back does not own that memory; the caller that asks does.
So the finding lands on the call sites that ask, not on every model class that *can*
build one. A call passing `use_cache=use_cache` forwards the decision to its own caller
and is not reported. A call whose callee is a held class that declares the cache itself
(`self.lm` is a `LocalTransformer` with its own `model_local_kv_specs()`) is covered there.

## Why it matters
An implicit cache is the easiest one to miss in review: no cache class is named
anywhere. It is still per-call KV memory the engine never budgeted. MiMo-Audio's local
transformer keeps a `DynamicCache` of `group_size + max(delay_pattern) = 11` positions,
704 KiB per row, scaled by `max_num_seqs`.

## Example
```python
class LocalDecoder(nn.Module):
    def step(self, embeds):
        past = None
        for _ in range(self.group_size):
            out = self.lm(inputs_embeds=embeds, past_key_values=past, use_cache=True)  # KV102
            past = out.past_key_values
```
Fixed: add `model_local_kv_specs()` to `LocalDecoder` (or the module that holds it)
declaring the `DynamicCache` transformers builds, bounded by the loop's trip count.

## How to fix
Declare the cache on the calling class: its capacity is what the call sequence feeds
in (a decode loop's trip count, a sliding window), its rows follow how many calls are in
flight. If the cache is really unwanted, pass `use_cache=False`.

## Runtime verdict
`kvlint confirm` records caches by the source line that created them; for an implicit
cache that is the call. Confirmed when a cache created at the finding's file:line is
observed; refuted when a path of the owner's entry ran to completion and none was;
not-exercised when no entry boots the owner.
)doc"};

// The first attribute after `self.` in a callee: "lm" for `self.lm.generate`.
std::string callee_attribute(std::string_view callee) {
  constexpr std::string_view kSelf = "self.";
  if (!callee.starts_with(kSelf)) return {};
  callee.remove_prefix(kSelf.size());
  return std::string(callee.substr(0, callee.find_first_of(".(")));
}

// A class the owner (or a base) holds under `attribute` and that declares itself.
const facts::Declaration* callee_declaration(const facts::Project& project, facts::ClassRef owner,
                                             std::string_view attribute) {
  if (attribute.empty()) return nullptr;
  std::vector<facts::ClassRef> lineage{owner};
  for (facts::ClassRef a : project.ancestors(owner)) lineage.push_back(a);
  for (const auto& file : project.files()) {
    for (const auto& hop : file.hops) {
      if (hop.attribute != attribute) continue;
      facts::ClassRef holder = project.class_of(file, hop.owner_class);
      bool ours = false;
      for (facts::ClassRef c : lineage) ours = ours || (c == holder);
      if (!ours) continue;
      if (facts::ClassRef target = project.find_class(hop.target_class, &file))
        if (const facts::Declaration* d = project.own_declaration(target)) return d;
    }
  }
  return nullptr;
}

// `GenerationConfig(use_cache=True)`, `Model(config, use_cache=True)`: a class being
// constructed takes use_cache as a setting; no forward pass runs, no cache is built.
bool is_constructor_call(std::string_view callee) {
  std::string_view simple = facts::simple_name(callee);
  return !simple.empty() && std::isupper(static_cast<unsigned char>(simple.front()));
}

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    rules::SkeletonFixes skeletons;
    for (const auto& file : project.files()) {
      for (const auto& site : file.implicit_caches) {
        if (site.owner_class.empty() || is_constructor_call(site.callee)) continue;
        facts::ClassRef owner = project.class_of(file, site.owner_class);
        if (!owner || !project.coverage(owner).empty()) continue;
        if (callee_declaration(project, owner, callee_attribute(site.callee))) continue;
        if (!rules::implicit_callee_is_model(project, file, owner, site)) continue;
        Finding f = make_finding(project, site);
        rules::relate_holder_declarations(project, owner, f);
        out.push_back(std::move(f));
        skeletons.add(owner, out.size() - 1, rules::skeleton_spec(project, owner, site));
      }
    }
    skeletons.attach(project, out);
  }

 private:
  static Finding make_finding(const facts::Project& project, const facts::ImplicitCacheSite& site) {
    Finding f = kvlint::make_finding(kInfo, site.loc, site.owner_class);
    std::string how;
    if (site.reason == facts::ImplicitCacheSite::Reason::PastKeyValuesStartsNone) {
      how = site.none_origin
                ? fmt::format("with `use_cache=True` and a `past_key_values` that starts as `None` (line {})",
                              site.none_origin->line)
                : std::string("with `use_cache=True` and a `past_key_values` that starts as `None`");
      if (site.none_origin)
        f.related.push_back(rules::related(*site.none_origin, "`past_key_values` starts as `None` here"));
    } else {
      how = "with `use_cache=True` and no `past_key_values`";
    }
    if (site.through_kwargs_dict) how += " (through a `**` keyword dict)";
    const std::string where = site.method.empty() ? site.owner_class : site.owner_class + "." + site.method;
    if (!rules::implicit_cache_is_kept(site)) {
      f.severity = Severity::Info;
      const bool used_once = site.kept == facts::ImplicitCacheSite::Kept::UsedOnce && site.kept_at;
      if (used_once)
        f.related.push_back(rules::related(*site.kept_at, "its cache is read once here, then dropped"));
      f.message = fmt::format(
          "`{}` calls `{}` (line {}) {}, so transformers builds a `DynamicCache` for that forward, but the "
          "cache is dropped at once{}: it lives only for the call; pass `use_cache=False` if it is not "
          "needed",
          where, site.callee, site.loc.line, how,
          used_once ? fmt::format(" (after one more call, line {})", site.kept_at->line) : std::string());
      return f;
    }
    const std::string kept = how_kept(site);
    if (site.kept_at) f.related.push_back(rules::related(*site.kept_at, "the cache is kept here"));
    f.message = fmt::format(
        "`{}` calls `{}` (line {}) {}, so transformers builds a `DynamicCache` behind the call and {}, and "
        "no `{}` declaration covers `{}`: declare that cache on `{}` or a module that holds it, or pass "
        "`use_cache=False`",
        where, site.callee, site.loc.line, how, kept, rules::declaration_name(project), site.owner_class,
        site.owner_class);
    return f;
  }

  static std::string how_kept(const facts::ImplicitCacheSite& site) {
    using Kept = facts::ImplicitCacheSite::Kept;
    const std::string line = site.kept_at ? fmt::format(" (line {})", site.kept_at->line) : std::string();
    switch (site.kept) {
      case Kept::Stored:
        return "the cache is stored" + line;
      case Kept::Reused:
        return "the cache is reused across a loop's steps" + line;
      case Kept::Returned:
        return "the cache is returned to the caller" + line;
      case Kept::Unknown:
        return "the cache is passed on" + line;
      case Kept::UsedOnce:
      case Kept::Dropped:
        break;
    }
    return "`generate` keeps the cache across its decode loop";
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv102_implicit_cache() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
