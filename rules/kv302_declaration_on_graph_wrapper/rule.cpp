// KV302 declaration-on-graph-wrapper: the eager path allocates the cache, yet the only
// declaration lives on the CUDA-graph wrapper.
#include "rules/rule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "rules/common/eager_gate.hpp"
#include "rules/common/rule_support.hpp"
#include "rules/common/spelling.hpp"

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

A declaration of the class itself whose specs all depend on an attribute that holds a
graph wrapper (read directly, through `getattr(self, "_graph_wrapper", None)` into a
local, in a compound condition or a conditional expression; the wrapper built into it,
or handing itself over with `decoder._graph_wrapper = self`) is reported too, when the
wrapper is attached only where an `enforce_eager`-derived condition excludes it (in the
class, in a method a holder calls only when not eager, or a holder or two up) and the
class builds a cache on a path that does not read that attribute. Silent when every
cache the class builds sits behind the attribute (or inside the capture).

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
    // A class no declaration covers gives no finding: only its own declaration (checked by
    // check_wrapper_dependent) or its coverage can be on a wrapper.
    for (facts::ClassRef cls : project.covered_classes()) {
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
      if (check_wrapper_dependent(project, cls, out)) continue;

      // Own or inherited declarations, or a non-wrapper holder's, survive enforce_eager --
      // unless all they do is forward to a graph wrapper the class attaches later.
      auto covers = project.coverage(cls);
      if (covers.empty()) continue;
      const facts::OwnershipHop* attached = nullptr;
      bool only_wrappers = std::all_of(covers.begin(), covers.end(), [&](const facts::Cover& c) {
        if (c.how == facts::Cover::How::DeclaredByHolder || c.how == facts::Cover::How::ForwardedByHolder ||
            c.how == facts::Cover::How::DeclaredByBuiltFor)
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
  // Where a spec's guard reads a graph wrapper attribute: `self._graph_wrapper`, or a local
  // bound to `getattr(self, "_graph_wrapper", None)`.
  struct WrapperRead {
    std::string attribute;
    facts::ClassRef wrapper;
    const facts::Guard* guard = nullptr;
  };
  // A place that attaches the wrapper: `self.<attr> = Wrapper(...)`, or `obj.<attr> = self`.
  struct Attach {
    const facts::FileFacts* file = nullptr;
    std::string owner_class;
    std::string method;
    const facts::Guards* guards = nullptr;
    facts::Location loc;
  };

  // The attributes of `self` an expression reads, through the declaration's locals.
  static void self_attributes_read(const facts::Declaration& d, const facts::Expression& e,
                                   std::vector<std::string>& out, int depth = 0) {
    for (const std::string& name : e.names) {
      if (name.starts_with("self.")) {
        const std::string rest = name.substr(5);
        out.push_back(rest.substr(0, rest.find('.')));
        continue;
      }
      if (depth > 2) continue;
      const std::string head = name.substr(0, name.find('.'));
      for (const facts::LocalAssignment& a : d.local_assignments)
        if (a.name == head) self_attributes_read(d, a.value, out, depth + 1);
    }
  }

  static std::optional<WrapperRead> wrapper_read(const facts::Project& project, facts::ClassRef cls,
                                                 const facts::Declaration& d, const facts::Guards& guards) {
    for (const facts::Guard& g : guards) {
      if (!rules::is_branching_guard(g)) continue;
      std::vector<std::string> attributes;
      self_attributes_read(d, g.condition, attributes);
      for (const std::string& a : attributes) {
        const facts::ClassRef target = project.attribute_class(cls, a);
        if (target && !(target == cls) && rules::is_graph_wrapper(project, target))
          return WrapperRead{a, target, &g};
      }
    }
    return std::nullopt;
  }

  // Every spec depends on the wrapper attribute, and every forward goes to it or depends on it.
  static std::optional<WrapperRead> declaration_needs_wrapper(const facts::Project& project,
                                                              facts::ClassRef cls,
                                                              const facts::Declaration& d) {
    if (d.specs.empty()) return std::nullopt;
    std::optional<WrapperRead> first;
    for (const facts::SpecFact& spec : d.specs) {
      auto read = wrapper_read(project, cls, d, spec.guards);
      if (!read) return std::nullopt;
      if (!first) first = read;
    }
    for (const facts::Forward& fw : d.forwards) {
      if (fw.via_attribute == first->attribute) continue;
      if (!wrapper_read(project, cls, d, fw.guards)) return std::nullopt;
    }
    return first;
  }

  // Where the wrapper attribute gets its wrapper: hops in the class (or a base), and objects
  // that hand themselves over into it.
  static std::vector<Attach> attach_points(const facts::Project& project, facts::ClassRef cls,
                                           const WrapperRead& read) {
    std::vector<Attach> out;
    std::vector<facts::ClassRef> chain{cls};
    for (facts::ClassRef a : project.ancestors(cls)) chain.push_back(a);
    for (facts::ClassRef c : chain)
      for (const auto& h : c.file->hops) {
        if (h.owner_class != c.cls->name || h.attribute != read.attribute) continue;
        for (const auto& k : c.file->constructions)
          if (k.loc == h.loc) out.push_back({c.file, k.owner_class, k.method, &k.guards, k.loc});
      }
    static const facts::Guards kNone;
    for (const auto& [file, r] : project.reverse_assignments_of(read.attribute))
      if (project.class_of(*file, r->owner_class) == read.wrapper)
        out.push_back({file, r->owner_class, r->method, &kNone, r->loc});
    return out;
  }

  // A cache the class builds on a path that does not read the wrapper attribute, and that its
  // holders do not reach only with graphs on.
  static std::optional<std::pair<facts::Location, std::string>> allocation_without(
      const facts::Project& project, facts::ClassRef cls, const WrapperRead& read,
      const std::vector<Attach>& attaches) {
    const std::string& attribute = read.attribute;
    auto reads = [&](const facts::Guards& guards) {
      return std::any_of(guards.begin(), guards.end(), [&](const facts::Guard& g) {
        return std::any_of(g.self_attributes.begin(), g.self_attributes.end(), [&](const std::string& a) {
          return a == attribute || a.starts_with(attribute + ".");
        });
      });
    };
    for (const facts::CacheSite* s : project.cache_sites_of(cls))
      if (!s->inside_graph_capture && !s->caller_requested && !reads(s->guards) &&
          !state_handed_only_with_graphs(project, cls, read, attaches, s->method, s->guards))
        return std::make_pair(s->loc, rules::describe_construction(*s, "builds"));
    for (const facts::ImplicitCacheSite* s : project.implicit_caches_of(cls))
      if (!reads(s->guards) &&
          !state_handed_only_with_graphs(project, cls, read, attaches, s->method, s->guards))
        return std::make_pair(s->loc, fmt::format("builds the cache behind `{}(...)`", s->callee));
    return std::nullopt;
  }

  // The site runs only when a parameter is set (`caches` in `if caches is None: return ...`),
  // and every call from outside the class into the methods that reach it hands that parameter
  // over only with graphs on: the holder decodes statelessly unless graphs were enabled. Calls
  // from a graph wrapper count as graphs on; a holder none of whose calls is seen decides
  // nothing here.
  static bool state_handed_only_with_graphs(const facts::Project& project, facts::ClassRef cls,
                                            const WrapperRead& read, const std::vector<Attach>& attaches,
                                            const std::string& method, const facts::Guards& guards) {
    std::vector<std::string> state;
    for (const facts::Guard& g : guards)
      if (rules::is_branching_guard(g))
        for (const std::string& name : g.given)
          if (name.find('.') == std::string::npos &&
              std::find(state.begin(), state.end(), name) == state.end())
            state.push_back(name);
    if (state.empty() || method.empty()) return false;
    // The methods that reach the site, `self(...)` reaching forward.
    std::vector<std::string> chain = project.self_callers(cls, method);
    auto in_chain = [&](std::string_view m) {
      return std::find(chain.begin(), chain.end(), m) != chain.end();
    };
    for (std::size_t i = 0; i < chain.size(); ++i) {
      if (chain[i] != "forward" && chain[i] != "__call__") continue;
      for (const facts::CodeRef& code : project.methods_of(cls))
        for (const facts::CallFact& c : code.method->calls)
          if (c.callee == "self" && !in_chain(code.method->name))
            for (const std::string& m : project.self_callers(cls, code.method->name))
              if (!in_chain(m)) chain.push_back(m);
    }
    std::vector<facts::ClassRef> lineage{cls};
    for (facts::ClassRef a : project.ancestors(cls)) lineage.push_back(a);
    auto ours = [&](facts::ClassRef c) {
      return std::find(lineage.begin(), lineage.end(), c) != lineage.end();
    };
    rules::EagerGate gate(project);
    for (const std::string& parameter : state) {
      bool any = false, only_with_graphs = true;
      auto scan = [&](const facts::CodeRef& caller) {
        if (caller.cls && (ours(caller.cls) || rules::is_graph_wrapper(project, caller.cls))) return;
        for (const facts::CallFact& call : caller.method->calls) {
          if (call.passes.empty()) continue;
          for (const facts::CodeRef& target : project.resolve_call(caller, call.callee)) {
            if (!ours(target.cls) || !in_chain(target.method->name)) continue;
            any = true;
            const auto& params = target.method->parameters;
            const auto it = std::find(params.begin(), params.end(), parameter);
            if (it == params.end()) {  // the state comes from inside the class
              only_with_graphs = false;
              return;
            }
            const auto index = static_cast<uint32_t>(it - params.begin());
            for (const facts::CallPass& pass : call.passes) {
              const bool hands_state =
                  pass.unpacked || pass.positionals > index ||
                  std::find(pass.keywords.begin(), pass.keywords.end(), parameter) != pass.keywords.end();
              if (hands_state && !graphs_on(project, gate, caller, pass.guards, cls, read, attaches)) {
                only_with_graphs = false;
                return;
              }
            }
          }
        }
      };
      for (const facts::CodeRef& code : project.code_calling(chain))
        if (only_with_graphs) scan(code);
      if (any && only_with_graphs) return true;
    }
    return false;
  }

  // A holder's call runs only with graphs on: it runs only when not eager, or under a condition
  // that needs the wrapper (`self.decoder._graph_wrapper is not None`, a graph wrapper of the
  // holder's own, or a flag the class sets only where it attaches the wrapper).
  static bool graphs_on(const facts::Project& project, rules::EagerGate& gate, const facts::CodeRef& caller,
                        const facts::Guards& guards, facts::ClassRef cls, const WrapperRead& read,
                        const std::vector<Attach>& attaches) {
    const std::string owner = caller.cls ? caller.cls.cls->name : std::string();
    if (gate.judge(*caller.file, owner, caller.method->name, guards).state == rules::GateState::Gated)
      return true;
    if (!caller.cls) return false;
    for (const facts::Guard& g : guards) {
      if (!rules::is_branching_guard(g)) continue;
      for (const std::string& name : g.given) {
        if (!name.starts_with("self.")) continue;
        const std::string rest = name.substr(5);
        const auto dot = rest.find('.');
        const std::string held = rest.substr(0, dot);
        const facts::ClassRef target = project.attribute_class(caller.cls, held);
        if (dot == std::string::npos) {
          if (target && rules::is_graph_wrapper(project, target)) return true;
          continue;
        }
        if (!target) continue;
        if (!(target == cls)) {
          const std::vector<facts::ClassRef> bases = project.ancestors(target);
          if (std::find(bases.begin(), bases.end(), cls) == bases.end()) continue;
        }
        const std::string member = rest.substr(dot + 1, rest.find('.', dot + 1) - dot - 1);
        if (member == read.attribute) return true;
        const facts::ClassRef member_class = project.attribute_class(cls, member);
        if (member_class && rules::is_graph_wrapper(project, member_class)) return true;
        if (set_only_where_attached(project, cls, member, attaches)) return true;
      }
    }
    return false;
  }

  // `self._cudagraph_enabled = True` only in the methods that attach the wrapper; elsewhere
  // only falsy literals.
  static bool set_only_where_attached(const facts::Project& project, facts::ClassRef cls,
                                      const std::string& member, const std::vector<Attach>& attaches) {
    bool set = false;
    for (const facts::AttributeAssignment* a : project.attribute_assignments_of(cls, member)) {
      const facts::Expression& v = a->value;
      const bool falsy = v.literal == facts::LiteralKind::NoneValue ||
                         (v.literal == facts::LiteralKind::Bool && v.literal_value == "False");
      if (falsy) continue;
      const bool where_attached = std::any_of(attaches.begin(), attaches.end(), [&](const Attach& at) {
        return at.owner_class == a->owner_class && at.method == a->method;
      });
      if (!where_attached) return false;
      set = true;
    }
    return set;
  }

  // KV302 on a declaration of the class's own that reports only when the graph wrapper is
  // attached, attached only when not eager, while the class allocates without it.
  static bool check_wrapper_dependent(const facts::Project& project, facts::ClassRef cls,
                                      std::vector<Finding>& out) {
    const auto own = project.inherited_declarations(cls);
    if (own.empty() || own.front().how != facts::Cover::How::Own) return false;
    const facts::Declaration& d = *own.front().declaration;
    const auto read = declaration_needs_wrapper(project, cls, d);
    if (!read) return false;
    // Another declaration (not on a wrapper) may cover the eager cache.
    for (const facts::Cover& c : project.coverage(cls))
      if (c.declaration != &d && !rules::is_graph_wrapper(project, c.declarer)) return false;
    const std::vector<Attach> attaches = attach_points(project, cls, *read);
    if (attaches.empty()) return false;
    const auto eager = allocation_without(project, cls, *read, attaches);
    if (!eager) return false;
    rules::EagerGate gate(project);
    rules::GateVerdict verdict;
    for (const Attach& a : attaches) {
      verdict = gate.judge(*a.file, a.owner_class, a.method, *a.guards);
      if (verdict.state != rules::GateState::Gated) return false;
    }
    const Attach& attach = attaches.front();
    const rules::Spelling spelling = rules::Spelling::of(cls);
    Finding f = kvlint::make_finding(kInfo, d.loc, cls.cls->name);
    const std::string gate_text =
        verdict.eager.guard ? fmt::format("{} (line {}){}", rules::describe_guard(*verdict.eager.guard),
                                          verdict.eager.guard->condition.loc.line, verdict.eager.where)
                            : std::string("a gate on `enforce_eager`");
    f.message = fmt::format(
        "`{}` (line {}) returns its specs only when `{}` holds the CUDA-graph wrapper `{}` ({}, line {}), "
        "and "
        "the wrapper is attached (`{}`, line {}) only when not eager: {}; under `enforce_eager` there is no "
        "wrapper, so the declaration reports zero while `{}` {} on its eager path (line {}); declare the "
        "eager "
        "cache from state `{}` keeps without the wrapper",
        spelling.method(cls.cls->name, rules::declaration_name(project)), d.loc.line,
        spelling.member(read->attribute), read->wrapper.cls->name, rules::describe_guard(*read->guard),
        read->guard->condition.loc.line, spelling.method(attach.owner_class, attach.method), attach.loc.line,
        gate_text, cls.cls->name, eager->second, eager->first.line, cls.cls->name);
    f.related.push_back(rules::related(read->guard->condition.loc, "the specs depend on the wrapper here"));
    f.related.push_back(rules::related(attach.loc, "the wrapper is attached here"));
    if (verdict.eager.guard)
      f.related.push_back(rules::related(verdict.eager.guard->condition.loc, "the gate on enforce_eager"));
    f.related.push_back(
        rules::related(eager->first, fmt::format("`{}` allocates without the wrapper here", cls.cls->name)));
    out.push_back(std::move(f));
    return true;
  }

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
