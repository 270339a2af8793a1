// KV303 capture-ignores-enforce-eager: graph capture not gated on enforce_eager, so the
// pool stays resident in eager deployments.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "rules/common/eager_gate.hpp"
#include "rules/common/rule_support.hpp"
#include "rules/common/spelling.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV303", "capture-ignores-enforce-eager", Severity::Warning,
    "A CUDA-graph capture that retains model-local KV, gated only on torch.cuda.is_available() (or "
    "nothing), not on enforce_eager: the pool stays resident in eager deployments.",
    R"doc(## What it does
Reports a CUDA-graph capture (`with torch.cuda.graph(...)`, `capture_begin()`,
`make_graphed_callables`) that retains model-local KV -- the captured code builds or writes
a cache, or writes or reads raw K/V tensors a class keeps, followed through the methods, held
modules and functions it calls in the analysed tree (what KV103 is about) -- when nothing on the way to it is derived from
`enforce_eager` (any name containing "eager"). Captures of code that holds no attention
KV (vocoders, DiT / flow-matching steps, samplers, MLPs) are not this protocol's concern.

Gates that count, wherever the analyzer finds them:
- in the capturing class: an enclosing `if`, an early return, or a guard under which the
  class calls the capturing method;
- an attribute assigned from enforce_eager (`self.use_cuda_graph = not
  config.enforce_eager`, then `if self.use_cuda_graph:`), also through a constructor
  parameter its builders fill from enforce_eager (`Executor(enabled=not enforce_eager)`);
- in the classes that build the capturing object (`if self._use_cuda_graphs and ...:
  self.executor = Executor(...)`) or enable it (`if enforce_eager: return` before
  `self.decoder.enable_cudagraph()`), and the same one more level of holders up;
- for a module-level capture helper (`def capture_decode_step(model, bs)`), where its
  callers call it (`self.graphs[bs] = capture_decode_step(self, bs)` under a gate).

When nothing in the analysed tree builds or enables the capturing object, the gate is
decided elsewhere and the rule stays silent -- except for a model class whose constructor
or `load_weights` captures: the engine always runs those. The same when the object is built
in a public method that nothing in the tree calls (`TalkerHead.enable_cudagraph()`, called
by a stage runner elsewhere): the code that decides whether to capture is outside. The message names the gates it
found, including the ones in a caller.

## Why it matters
`enforce_eager: true` is how a deployment says "no CUDA graphs". A model that captures
anyway keeps every captured bucket's memory resident while the engine runs eagerly. The
reference document: "MiMo captures every bucket gated only on `torch.cuda.is_available()`
(`mimo_audio_llm.py:670`), so those 179.44 MiB stay resident even when the deploy config
sets `enforce_eager: true`."

## Example
```python
def __init__(self, config, vllm_config):
    if torch.cuda.is_available():
        self._capture_buckets()           # KV303 at the torch.cuda.graph inside
```
Fixed:
```python
    self.enforce_eager = vllm_config.model_config.enforce_eager
    if torch.cuda.is_available() and not self.enforce_eager:
        self._capture_buckets()
```

In C++:
```cpp
if (torch::cuda::is_available()) {
  graph_.capture_begin();  // KV303: add `if (config_.enforce_eager) return;` before it
  step(input);
  graph_.capture_end();
}
```

## How to fix
Read `enforce_eager` from the engine config at construction and skip the capture (and
the graph-pool declaration) when it is set. The analyzer follows the gate through the
classes that build or enable the capturing object and one more level of holders; if the
gate sits further away, suppress with a reason.

## Runtime verdict
`kvlint confirm` runs the owner's `enforce_eager` path. Confirmed when a capture happens
in that path.
)doc"};

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    rules::EagerGate judge(project);
    for (const auto& file : project.files()) {
      for (const auto& capture : file.captures) {
        // Captures of code that holds no attention KV are not this protocol's concern.
        if (project.kv_reached_by(file, capture).empty()) continue;
        const rules::GateVerdict v = judge.judge(file, capture.owner_class, capture.method, capture.guards);
        if (v.state != rules::GateState::NotGated) continue;
        out.push_back(make_finding(rules::Spelling::of(file), capture, v));
      }
    }
  }

 private:
  static Finding make_finding(const rules::Spelling& spelling, const facts::CaptureSite& capture,
                              const rules::GateVerdict& v) {
    Finding f = kvlint::make_finding(kInfo, capture.loc, capture.owner_class);
    std::string gated;
    if (v.gates.empty()) {
      gated = v.trigger.empty() ? "runs unconditionally" : fmt::format("runs whenever {}", v.trigger);
    } else {
      gated = "is gated only on ";
      for (std::size_t i = 0; i < v.gates.size(); ++i) {
        const facts::Guard& g = *v.gates[i].guard;
        gated += (i == 0 ? "" : (i + 1 == v.gates.size() ? " and " : ", "));
        gated +=
            fmt::format("{} (line {}){}", rules::describe_guard(g), g.condition.loc.line, v.gates[i].where);
        f.related.push_back(rules::related(
            g.condition.loc, v.gates[i].where.empty() ? "the only gate on the capture"
                                                      : "the only gate where the capturing object is built"));
      }
    }
    const std::string who = !capture.owner_class.empty() ? quoted_class(capture, spelling)
                            : capture.method.empty()     ? std::string("Module-level code")
                                                         : rules::quoted(capture.method);
    f.message = fmt::format(
        "{} captures a CUDA graph with `{}` (line {}) over code that writes attention KV, and the capture "
        "{}, "
        "never on `enforce_eager`: under `enforce_eager: true` the captured pool stays resident; skip the "
        "capture when `enforce_eager` is set",
        who, spelling.code(capture.written), capture.loc.line, gated);
    return f;
  }
  static std::string quoted_class(const facts::CaptureSite& capture, const rules::Spelling& spelling) {
    return capture.method.empty() ? rules::quoted(capture.owner_class)
                                  : rules::quoted(spelling.method(capture.owner_class, capture.method));
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv303_capture_ignores_enforce_eager() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
