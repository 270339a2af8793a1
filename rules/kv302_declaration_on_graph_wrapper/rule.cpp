// KV302 declaration-on-graph-wrapper: the eager path allocates the cache, yet the only
// declaration lives on the CUDA-graph wrapper.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "rules/common/rule_support.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV302", "declaration-on-graph-wrapper", Severity::Error,
    "The eager path allocates the cache, yet the only declaration lives on the CUDA-graph wrapper, "
    "which does not exist under enforce_eager.",
    R"doc(## What it does
Reports a declaration on a CUDA-graph wrapper when it is the only thing covering a class
that allocates a cache eagerly (outside any graph capture). A graph wrapper is a class
whose name contains `CUDAGraph`, `GraphWrapper` or `GraphRunner`, or a class that is not
an `nn.Module` and captures CUDA graphs itself. A module that captures in its own
constructor (MiMo-Audio) is not a wrapper: it exists under `enforce_eager` too. The covered class must have no declaration of its own, inherited or from a
holder that is not a wrapper.

A declaration of the class itself that only forwards to a graph wrapper it attaches
later (`if self._graph_wrapper is None: return []`, then
`return self._graph_wrapper.model_local_kv_specs()`, with the wrapper built in
`enable_cudagraph()` or under a condition) counts as a declaration on the wrapper: the
finding is on that forwarding declaration.

## Why it matters
Under `enforce_eager: true` there is no wrapper, so the collector walks the bare model
and finds nothing: the declaration reports zero while the eager path allocates the full
per-request cache. The reference document records exactly this: one Qwen3-TTS revision
"hung the declaration off the CUDA-graph wrapper and reported zero under `enforce_eager`,
where the eager async-chunk path does allocate".

## Example
```python
class CodecGraphWrapper:
    def __init__(self, decoder):
        self.decoder = decoder                   # decoder builds its DynamicCache eagerly
    def model_local_kv_specs(self):              # KV302
        return [spec_from_hf_config(self.decoder.config, name="codec_decoder", ...)]
```
Fixed: move the eager spec to the decoder (the module the collector reaches with or
without the wrapper); keep only the graph-pool spec, if any, on the wrapper.

## How to fix
Declare the eager cache on the module that builds it. The wrapper may still declare its
own graph pool (captured buckets), which is gone under `enforce_eager` as it should be.

