#include "rules/common/eager_gate.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "rules/common/rule_support.hpp"
#include "rules/common/spelling.hpp"

namespace kvlint::rules {
namespace {

// How far the analyzer follows a gate away from the code: the class's builder or enabler,
// and one more level of holders (ming: the talker's flag reaches the generator, which builds
// the pool that builds the capturing executors).
constexpr int kHolderLevels = 2;
// Attributes and parameters read through each other: `self._use_graphs` <- parameter
// `use_graphs` <- the holder's `self._use_graphs` <- `not config.enforce_eager`.
constexpr int kDerivationDepth = 6;

void add_gates(std::vector<FoundGate>& out, const facts::Guards& guards, const std::string& where) {
  for (const auto& g : guards)
    if (is_branching_guard(g)) out.push_back({&g, where});
}

std::string place(const std::string& owner, const std::string& method, const Spelling& spelling) {
  return owner.empty() ? method : spelling.method(owner, method);
}

// Methods the engine or the class's own construction runs.
bool runs_by_itself(std::string_view method) {
  return method == "__init__" || method == "forward" || method == "__call__" || method == "load_weights";
}

}  // namespace

GateVerdict EagerGate::judge(const facts::FileFacts& file, std::string_view owner_class,
                             std::string_view method, const facts::Guards& guards) {
  eager_ = {};
  GateVerdict v;
  const facts::ClassRef owner = project_.class_of(file, owner_class);
  const facts::CodeRef at = project_.code_at(file, owner_class, method);
  auto gated = [&]() {
    GateVerdict g;
    g.state = GateState::Gated;
    g.eager = eager_;
    return g;
  };
  if (const facts::Guard* g = eager_guard(at, guards, 0)) {
    note_eager(g, "");
    return gated();
  }
  add_gates(v.gates, guards, "");
  if (!owner) {
    // A module-level function: what its callers in the tree do.
    if (at && function_callers(at, v) == GateState::Gated) return gated();
    v.state = GateState::NotGated;
    return v;
  }
  const std::vector<std::string> entries = project_.self_callers(owner, method);
  auto has_entry = [&](std::string_view name) {
    return std::find(entries.begin(), entries.end(), name) != entries.end();
  };
  const bool at_construction = has_entry("__init__");
  const GateState built = constructions(owner, 0, v);
  const GateState enabled = at_construction ? GateState::Unknown : invocations(owner, entries, 0, v);
  if (built == GateState::Gated || enabled == GateState::Gated) return gated();
  if (built == GateState::NotGated || enabled == GateState::NotGated) {
    v.state = GateState::NotGated;
    return v;
  }
  // Nothing in the tree builds or enables it: a model the engine builds runs its
  // constructor and load_weights unconditionally; anything else is decided elsewhere.
  const bool engine_runs_it =
      project_.is_module(owner) == facts::Tristate::Yes && (at_construction || has_entry("load_weights"));
  v.state = engine_runs_it ? GateState::NotGated : GateState::Unknown;
  return v;
}

// Every place another class or function builds `cls`: Gated when all run under an
// enforce_eager-derived gate (there, or one level of holders up), NotGated when one
// does not (its gates, and those found further up, go to `v`), Unknown when nothing in
// the tree builds it, or only methods that nothing in the tree calls do.
GateState EagerGate::constructions(facts::ClassRef cls, int level, GateVerdict& v) {
  bool any = false, outside = false;
  for (const facts::Built& b : project_.constructions_of(cls)) {
    if (b.by == cls) continue;  // a factory inside the class is not a holder
    const facts::Construction& c = *b.construction;
    any = true;
    const facts::CodeRef at = project_.code_at(*b.file, c.owner_class, c.method);
    const Spelling spelling = Spelling::of(*b.file);
    const std::string holder = place(c.owner_class, c.method, spelling);
    const std::string what = c.factory.empty()
                                 ? fmt::format("builds `{}`", cls.cls->name)
                                 : fmt::format("calls `{}`", spelling.method(cls.cls->name, c.factory));
    if (const facts::Guard* g = eager_guard(at, c.guards, 0)) {
      note_eager(g, fmt::format(" where `{}` {} (line {})", holder, what, c.loc.line));
      continue;
    }
    // Built, ungated, in a public method nothing in the tree calls: decided outside the tree.
    if (b.by && called_from_outside_only(b.by, c.method)) {
      outside = true;
      continue;
    }
    GateVerdict above;
    if (b.by && holder_gated(b.by, c.method, level, above)) continue;
    add_gates(v.gates, c.guards, fmt::format(" where `{}` {} (line {})", holder, what, c.loc.line));
    v.gates.insert(v.gates.end(), above.gates.begin(), above.gates.end());
    if (v.trigger.empty()) v.trigger = fmt::format("`{}` {} (line {})", holder, what, c.loc.line);
    return GateState::NotGated;
  }
  return any && !outside ? GateState::Gated : GateState::Unknown;
}

// Every call from another object into one of `entries` (`self.decoder.enable_graphs()`).
GateState EagerGate::invocations(facts::ClassRef cls, const std::vector<std::string>& entries, int level,
                                 GateVerdict& v) {
  std::vector<facts::Invocation> calls;
  for (const std::string& entry : entries)
    for (const facts::Invocation& inv : project_.invocations_of(cls, entry)) calls.push_back(inv);
  return calls_gated(calls, level, v);
}

// The calls of a module-level function (`self.graphs[bs] = capture_step(self, bs)`).
GateState EagerGate::function_callers(facts::CodeRef function, GateVerdict& v) {
  return calls_gated(project_.function_callers(function), 0, v);
}

// Gated when every call runs under an enforce_eager-derived gate (there, or one level of
// holders up); NotGated at the first that does not; Unknown when there are none.
GateState EagerGate::calls_gated(const std::vector<facts::Invocation>& calls, int level, GateVerdict& v) {
  for (const facts::Invocation& inv : calls) {
    const Spelling spelling(inv.caller.file ? inv.caller.file->language : facts::Language::Python);
    const std::string caller =
        place(inv.caller.cls ? inv.caller.cls.cls->name : std::string(), inv.caller.method->name, spelling);
    const std::string what =
        fmt::format("`{}` calls `{}` (line {})", caller, spelling.code(inv.call->callee), inv.call->loc.line);
    if (const facts::Guard* g = eager_guard(inv.caller, inv.call->guards, 0)) {
      note_eager(g, " where " + what);
      continue;
    }
    GateVerdict above;
    if (inv.caller.cls && holder_gated(inv.caller.cls, inv.caller.method->name, level, above)) continue;
    add_gates(v.gates, inv.call->guards, " where " + what);
    v.gates.insert(v.gates.end(), above.gates.begin(), above.gates.end());
    if (v.trigger.empty()) v.trigger = what;
    return GateState::NotGated;
  }
  return calls.empty() ? GateState::Unknown : GateState::Gated;
}

// The holder itself exists, or runs the method that builds or enables the object, only
// when not eager: one more level up.
bool EagerGate::holder_gated(facts::ClassRef holder, const std::string& method, int level,
                             GateVerdict& above) {
  if (level + 1 >= kHolderLevels) return false;
  if (constructions(holder, level + 1, above) == GateState::Gated) return true;
  if (method == "__init__") return false;
  GateVerdict enabled;
  if (invocations(holder, project_.self_callers(holder, method), level + 1, enabled) == GateState::Gated)
    return true;
  above.gates.insert(above.gates.end(), enabled.gates.begin(), enabled.gates.end());
  return false;
}

bool EagerGate::called_from_outside_only(facts::ClassRef cls, const std::string& method) const {
  // Only a public method that builds it itself: one reached from a public hook through private
  // helpers (`preprocess` -> `_init_session`) is the model's own step, which the engine runs.
  if (runs_by_itself(method) || method.starts_with('_')) return false;
  if (project_.self_callers(cls, method).size() != 1 || !project_.invocations_of(cls, method).empty())
    return false;
  for (const facts::Built& b : project_.constructions_of(cls))
    if (b.construction->factory == method) return false;
  return true;
}

const facts::Guard* EagerGate::eager_guard(facts::CodeRef at, const facts::Guards& guards, int depth) {
  for (const facts::Guard& g : guards) {
    if (!is_branching_guard(g)) continue;
    if (guard_mentions(g, "eager")) return &g;
    for (const std::string& dotted : g.self_attributes)
      if (at.cls && eager_attribute(at.cls, dotted.substr(0, dotted.find('.')), depth)) return &g;
    if (g.origin != facts::Guard::Origin::CallerGuard)
      for (const std::string& p : g.parameters)
        if (eager_parameter(at, p, depth)) return &g;
  }
  return nullptr;
}

// `self.use_graphs = not config.enforce_eager`, or set from a parameter its builders
// fill from enforce_eager (`enabled=not enforce_eager`).
bool EagerGate::eager_attribute(facts::ClassRef cls, std::string_view attribute, int depth) {
  if (depth > kDerivationDepth) return false;
  for (const facts::AttributeAssignment* a : project_.attribute_assignments_of(cls, attribute)) {
    // The file of the class (`cls` or an ancestor) the assignment sits in.
    const facts::FileFacts* file = cls.file;
    if (cls.cls->name != a->owner_class)
      for (facts::ClassRef base : project_.ancestors(cls))
        if (base.cls->name == a->owner_class) {
          file = base.file;
          break;
        }
    const facts::CodeRef at = project_.code_at(*file, a->owner_class, a->method);
    if (eager_expression(at.method ? at : facts::CodeRef{file, cls, nullptr}, a->value, depth + 1))
      return true;
  }
  return false;
}

bool EagerGate::eager_parameter(facts::CodeRef at, std::string_view parameter, int depth) {
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

bool EagerGate::eager_expression(facts::CodeRef at, const facts::Expression& value, int depth) {
  if (mentions(value, "eager")) return true;
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

void EagerGate::note_eager(const facts::Guard* guard, const std::string& where) {
  if (!eager_.guard) eager_ = {guard, where};
}

}  // namespace kvlint::rules
