// KV301 unconditional-declaration: the cache is built only under a condition the owner
// can see, but the declaration returns its specs unconditionally.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "rules/common/rule_support.hpp"
#include "rules/common/spec_support.hpp"
#include "rules/common/spelling.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV301", "unconditional-declaration", Severity::Error,
    "The cache is built only under a condition the owner can see (its own state), but the "
    "declaration returns specs unconditionally.",
    R"doc(## What it does
Reports a covered cache (a constructed cache object, or a `use_cache=True` call) that is
built only under a condition on its owner's own state -- `if self.async_chunk:`, an early
return on `self.streaming`, a method its class calls only under such a test (a helper such as
`_init_kv_cache` that returns the cache to the class's own decode loop included) -- while every
declaration covering it returns its specs with no condition at all (no guard around the
specs, no `return []` on any path).

Not reported:
- the deciding setting is a call argument (`use_cache`, `past_key_values is None`, a
  session the caller opens): the owner cannot see it, so declaring the honest unit
  unconditionally and saying so in `allocation_note` is correct (the reference's MiniCPM-o
  encoder declares one session for exactly this reason);
- lazy creation tests on the cache's own slot (`if self.cache is None:`,
  `if request_id not in self._caches:`): they decide *when*, not *whether*;
- the declaration is itself conditional on any owner state.

## Why it matters
"A declaration must be inert when its path is." Qwen3-TTS holds KV only in async-chunk
mode; stateless decoding runs `_forward_exact` and allocates nothing. One revision
declared unconditionally "and invented roughly a gigabyte for stateless deployments".

## Example
```python
class CodecDecoder(nn.Module):
    def forward(self, codes, request_id):
        if self.async_chunk:
            cache = self._caches.setdefault(request_id, DynamicCache())
        ...
    def model_local_kv_specs(self):
        return [spec_from_hf_config(self.config, name="codec_decoder", ...)]  # KV301
```
Fixed:
```python
    def model_local_kv_specs(self):
        if not self.async_chunk:
            return []  # stateless decoding holds no KV
        return [spec_from_hf_config(self.config, name="codec_decoder", ...)]
```

In C++:
```cpp
CodecDecoder(const Config& c) : streaming_(c.streaming) { if (streaming_) k_cache_ = torch::zeros({...}); }
std::vector<mlkv::Spec> model_local_kv_specs() const { return {mlkv::spec_from_config(...)}; }  // KV301
```

## How to fix
Test the same owner state in the declaration and return `[]` (or omit the spec) when the
path that allocates is off. If the state can change after construction, declare the
honest unit and explain it in `allocation_note`, with a suppression that says why. In C++,
`if (!streaming_) return {};` at the top of `model_local_kv_specs()`.

## Runtime verdict
`kvlint confirm` drives each path of the owner's entry. Confirmed when a path allocates
nothing (no cache observed) yet the declaration collected on that path reports bytes.
)doc"};

struct SiteView {
  const facts::FileFacts* file;
  std::string owner_class;
  std::string what;  // "its `DynamicCache`", "the cache behind `self.lm(...)`"
  facts::Location loc;
  const facts::Guard* guard;
};

bool is_conditional(const facts::Declaration& decl) {
  if (decl.returns_empty_somewhere) return true;
  for (const auto& spec : decl.specs)
    if (std::any_of(spec.guards.begin(), spec.guards.end(), rules::is_branching_guard)) return true;
  return false;
}

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    // One finding per declaration place; further conditional sites become evidence.
    std::map<std::tuple<std::string, uint32_t, uint32_t, std::string>, std::size_t> by_place;
    auto consider = [&](const SiteView& site) {
      facts::ClassRef owner = project.class_of(*site.file, site.owner_class);
      if (!owner || !site.guard) return;
      const facts::Declaration* decl = nullptr;
      for (const auto& cover : project.coverage(owner)) {
        if (cover.declaration->specs.empty()) continue;
        // A module the object is built for cannot see the object's state (its lazy growth):
        // whether the object exists is up to the code that builds it, not a mode to declare on.
        if (cover.how == facts::Cover::How::DeclaredByBuiltFor) continue;
        if (is_conditional(*cover.declaration)) return;
        if (!decl) decl = cover.declaration;
      }
      if (!decl) return;
      const facts::Location& at = decl->specs.size() == 1 ? decl->specs.front().loc : decl->loc;
      auto key = std::make_tuple(at.file, at.line, at.column, site.owner_class);
      auto guard_note = rules::related(
          site.guard->condition.loc, fmt::format("`{}` builds {} only under {}", site.owner_class, site.what,
                                                 rules::describe_guard(*site.guard)));
      auto site_note = rules::related(site.loc, fmt::format("{} is built here", site.what));
      if (auto it = by_place.find(key); it != by_place.end()) {
        out[it->second].related.push_back(site_note);
        out[it->second].related.push_back(guard_note);
        return;
      }
      Finding f = kvlint::make_finding(kInfo, at, site.owner_class);
      const rules::Spelling spelling = rules::Spelling::of(*site.file);
      std::string declared = decl->specs.size() == 1
                                 ? fmt::format("{} (line {})", spec_support::spec_label(decl->specs.front()),
                                               decl->specs.front().loc.line)
                                 : fmt::format("{} specs (line {})", decl->specs.size(), decl->loc.line);
      f.message = fmt::format(
          "`{}` builds {} (line {}) only under {} (line {}), owner state it can see, but `{}` declares {} "
          "unconditionally: deployments that never take that path report memory they never allocate; "
          "return `{}` (or omit the spec) under the same condition",
          site.owner_class, site.what, site.loc.line, rules::describe_guard(*site.guard),
          site.guard->condition.loc.line,
          spelling.method(decl->owner_class, rules::declaration_name(project)), declared,
          spelling.empty_specs());
      f.related.push_back(site_note);
      f.related.push_back(guard_note);
      by_place.emplace(key, out.size());
      out.push_back(std::move(f));
    };
    for (const auto& file : project.files()) {
      for (const auto& s : file.cache_sites) {
        if (s.owner_class.empty() || s.caller_requested) continue;
        consider({&file, s.owner_class, fmt::format("its `{}`", s.cache_class), s.loc,
                  rules::owner_state_guard(s.guards, rules::retained_attribute(s))});
      }
      for (const auto& s : file.implicit_caches) {
        if (s.owner_class.empty()) continue;
        consider({&file, s.owner_class, fmt::format("the cache behind `{}(...)`", s.callee), s.loc,
                  rules::owner_state_guard(s.guards, {})});
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv301_unconditional_declaration() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
