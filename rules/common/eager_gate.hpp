// Whether code runs only when the deployment is not `enforce_eager`: the gate may sit on the
// code itself, where another class builds or enables the object, or one more level of holders
// up, and may read enforce_eager through attributes and parameters. KV303 asks it about a
// capture; KV302 about where a graph wrapper is attached.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzers/facts/project.hpp"

namespace kvlint::rules {

enum class GateState { Gated, NotGated, Unknown };

// A gate found on the way to the code.
struct FoundGate {
  const facts::Guard* guard = nullptr;
  std::string where;  // "" for the code's own guards, else " where `Holder.method` builds it (line N)"
};

struct GateVerdict {
  GateState state = GateState::Unknown;
  // NotGated: the gates found that are not derived from enforce_eager.
  std::vector<FoundGate> gates;
  std::string trigger;  // who builds or enables the object, for the message
  // Gated: the first enforce_eager-derived gate found, and where.
  FoundGate eager;
};

class EagerGate {
 public:
  explicit EagerGate(const facts::Project& project) : project_(project) {}

  // Code in `owner_class.method` (a module-level function when `owner_class` is empty) that
  // runs under `guards`. Gated: it runs only when not eager. NotGated: something in the tree
  // runs it without such a gate (or the engine does: a module's constructor and load_weights).
  // Unknown: what decides is outside the analysed tree.
  GateVerdict judge(const facts::FileFacts& file, std::string_view owner_class, std::string_view method,
                    const facts::Guards& guards);

 private:
  GateState constructions(facts::ClassRef cls, int level, GateVerdict& v);
  GateState invocations(facts::ClassRef cls, const std::vector<std::string>& entries, int level,
                        GateVerdict& v);
  GateState function_callers(facts::CodeRef function, GateVerdict& v);
  GateState calls_gated(const std::vector<facts::Invocation>& calls, int level, GateVerdict& v);
  bool holder_gated(facts::ClassRef holder, const std::string& method, int level, GateVerdict& above);
  // A public method of `cls` that builds an object itself, when nothing in the tree calls it:
  // not another object, not the class's own methods, not as a class method. Its caller (a
  // stage runner calling `enable_cudagraph()`) is outside the tree.
  bool called_from_outside_only(facts::ClassRef cls, const std::string& method) const;
  const facts::Guard* eager_guard(facts::CodeRef at, const facts::Guards& guards, int depth);
  bool eager_attribute(facts::ClassRef cls, std::string_view attribute, int depth);
  bool eager_parameter(facts::CodeRef at, std::string_view parameter, int depth);
  bool eager_expression(facts::CodeRef at, const facts::Expression& value, int depth);
  // Records the first enforce_eager gate found.
  void note_eager(const facts::Guard* guard, const std::string& where);

  const facts::Project& project_;
  FoundGate eager_;
};

}  // namespace kvlint::rules
