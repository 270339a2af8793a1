// KV303 capture-ignores-enforce-eager: graph capture not gated on enforce_eager, so the
// pool stays resident in eager deployments.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

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
a cache, followed through the methods, held modules and functions it calls in the analysed
tree (what KV103 is about) -- when nothing on the way to it is derived from
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
  `self.decoder.enable_cudagraph()`), and the same one more level of holders up.

When nothing in the analysed tree builds or enables the capturing object, the gate is
decided elsewhere and the rule stays silent -- except for a model class whose constructor
or `load_weights` captures: the engine always runs those. The message names the gates it
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

// How far the analyzer follows a gate away from the capture: the capturing class's
// builder or enabler, and one more level of holders (ming: the talker's flag reaches the
// generator, which builds the pool that builds the capturing executors).
constexpr int kHolderLevels = 2;
// Attributes and parameters read through each other: `self._use_graphs` <- parameter
// `use_graphs` <- the holder's `self._use_graphs` <- `not config.enforce_eager`.
constexpr int kDerivationDepth = 6;

enum class State { Gated, NotGated, Unknown };

// A gate found on the way to the capture that is not derived from enforce_eager.
struct FoundGate {
  const facts::Guard* guard = nullptr;
  std::string where;  // "" for the capture's own guards, else " where `Holder.method` builds it"
};

struct Verdict {
  State state = State::Unknown;
  std::vector<FoundGate> gates;
  std::string trigger;  // who builds or enables the capturing object, for the message
};

class Judge {
 public:
  explicit Judge(const facts::Project& project) : project_(project) {}

  Verdict capture(const facts::FileFacts& file, const facts::CaptureSite& capture) {
    Verdict v;
    const facts::ClassRef owner = project_.class_of(file, capture.owner_class);
    const facts::CodeRef at = project_.code_at(file, capture.owner_class, capture.method);
    if (eager_guards(at, capture.guards, 0)) return {State::Gated, {}, {}};
    add_gates(v.gates, capture.guards, "");
    if (!owner) {
      v.state = State::NotGated;
      return v;
    }
    const std::vector<std::string> entries = project_.self_callers(owner, capture.method);
    auto has_entry = [&](std::string_view name) {
      return std::find(entries.begin(), entries.end(), name) != entries.end();
    };
    const bool at_construction = has_entry("__init__");
    const State built = constructions(owner, 0, v);
    const State enabled = at_construction ? State::Unknown : invocations(owner, entries, 0, v);
    if (built == State::Gated || enabled == State::Gated) return {State::Gated, {}, {}};
    if (built == State::NotGated || enabled == State::NotGated) {
      v.state = State::NotGated;
      return v;
    }
    // Nothing in the tree builds or enables it: a model the engine builds runs its
    // constructor and load_weights unconditionally; anything else is decided elsewhere.
    const bool engine_runs_it =
        project_.is_module(owner) == facts::Tristate::Yes && (at_construction || has_entry("load_weights"));
    v.state = engine_runs_it ? State::NotGated : State::Unknown;
    return v;
  }

 private:
  // Every place another class or function builds `cls`: Gated when all run under an
  // enforce_eager-derived gate (there, or one level of holders up), NotGated when one
  // does not (its gates, and those found further up, go to `v`), Unknown when nothing in
  // the tree builds it.
  State constructions(facts::ClassRef cls, int level, Verdict& v) {
    bool any = false;
    for (const facts::Built& b : project_.constructions_of(cls)) {
      if (b.by == cls) continue;  // a factory inside the class is not a holder
      any = true;
      const facts::Construction& c = *b.construction;
      const facts::CodeRef at = project_.code_at(*b.file, c.owner_class, c.method);
      if (eager_guards(at, c.guards, 0)) continue;
      Verdict above;
      if (b.by && holder_gated(b.by, c.method, level, above)) continue;
      const rules::Spelling spelling = rules::Spelling::of(*b.file);
      const std::string holder = place(c.owner_class, c.method, spelling);
      const std::string what = c.factory.empty()
                                   ? fmt::format("builds `{}`", cls.cls->name)
                                   : fmt::format("calls `{}`", spelling.method(cls.cls->name, c.factory));
      add_gates(v.gates, c.guards, fmt::format(" where `{}` {} (line {})", holder, what, c.loc.line));
      v.gates.insert(v.gates.end(), above.gates.begin(), above.gates.end());
      if (v.trigger.empty()) v.trigger = fmt::format("`{}` {} (line {})", holder, what, c.loc.line);
      return State::NotGated;
    }
    return any ? State::Gated : State::Unknown;
  }

  // Every call from another object into one of `entries` (`self.decoder.enable_graphs()`).
  State invocations(facts::ClassRef cls, const std::vector<std::string>& entries, int level, Verdict& v) {
    bool any = false;
    for (const std::string& entry : entries) {
      for (const facts::Invocation& inv : project_.invocations_of(cls, entry)) {
        any = true;
        if (eager_guards(inv.caller, inv.call->guards, 0)) continue;
        Verdict above;
        if (inv.caller.cls && holder_gated(inv.caller.cls, inv.caller.method->name, level, above)) continue;
        const rules::Spelling spelling(inv.caller.file ? inv.caller.file->language : facts::Language::Python);
        const std::string caller = place(inv.caller.cls ? inv.caller.cls.cls->name : std::string(),
                                         inv.caller.method->name, spelling);
        const std::string what = fmt::format("`{}` calls `{}` (line {})", caller,
                                             spelling.code(inv.call->callee), inv.call->loc.line);
        add_gates(v.gates, inv.call->guards, " where " + what);
        v.gates.insert(v.gates.end(), above.gates.begin(), above.gates.end());
        if (v.trigger.empty()) v.trigger = what;
        return State::NotGated;
      }
    }
    return any ? State::Gated : State::Unknown;
  }

