// KV103 undeclared-graph-capture: a class captures CUDA graphs over code that holds a
// model-local cache, and no declaration covers the graph pool.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include <set>

#include "rules/common/rule_support.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV103", "undeclared-graph-capture", Severity::Error,
    "A class captures CUDA graphs over code that holds a model-local cache, and no declaration "
    "covers the graph pool.",
    R"doc(## What it does
Reports a CUDA-graph capture (`with torch.cuda.graph(...)`, `CUDAGraph().capture_begin()`,
`torch.cuda.make_graphed_callables`) in a class whose captured code holds a model-local
cache -- the capturing class, or a class it holds (transitively), builds a cache object or
calls a model with `use_cache=True` -- when no declaration covering the capturing class or
the cache-holding classes has a graph-pool spec.

Graph-pool spec convention: a spec counts as declaring the graph pool when its `name`,
`allocation_note`, `capacity_source` or `rows_reason` mentions "graph", "captur" or
"bucket" (case-insensitive), e.g. `name="local_transformer_graph_pool"` or
`rows_reason="one retained cache per captured bucket"`.

## Why it matters
Each captured bucket keeps its own copy of the KV the captured frame allocated, resident
for the life of the process. The reference document's MiMo-Audio graph pool is a fixed 261
rows (the bucket sum) of 704 KiB each, next to the per-request `DynamicCache` of the same
shape; Qwen3-TTS retains one capture per bucket of its 4.44 MiB-per-row decoder cache. The
per-request declaration does not describe this memory: its rows are fixed by the captured
shapes, not by `max_num_seqs`.

## Example
```python
class LocalGraphRunner:
    def capture(self):
        for bs in self.buckets:
            with torch.cuda.graph(self.graphs[bs]):   # KV103
                self.out[bs] = self.local(self.inp[bs])  # builds a DynamicCache
```
Fixed: the module holding the runner declares the pool next to the eager cache:
```python
spec_from_hf_config(cfg, name="local_transformer_graph_pool", rows=RowDriver.FIXED,
                    rows_fixed=sum(BUCKETS), rows_reason="one cache per captured bucket", ...)
```

## How to fix
Add a spec for the graph pool, with `RowDriver.FIXED`, `rows_fixed` equal to the captured
rows (the bucket sum), a `rows_reason` that says so, and an `allocation_note` describing
the one-object-per-bucket layout. Declare it on a module the collector reaches.
)doc"};

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    for (const auto& file : project.files()) {
      for (const auto& capture : file.captures) {
        if (capture.owner_class.empty()) continue;
        facts::ClassRef owner = project.class_of(file, capture.owner_class);
        if (!owner) continue;
        check_capture(project, owner, capture, out);
      }
    }
  }

 private:
  struct CacheEvidence {
    facts::ClassRef holder;
    facts::Location loc;
    std::string what;  // "builds a `DynamicCache`", "calls `self.lm` with `use_cache=True`"
  };

  static void check_capture(const facts::Project& project, facts::ClassRef owner,
                            const facts::CaptureSite& capture, std::vector<Finding>& out) {
    std::vector<CacheEvidence> evidence;
    for (facts::ClassRef k : project.owned_closure(owner)) {
      for (const facts::CacheSite* s : project.cache_sites_of(k))
        if (!s->caller_requested)
          evidence.push_back({k, s->loc, fmt::format("builds a `{}`", s->cache_class)});
      for (const facts::ImplicitCacheSite* s : project.implicit_caches_of(k))
        evidence.push_back({k, s->loc, fmt::format("calls `{}` with `use_cache=True`", s->callee)});
    }
    if (evidence.empty()) return;  // nothing captured holds KV

    std::vector<facts::ClassRef> scope{owner};
    for (const auto& e : evidence) scope.push_back(e.holder);
    std::set<const facts::Declaration*> seen;
    std::vector<const facts::Cover*> covers_without_pool;
    std::vector<std::vector<facts::Cover>> all_covers;
    for (facts::ClassRef c : scope) all_covers.push_back(project.coverage(c));
    for (const auto& covers : all_covers) {
      for (const auto& cover : covers) {
        if (!seen.insert(cover.declaration).second) continue;
        if (rules::declares_graph_pool(*cover.declaration)) return;
        covers_without_pool.push_back(&cover);
      }
    }

    Finding f = kvlint::make_finding(kInfo, capture.loc, capture.owner_class);
    const CacheEvidence& first = evidence.front();
    std::string holder_text =
        first.holder == owner ? std::string("it") : fmt::format("the `{}` it holds", first.holder.cls->name);
    std::string existing =
        covers_without_pool.empty()
            ? fmt::format("no `{}` declaration covers it", rules::declaration_name(project))
            : fmt::format("the declaration on `{}` (line {}) has no graph-pool spec",
                          covers_without_pool.front()->declarer.cls->name,
                          covers_without_pool.front()->declaration->loc.line);
    f.message = fmt::format(
        "`{}` captures CUDA graphs with `{}` (line {}) over code that holds a model-local cache ({} {}, "
        "line {}), and {}: each captured bucket keeps its own copy resident; declare the graph pool "
        "(a spec whose name, allocation_note, capacity_source or rows_reason mentions the graph, capture "
        "or buckets, with fixed rows from the captured shapes)",
        capture.owner_class, capture.written, capture.loc.line, holder_text, first.what, first.loc.line,
        existing);
    for (const auto& e : evidence)
      f.related.push_back(rules::related(e.loc, fmt::format("`{}` {} here", e.holder.cls->name, e.what)));
    for (const facts::Cover* c : covers_without_pool)
      f.related.push_back(rules::related(
          c->declaration->loc, fmt::format("`{}.{}` declares no graph-pool spec", c->declarer.cls->name,
                                           rules::declaration_name(project))));
    out.push_back(std::move(f));
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv103_undeclared_graph_capture() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
