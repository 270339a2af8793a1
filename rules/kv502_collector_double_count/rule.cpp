// KV502 collector-double-count: a collector that walks both a graph wrapper and
// its runnable without unwrap().
#include "rules/rule.hpp"

#include <fmt/format.h>

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV502", "collector-double-count", Severity::Error,
    "A spec collector reads the CUDA-graph wrapper's runnable without calling unwrap() first.",
    R"doc(## What it does
Reports a function that collects declarations by walking `named_modules()` (a collector) and reads
a wrapper's `runnable` (`model.runnable`, `getattr(model, "runnable", None)`) without calling the
supported `unwrap()` accessor.

## Why it matters
The reference document: "The runner's `self.model` may be a `CUDAGraphWrapper`, which is not an
`nn.Module` but forwards attribute access to its runnable. The walk therefore works either way,
but entering through both the wrapper and its runnable would count a root-level declarer twice.
The collector calls the supported `unwrap()` accessor first." A double-counted root declarer
doubles the reported model-local KV -- MiMo-Audio's 179.44 MiB graph pool becomes 358.88 MiB.

## Example
```python
def collect_model_local_kv_specs(model):
    specs = []
    for root in (model, getattr(model, "runnable", None)):         # KV502
        if root is None:
            continue
        for _, module in root.named_modules():
            if hasattr(module, "model_local_kv_specs"):
                specs.extend(module.model_local_kv_specs())
    return specs
```
Fixed:
```python
def collect_model_local_kv_specs(model):
    root = model.unwrap() if hasattr(model, "unwrap") else model
    return [s for _, m in root.named_modules()
            if hasattr(m, "model_local_kv_specs") for s in m.model_local_kv_specs()]
```

## How to fix
Call `unwrap()` once, walk the module it returns, and do not touch `runnable` in the collector.
)doc"};

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    for (const auto& file : project.files()) {
      for (const auto& use : file.protocol_uses) {
        if (use.kind != facts::ProtocolUse::Kind::Collector || !use.reads_runnable || use.calls_unwrap)
          continue;
        std::string where = function_label(use);
        Finding f = kvlint::make_finding(kInfo, use.loc, use.owner_class);
        const auto& vocabulary = project.vocabulary();
        std::string walk = use.expression.text.empty() ? "named_modules()" : use.expression.text;
        f.message = fmt::format(
            "collector {} (line {}) walks `{}` and reads the wrapper's `{}` without calling `{}()`: "
            "entering through both the CUDA-graph wrapper and its runnable counts a root-level declarer "
            "twice; call `{}()` first and walk only what it returns",
            where, use.loc.line, walk, vocabulary.runnable, vocabulary.unwrap, vocabulary.unwrap);
        if (use.expression.loc.line) f.related.push_back({use.expression.loc, "walks the modules here"});
        out.push_back(std::move(f));
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv502_collector_double_count() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