  // The holder itself exists, or runs the method that builds or enables the capturing
  // object, only when not eager: one more level up.
  bool holder_gated(facts::ClassRef holder, const std::string& method, int level, Verdict& above) {
    if (level + 1 >= kHolderLevels) return false;
    if (constructions(holder, level + 1, above) == State::Gated) return true;
    if (method == "__init__") return false;
    Verdict enabled;
    if (invocations(holder, project_.self_callers(holder, method), level + 1, enabled) == State::Gated)
      return true;
    above.gates.insert(above.gates.end(), enabled.gates.begin(), enabled.gates.end());
    return false;
  }

  bool eager_guards(facts::CodeRef at, const std::vector<facts::Guard>& guards, int depth) {
    return std::any_of(guards.begin(), guards.end(), [&](const facts::Guard& g) {
      if (!rules::is_branching_guard(g)) return false;
      if (rules::guard_mentions(g, "eager")) return true;
      for (const std::string& dotted : g.self_attributes)
        if (at.cls && eager_attribute(at.cls, dotted.substr(0, dotted.find('.')), depth)) return true;
      if (g.origin != facts::Guard::Origin::CallerGuard)
        for (const std::string& p : g.parameters)
          if (eager_parameter(at, p, depth)) return true;
      return false;
    });
  }

  // `self.use_graphs = not config.enforce_eager`, or set from a parameter its builders
  // fill from enforce_eager (`enabled=not enforce_eager`).
  bool eager_attribute(facts::ClassRef cls, std::string_view attribute, int depth) {
    if (depth > kDerivationDepth) return false;
    for (const facts::AttributeAssignment* a : project_.attribute_assignments_of(cls, attribute)) {
      const facts::FileFacts* file = file_of(cls, a);
      const facts::CodeRef at = file ? project_.code_at(*file, a->owner_class, a->method) : facts::CodeRef{};
      if (eager_expression(at.method ? at : facts::CodeRef{file, cls, nullptr}, a->value, depth + 1))
        return true;
    }
    return false;
  }

  bool eager_parameter(facts::CodeRef at, std::string_view parameter, int depth) {
    if (!at || !at.cls || depth > kDerivationDepth) return false;
    const auto& params = at.method->parameters;
    const auto it = std::find(params.begin(), params.end(), parameter);
    if (it == params.end()) return false;
    const auto index = static_cast<uint32_t>(it - params.begin());
    const bool is_init = at.method->name == "__init__";
    bool any = false;
    for (const facts::Built& b : project_.constructions_of(at.cls)) {
      const facts::Construction& c = *b.construction;
      if (is_init ? !c.factory.empty() : c.factory != at.method->name) continue;
      const facts::Argument* passed = nullptr;
      for (const auto& a : c.args)
        if (a.keyword == parameter || (a.keyword.empty() && a.position == index)) passed = &a;
      if (!passed) return false;  // a builder leaves it at its default
      const facts::CodeRef caller = project_.code_at(*b.file, c.owner_class, c.method);
      if (!eager_expression(caller.method ? caller : facts::CodeRef{b.file, b.by, nullptr}, passed->value,
                            depth + 1))
        return false;
      any = true;
    }
    return any;
  }

  bool eager_expression(facts::CodeRef at, const facts::Expression& value, int depth) {
    if (rules::mentions(value, "eager")) return true;
    for (const std::string& name : value.names) {
      if (name.starts_with("self.")) {
        const std::string rest = name.substr(5);
        if (at.cls && eager_attribute(at.cls, rest.substr(0, rest.find('.')), depth + 1)) return true;
      } else if (at.method && name.find('.') == std::string::npos && eager_parameter(at, name, depth + 1)) {
        return true;
      }
    }
    return false;
  }

  // The file of the class (`cls` or an ancestor) the assignment sits in.
  const facts::FileFacts* file_of(facts::ClassRef cls, const facts::AttributeAssignment* a) const {
    if (cls.cls->name == a->owner_class) return cls.file;
    for (facts::ClassRef base : project_.ancestors(cls))
      if (base.cls->name == a->owner_class) return base.file;
    return cls.file;
  }

  static void add_gates(std::vector<FoundGate>& out, const std::vector<facts::Guard>& guards,
                        const std::string& where) {
    for (const auto& g : guards)
      if (rules::is_branching_guard(g)) out.push_back({&g, where});
  }

  static std::string place(const std::string& owner, const std::string& method,
                           const rules::Spelling& spelling) {
    return owner.empty() ? method : spelling.method(owner, method);
  }

  const facts::Project& project_;
};

class Check final : public Rule {
 public:
  const RuleInfo& info() const override { return kInfo; }
  void check(const facts::Project& project, std::vector<Finding>& out) const override {
    Judge judge(project);
    for (const auto& file : project.files()) {
      for (const auto& capture : file.captures) {
        // Captures of code that holds no attention KV are not this protocol's concern.
        if (project.kv_reached_by(file, capture).empty()) continue;
        Verdict v = judge.capture(file, capture);
        if (v.state != State::NotGated) continue;
        out.push_back(make_finding(rules::Spelling::of(file), capture, v));
      }
    }
  }

 private:
  static Finding make_finding(const rules::Spelling& spelling, const facts::CaptureSite& capture,
                              const Verdict& v) {
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
    const std::string who =
        capture.owner_class.empty() ? std::string("Module-level code") : quoted_class(capture, spelling);
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