## Runtime verdict
`kvlint confirm` runs the owner's eager path. Confirmed when the eager path allocates and
the declaration collected there reports zero.
)doc"};

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    for (facts::ClassRef cls : project.classes()) {
      facts::Location eager_loc;
      std::string eager_what;
      for (const facts::CacheSite* s : project.cache_sites_of(cls)) {
        if (s->inside_graph_capture || s->caller_requested) continue;
        eager_loc = s->loc;
        eager_what = fmt::format("a `{}`", s->cache_class);
        break;
      }
      if (eager_what.empty()) {
        auto implicit = project.implicit_caches_of(cls);
        if (!implicit.empty()) {
          eager_loc = implicit.front()->loc;
          eager_what = fmt::format("the cache behind `{}(...)`", implicit.front()->callee);
        }
      }
      if (eager_what.empty()) continue;

      // Own or inherited declarations, or a non-wrapper holder's, survive enforce_eager --
      // unless all they do is forward to a graph wrapper the class attaches later.
      auto covers = project.coverage(cls);
      if (covers.empty()) continue;
      const facts::OwnershipHop* attached = nullptr;
      bool only_wrappers = std::all_of(covers.begin(), covers.end(), [&](const facts::Cover& c) {
        if (c.how == facts::Cover::How::DeclaredByHolder || c.how == facts::Cover::How::ForwardedByHolder)
          return rules::is_graph_wrapper(project, c.declarer);
        const facts::OwnershipHop* hop = forwards_only_to_attached_wrapper(project, c);
        if (hop && !attached) attached = hop;
        return hop != nullptr;
      });
      if (!only_wrappers) continue;
      std::set<const facts::Declaration*> seen;
      for (const auto& c : covers) {
        if (!seen.insert(c.declaration).second) continue;
        if (c.how == facts::Cover::How::Own || c.how == facts::Cover::How::Inherited) {
          out.push_back(forwarder_finding(project, cls, c, *attached, eager_loc, eager_what));
          continue;
        }
        Finding f = kvlint::make_finding(kInfo, c.declaration->loc, cls.cls->name);
        f.message = fmt::format(
            "`{}` builds {} on its eager path (line {}), but the only declaration covering it is "
            "`{}.{}` (line {}) on a CUDA-graph wrapper: under `enforce_eager` there is no wrapper, so the "
            "declaration reports zero while the eager path allocates; declare the eager cache on `{}`",
            cls.cls->name, eager_what, eager_loc.line, c.declarer.cls->name, rules::declaration_name(project),
            c.declaration->loc.line, cls.cls->name);
        f.related.push_back(
            rules::related(eager_loc, fmt::format("`{}` allocates eagerly here", cls.cls->name)));
        if (c.hop)
          f.related.push_back(rules::related(
              c.hop->loc, fmt::format("the wrapper `{}` holds it here", c.declarer.cls->name)));
        out.push_back(std::move(f));
      }
    }
  }

 private:
  // A declaration with no specs of its own whose forwards all go to an attribute holding
  // a graph wrapper that the class attaches after construction or under a condition
  // (`self._graph_wrapper = Wrapper(self)` in `enable_cudagraph()`): without the wrapper
  // it returns nothing. The hop that attaches the wrapper, or nullptr.
  static const facts::OwnershipHop* forwards_only_to_attached_wrapper(const facts::Project& project,
                                                                      const facts::Cover& cover) {
    const facts::Declaration& d = *cover.declaration;
    if (!d.specs.empty() || d.forwards.empty()) return nullptr;
    const facts::OwnershipHop* attached = nullptr;
    for (const facts::Forward& fw : d.forwards) {
      const facts::ClassRef target = project.attribute_class(cover.declarer, fw.via_attribute);
      if (!target || !rules::is_graph_wrapper(project, target)) return nullptr;
      const facts::OwnershipHop* hop = nullptr;
      for (const facts::Built& b : project.constructions_of(target))
        if (b.by == cover.declarer && conditionally_attached(*b.construction))
          hop = find_hop(project, cover.declarer, fw.via_attribute);
      if (!hop) return nullptr;
      attached = hop;
    }
    return attached;
  }
  static bool conditionally_attached(const facts::Construction& c) {
    return c.method != "__init__" || std::any_of(c.guards.begin(), c.guards.end(), [](const facts::Guard& g) {
             return rules::is_branching_guard(g);
           });
  }
  static const facts::OwnershipHop* find_hop(const facts::Project& project, facts::ClassRef cls,
                                             const std::string& attribute) {
    std::vector<facts::ClassRef> chain{cls};
    for (facts::ClassRef a : project.ancestors(cls)) chain.push_back(a);
    for (facts::ClassRef c : chain)
      for (const auto& h : c.file->hops)
        if (h.owner_class == c.cls->name && h.attribute == attribute) return &h;
    return nullptr;
  }

  static Finding forwarder_finding(const facts::Project& project, facts::ClassRef cls, const facts::Cover& c,
                                   const facts::OwnershipHop& attached, const facts::Location& eager_loc,
                                   const std::string& eager_what) {
    Finding f = kvlint::make_finding(kInfo, c.declaration->loc, cls.cls->name);
    f.message = fmt::format(
        "`{}` builds {} on its eager path (line {}), but `{}.{}` (line {}) only forwards to the CUDA-graph "
        "wrapper in `self.{}`, which is attached only when graphs are enabled (line {}): under "
        "`enforce_eager` there is no wrapper, so the declaration reports zero while the eager path "
        "allocates; declare the eager cache on `{}` itself and forward only the graph pool",
        cls.cls->name, eager_what, eager_loc.line, c.declarer.cls->name, rules::declaration_name(project),
        c.declaration->loc.line, attached.attribute, attached.loc.line, cls.cls->name);
    f.related.push_back(rules::related(eager_loc, fmt::format("`{}` allocates eagerly here", cls.cls->name)));
    f.related.push_back(rules::related(attached.loc, "the wrapper is attached here"));
    return f;
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv302_declaration_on_graph_wrapper() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
