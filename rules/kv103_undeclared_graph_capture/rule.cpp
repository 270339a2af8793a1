// KV103 undeclared-graph-capture: a class captures CUDA graphs over code that holds a
// model-local cache, and no declaration covers the graph pool.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "rules/common/rule_support.hpp"
#include "rules/common/spelling.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV103", "undeclared-graph-capture", Severity::Error,
    "A class captures CUDA graphs over code that holds a model-local cache, and no declaration "
    "covers the graph pool.",
    R"doc(## What it does
Reports a CUDA-graph capture (`with torch.cuda.graph(...)`, `CUDAGraph().capture_begin()`,
`torch.cuda.make_graphed_callables`) whose captured code holds a model-local cache -- the
capture body, or a method or function it calls (followed through `self.` calls, held
modules, attributes whose annotation names their class (`self.stream: StreamState | None =
None`), and parameters whose class is known from an annotation or from the callers),
builds a cache object, calls a model with `use_cache=True`, or hands it a cache the object
keeps (`past_key_values=self._cache`), or writes, reads or hands on raw K/V a class keeps
(plain tensors, see KV101: `self.keys[i, n:] = k` or `F.scaled_dot_product_attention(q,
self.keys[i], ...)` in a captured method, or handed to a call the capture body makes:
`model._generate_frame(self.hidden, self.caches)` inside the `with`) -- when no declaration covering the capturing class,
the classes whose code writes the cache, or the class that keeps the graphs has a
graph-pool spec.

A capture in a class method that receives the model (`Graph.capture(cls, model, ...)`,
called as `Graph.capture(self, ...)` from the model) is reported on the class that keeps
the captured graphs: the one that calls the factory and stores what it returns.

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

In C++:
```cpp
void GraphRunnerImpl::capture(torch::Tensor input) {
  graph_.capture_begin();            // KV103: decoder_ writes its k_cache_ inside the capture
  output_ = decoder_->forward(input);
  graph_.capture_end();
}
```

## How to fix
Add a spec for the graph pool, with `RowDriver.FIXED`, `rows_fixed` equal to the captured
rows (the bucket sum), a `rows_reason` that says so, and an `allocation_note` describing
the one-object-per-bucket layout. Declare it on a module the collector reaches. In C++ that
is an `mlkv::Spec` with `.rows = mlkv::RowDriver::Fixed`, `.rows_fixed` the captured rows, and
`.rows_reason` and `.allocation_note` naming the graph pool.

