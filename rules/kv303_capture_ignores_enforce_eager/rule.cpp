// KV303 capture-ignores-enforce-eager: graph capture not gated on enforce_eager, so the
// pool stays resident in eager deployments.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "rules/common/rule_support.hpp"

namespace kvlint {
namespace {

constexpr RuleInfo kInfo{
    "KV303", "capture-ignores-enforce-eager", Severity::Warning,
    "CUDA-graph capture gated only on torch.cuda.is_available() (or nothing), not on enforce_eager: "
    "the pool stays resident in eager deployments.",
    R"doc(## What it does
Reports a CUDA-graph capture (`with torch.cuda.graph(...)`, `capture_begin()`,
`make_graphed_callables`) when none of the conditions it runs under mentions
`enforce_eager` (or any name containing "eager") -- neither an enclosing `if`, an early
return earlier in the method, nor a guard under which its class calls the capturing
method. Typically the only gate is `torch.cuda.is_available()`, or there is none.

A guard on an attribute counts when the class assigns that attribute from enforce_eager
(`self.use_cuda_graph = not config.enforce_eager`, then `if self.use_cuda_graph:`), one
level deep. A capture in a wrapper class is also gated when every place another class
(or function) builds the wrapper runs under such a guard (`if enforce_eager: return`
before `self.wrapper = GraphWrapper(...)`): under `enforce_eager` the wrapper never exists.

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

## How to fix
Read `enforce_eager` from the engine config at construction and skip the capture (and
the graph-pool declaration) when it is set. The analyzer sees guards inside the capturing
class and around the places its holders build it (one level); if the gate sits further
away (a holder of the holder decides), suppress with a reason.

## Runtime verdict
`kvlint confirm` runs the owner's `enforce_eager` path. Confirmed when a capture happens
in that path.
)doc"};

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    std::optional<ConstructionIndex> constructions;
    for (const auto& file : project.files()) {
      for (const auto& capture : file.captures) {
        const facts::ClassRef owner = project.class_of(file, capture.owner_class);
        if (gated_on_eager(project, owner, capture.guards)) continue;
        if (owner) {
          if (!constructions) constructions = index_constructions(project);
          if (built_only_when_not_eager(project, owner, *constructions)) continue;
        }
        out.push_back(make_finding(capture));
      }
    }
  }

 private:
  struct Built {
    facts::ClassRef by;  // the constructing class; empty for a module-level function
    const facts::Construction* construction = nullptr;
  };
  using ConstructionIndex = std::unordered_map<const facts::ClassFact*, std::vector<Built>>;

  static ConstructionIndex index_constructions(const facts::Project& project) {
    ConstructionIndex index;
    for (const auto& file : project.files())
      for (const auto& c : file.constructions)
        if (facts::ClassRef target = project.find_class(c.target_class, &file))
          index[target.cls].push_back({project.class_of(file, c.owner_class), &c});
    return index;
  }

  static bool gated_on_eager(const facts::Project& project, facts::ClassRef owner,
                             const std::vector<facts::Guard>& guards) {
    return std::any_of(guards.begin(), guards.end(), [&](const facts::Guard& g) {
      return rules::guard_mentions(g, "eager") || reads_eager_through_attribute(project, owner, g);
    });
  }

  // The capturing class is built by others (a holder's `self.wrapper = Wrapper(...)`),
  // and every such construction runs under an enforce_eager gate: under
  // `enforce_eager` the class never exists, so neither does its capture. One level:
  // the constructing method's guards (caller guards within its class included).
  // Constructions inside the class itself (a factory classmethod) are not holders.
  static bool built_only_when_not_eager(const facts::Project& project, facts::ClassRef owner,
                                        const ConstructionIndex& index) {
    auto it = index.find(owner.cls);
    if (it == index.end()) return false;
    bool any = false;
    for (const Built& b : it->second) {
      if (b.by == owner) continue;
      if (!gated_on_eager(project, b.by, b.construction->guards)) return false;
      any = true;
    }
    return any;
  }

  // `if self.use_cuda_graph:` where the class sets `self.use_cuda_graph = not
  // config.enforce_eager`: the guard reads enforce_eager through the attribute.
  // One level only: the attribute's own assignments, not what they read in turn.
  static bool reads_eager_through_attribute(const facts::Project& project, facts::ClassRef owner,
                                            const facts::Guard& guard) {
    if (!owner) return false;
    for (const std::string& dotted : guard.self_attributes) {
      const std::string attribute = dotted.substr(0, dotted.find('.'));
      for (const facts::AttributeAssignment* a : project.attribute_assignments_of(owner, attribute))
        if (rules::mentions(a->value, "eager")) return true;
    }
    return false;
  }

  static Finding make_finding(const facts::CaptureSite& capture) {
    Finding f = kvlint::make_finding(kInfo, capture.loc, capture.owner_class);
    std::vector<const facts::Guard*> gates;
    for (const auto& g : capture.guards)
      if (rules::is_branching_guard(g)) gates.push_back(&g);
    std::string gated;
    if (gates.empty()) {
      gated = "runs unconditionally";
    } else {
      gated = "is gated only on ";
      for (std::size_t i = 0; i < gates.size(); ++i) {
        gated += (i == 0 ? "" : (i + 1 == gates.size() ? " and " : ", "));
        gated += fmt::format("{} (line {})", rules::describe_guard(*gates[i]), gates[i]->condition.loc.line);
        f.related.push_back(rules::related(gates[i]->condition.loc, "the only gate on the capture"));
      }
    }
    const std::string who =
        capture.owner_class.empty() ? std::string("Module-level code") : quoted_class(capture);
    f.message = fmt::format(
        "{} captures a CUDA graph with `{}` (line {}) that {}, never on `enforce_eager`: under "
        "`enforce_eager: true` the captured pool stays resident; skip the capture when `enforce_eager` is "
        "set",
        who, capture.written, capture.loc.line, gated);
    return f;
  }
  static std::string quoted_class(const facts::CaptureSite& capture) {
    return capture.method.empty() ? rules::quoted(capture.owner_class)
                                  : fmt::format("`{}.{}`", capture.owner_class, capture.method);
  }
};

}  // namespace

std::unique_ptr<Rule> make_kv303_capture_ignores_enforce_eager() {
  return std::make_unique<Check>();
}

}  // namespace kvlint