## Runtime verdict
`kvlint confirm` on CUDA: the caches built inside the owner's captures count while their
graphs live (each bucket's K/V stays in its graph's pool). Confirmed when no FIXED
declaration of their bytes per row holds their rows, refuted when one does; not exercised
on a CPU, where nothing is captured.
)doc"};

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    for (const auto& file : project.files())
      for (const auto& capture : file.captures) check_capture(project, file, capture, out);
  }

 private:
  static void check_capture(const facts::Project& project, const facts::FileFacts& file,
                            const facts::CaptureSite& capture, std::vector<Finding>& out) {
    const std::vector<facts::KvWrite> writes = project.kv_reached_by(file, capture);
    if (writes.empty()) return;  // nothing captured holds KV
    const facts::ClassRef capturing = project.class_of(file, capture.owner_class);

    // Captured through a parameter (`Graph.capture(cls, model, ...)` called as
    // `Graph.capture(self, ...)`): the graphs live with the class that builds them.
    std::vector<facts::ClassRef> keepers;
    const facts::KvWrite* via_parameter = nullptr;
    for (const auto& w : writes)
      if (!w.through_parameter.empty()) {
        via_parameter = &w;
        break;
      }
    if (via_parameter) {
      for (const facts::Built& b : project.constructions_of(capturing))
        if (b.by && !(b.by == capturing) && std::find(keepers.begin(), keepers.end(), b.by) == keepers.end())
          keepers.push_back(b.by);
      if (keepers.empty() && via_parameter->parameter_class)
        keepers.push_back(via_parameter->parameter_class);
    }
    const facts::ClassRef reported = keepers.empty() ? capturing : keepers.front();
    if (!reported) return;

    std::vector<facts::ClassRef> scope{reported};
    if (capturing) scope.push_back(capturing);
    for (const auto& k : keepers) scope.push_back(k);
    for (const auto& w : writes)
      if (w.holder) scope.push_back(w.holder);
    std::set<const facts::Declaration*> seen;
    std::vector<facts::Cover> covers_without_pool;
    for (facts::ClassRef c : scope) {
      for (const auto& cover : project.coverage(c)) {
        if (!seen.insert(cover.declaration).second) continue;
        if (rules::declares_graph_pool(*cover.declaration)) return;
        covers_without_pool.push_back(cover);
      }
    }

    Finding f = kvlint::make_finding(kInfo, capture.loc, reported.cls->name);
    const rules::Spelling spelling = rules::Spelling::of(file);
    const std::string written = spelling.code(capture.written);
    const facts::KvWrite& first = via_parameter ? *via_parameter : writes.front();
    const std::string existing =
        covers_without_pool.empty()
            ? fmt::format("no `{}` declaration covers it", rules::declaration_name(project))
            : fmt::format("the declaration on `{}` (line {}) has no graph-pool spec",
                          covers_without_pool.front().declarer.cls->name,
                          covers_without_pool.front().declaration->loc.line);
    const std::string where = capturing_place(capture, spelling);
    if (via_parameter) {
      f.message = fmt::format(
          "`{}` keeps the CUDA graphs that {} captures with `{}` (line {}) over `{}`, its `{}` parameter, "
          "which receives a `{}`: {} (line {}), and {}: each captured bucket keeps its own copy resident; "
          "declare the graph pool (a spec whose name, allocation_note, capacity_source or rows_reason "
          "mentions the graph, capture or buckets, with fixed rows from the captured shapes)",
          reported.cls->name, where, written, capture.loc.line, spelling.code(first.entry),
          first.through_parameter,
          first.parameter_class ? first.parameter_class.cls->name : std::string("model"),
          evidence_clause(capturing, capture, first, spelling), first.loc.line, existing);
    } else {
      f.message = fmt::format(
          "`{}` captures CUDA graphs with `{}` (line {}) over code that holds a model-local cache ({}, line "
          "{}), and {}: each captured bucket keeps its own copy resident; declare the graph pool (a spec "
          "whose name, allocation_note, capacity_source or rows_reason mentions the graph, capture or "
          "buckets, with fixed rows from the captured shapes)",
          reported.cls->name, written, capture.loc.line, evidence_clause(capturing, capture, first, spelling),
          first.loc.line, existing);
    }
    if (via_parameter)
      for (const facts::Built& b : project.constructions_of(capturing))
        if (b.by == reported)
          f.related.push_back(
              rules::related(b.construction->loc,
                             fmt::format("`{}` captures and keeps the graphs here", reported.cls->name)));
    for (const auto& w : writes)
      f.related.push_back(
          rules::related(w.loc, fmt::format("{} here", evidence_clause(capturing, capture, w, spelling))));
    for (const auto& c : covers_without_pool)
      f.related.push_back(rules::related(
          c.declaration->loc,
          fmt::format("`{}` declares no graph-pool spec",
                      spelling.method(c.declarer.cls->name, rules::declaration_name(project)))));
    out.push_back(std::move(f));
  }

  static std::string capturing_place(const facts::CaptureSite& capture, const rules::Spelling& spelling) {
    if (capture.owner_class.empty()) return fmt::format("`{}`", capture.method);
    return fmt::format("`{}`", spelling.method(capture.owner_class, capture.method));
  }

  // "it builds a `DynamicCache`", "`LocalTransformer.forward` builds a `DynamicCache`",
  // "its `_one_step` passes a cache to `self.tts.step`".
  static std::string evidence_clause(facts::ClassRef capturing, const facts::CaptureSite& capture,
                                     const facts::KvWrite& w, const rules::Spelling& spelling) {
    std::string what;
    switch (w.kind) {
      case facts::KvWrite::Kind::BuildsCache:
        what = rules::describe_construction(*w.cache_site, "builds");
        break;
      case facts::KvWrite::Kind::ImplicitCache:
        what = fmt::format("calls `{}` with `use_cache=True`", spelling.code(w.callee));
        break;
      case facts::KvWrite::Kind::WritesCache:
        what = w.callee.empty() ? std::string("writes a cache")
                                : fmt::format("{} a cache through `{}`", w.reads_only ? "reads" : "writes",
                                              spelling.code(w.callee));
        break;
      case facts::KvWrite::Kind::RawKv:
        what = rules::describe_raw_kv_access(*w.cache_site->raw_kv, *w.raw_access);
        break;
    }
    const std::string method = w.where ? w.where.method->name : std::string();
    if (w.holder && w.holder == capturing && method == capture.method) return "it " + what;
    if (w.holder && w.holder == capturing) {
      const std::string phrase = spelling.method_phrase(method);  // "`step`"; C++: "the constructor"
      return fmt::format("its {} {}", phrase.starts_with("the ") ? phrase.substr(4) : phrase, what);
    }
    if (w.holder) return fmt::format("`{}` {}", spelling.method(w.holder.cls->name, method), what);
    return fmt::format("`{}` {}", method, what);
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv103_undeclared_graph_capture() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
