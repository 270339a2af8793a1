// Guards: the conditions a fact sits under (if / else / loop / with / ternary / early return),
// kept as lazy references on a stack and materialized when a fact is emitted; caller guards.
#include "analyzers/python/walker.hpp"

namespace kvlint::python::detail {

void FileWalker::push_guard(Open& owner, Guard::Origin origin, bool negated, TSNode condition) {
  if (ts_node_is_null(condition)) return;
  Frame* f = function_frame();
  guards_.push_back({origin, negated, condition, f ? f->params_index : -1, function_depth_});
  ++owner.guards_pushed;
}

// Guards that apply here, innermost first: inside a function only the
// function's own (and enclosing functions') guards count.
std::vector<GuardRef> FileWalker::active_guard_refs(bool conditional_only) const {
  std::vector<GuardRef> refs;
  for (auto it = guards_.rbegin(); it != guards_.rend(); ++it) {
    if (function_depth_ > 0 && it->function_depth == 0) continue;
    if (conditional_only && !is_conditional_origin(it->origin)) continue;
    refs.push_back(*it);
  }
  return refs;
}

Guard FileWalker::materialize(const GuardRef& ref, std::optional<Guard::Origin> origin_override) {
  Guard g;
  g.origin = origin_override.value_or(ref.origin);
  g.negated = ref.negated;
  // Method calls on self name the method; the owner state they read is the object before it
  // (`self.cfg.get(...)` reads "cfg"). The callees come from the names' walk.
  std::vector<std::string> callees_written;
  g.condition = make_expr(ref.condition, &g.calls, &callees_written);
  const std::vector<std::string_view>* params =
      ref.params_index >= 0 ? &params_[static_cast<std::size_t>(ref.params_index)] : nullptr;
  for (const auto& name : g.condition.names) {
    if (starts_with(name, "self.")) {
      std::string attr = name.substr(5);
      const bool is_callee =
          std::find(callees_written.begin(), callees_written.end(), name) != callees_written.end();
      if (is_callee) {
        const auto dot = attr.rfind('.');
        if (dot != std::string::npos) attr.resize(dot);
      }
      if (!attr.empty() &&
          std::find(g.self_attributes.begin(), g.self_attributes.end(), attr) == g.self_attributes.end())
        g.self_attributes.push_back(std::move(attr));
      continue;
    }
    if (params) {
      const std::string_view head = std::string_view(name).substr(0, name.find('.'));
      if (std::find(params->begin(), params->end(), head) != params->end() &&
          std::find(g.parameters.begin(), g.parameters.end(), head) == g.parameters.end())
        g.parameters.emplace_back(head);
    }
  }
  if (!g.self_attributes.empty() || !g.parameters.empty())
    g.given = given_when(ref.condition, !ref.negated, params, 0);
  return g;
}

// A parameter or a `self.` attribute chain as written (`caches`, `self.decoder._graph_wrapper`),
// also read through `getattr(obj, "x", None)`; empty for anything else.
std::string FileWalker::given_operand(TSNode n, const Params* params) {
  n = unwrap_parens(n);
  if (sym(n) == Sym::Call) {
    TSNode fn = field(n, g_.f_function);
    if (sym(fn) != Sym::Identifier || text(fn) != "getattr") return {};
    std::string read = attribute_read_by_getattr(n);
    const std::string_view head = std::string_view(read).substr(0, read.find('.'));
    if (read.empty() ||
        (head != "self" && !(params && std::find(params->begin(), params->end(), head) != params->end())))
      return {};
    return read;
  }
  if (!is_dotted(n)) return {};
  std::string name = strip_spaces(text(n));
  const std::string_view head = std::string_view(name).substr(0, name.find('.'));
  if (head == "self") return name.size() > 5 ? name : std::string();
  if (params && std::find(params->begin(), params->end(), head) != params->end()) return name;
  return {};
}

// A parameter an expression reads through (`caches.get(...)`, `caches[k]`, `caches.x`): its
// evaluation fails unless the parameter is set.
std::string FileWalker::dereferenced_parameter(TSNode n, const Params* params) {
  n = unwrap_parens(n);
  TSNode object{};
  if (sym(n) == Sym::Call) {
    TSNode fn = field(n, g_.f_function);
    if (sym(fn) == Sym::Attribute) object = field(fn, g_.f_object);
  } else if (sym(n) == Sym::Attribute) {
    object = field(n, g_.f_object);
  } else if (sym(n) == Sym::Subscript) {
    object = field(n, g_.f_value);
  }
  object = unwrap_parens(object);
  if (ts_node_is_null(object) || sym(object) != Sym::Identifier || !params) return {};
  const std::string_view name = text(object);
  return std::find(params->begin(), params->end(), name) != params->end() ? std::string(name) : std::string();
}

std::vector<std::string> FileWalker::given_when(TSNode n, bool holds, const Params* params, int depth) {
  std::vector<std::string> out;
  n = unwrap_parens(n);
  if (ts_node_is_null(n) || depth > 8) return out;
  spend(1);
  auto add = [&](std::string name) {
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  };
  switch (sym(n)) {
    case Sym::NotOperator:
      return given_when(field(n, g_.f_argument), !holds, params, depth + 1);
    case Sym::BooleanOperator: {
      const bool is_and = text(field(n, g_.f_operator)) == "and";
      auto left = given_when(field(n, g_.f_left), holds, params, depth + 1);
      auto right = given_when(field(n, g_.f_right), holds, params, depth + 1);
      if (is_and == holds) {  // `a and b` holds, or `a or b` fails: both sides did
        for (auto& r : right) add(std::move(r));
        for (auto& l : left) add(std::move(l));
      } else {  // either side alone may have decided it
        for (auto& l : left)
          if (std::find(right.begin(), right.end(), l) != right.end()) add(std::move(l));
      }
      return out;
    }
    case Sym::ComparisonOperator: {
      std::vector<TSNode> operands;
      std::vector<std::string_view> operators;
      for (uint32_t i = 0, count = ts_node_child_count(n); i < count; ++i) {
        TSNode c = ts_node_child(n, i);
        if (ts_node_is_named(c)) {
          if (sym(c) != Sym::Comment) operands.push_back(c);
        } else {
          operators.push_back(ts_node_type(c));
        }
      }
      if (operands.size() != 2 || operators.size() != 1) return out;
      const std::string_view op = operators.front();
      for (TSNode operand : operands) add(dereferenced_parameter(operand, params));
      if (op == "in" || op == "not in") {
        TSNode container = unwrap_parens(operands[1]);
        if (sym(container) == Sym::Identifier) add(given_operand(container, params));
        return out;
      }
      const bool is_none_test = sym(unwrap_parens(operands[1])) == Sym::None;
      if (!is_none_test) return out;
      const bool equal = op == "is" || op == "==";
      const bool not_equal = op == "is not" || op == "!=";
      if ((equal && !holds) || (not_equal && holds)) add(given_operand(operands[0], params));
      return out;
    }
    default:
      break;
  }
  add(dereferenced_parameter(n, params));
  if (holds) add(given_operand(n, params));  // truthy
  return out;
}

void FileWalker::collect_call_texts(TSNode root, std::vector<std::string>& out) {
  std::vector<std::string> names;
  std::vector<TSNode> stack{root};
  std::size_t visited = 0;
  while (!stack.empty() && ++visited < kMaxNameWalkNodes) {
    spend(1);
    TSNode n = stack.back();
    stack.pop_back();
    if (sym(n) == Sym::Call) {
      TSNode fn = field(n, g_.f_function);
      if (!ts_node_is_null(fn) && is_dotted(fn)) out.push_back(strip_spaces(text(fn)));
    }
    if (sym(n) == Sym::String) continue;
    for_each_named_child(sub_, n, [&](TSNode child, TSFieldId) {
      stack.push_back(child);
      return true;
    });
  }
}

std::shared_ptr<const Guard> FileWalker::shared_guard(const GuardRef& ref,
                                                      std::optional<Guard::Origin> origin_override) {
  auto& shared = shared_guards_[{ref.condition.id, origin_override.value_or(ref.origin), ref.negated,
                                 ref.params_index, out_.imports.size()}];
  if (!shared) shared = std::make_shared<const Guard>(materialize(ref, origin_override));
  return shared;
}

facts::Guards FileWalker::current_guards() {
  facts::Guards out;
  for (const auto& ref : active_guard_refs()) out.push_back(shared_guard(ref));
  return out;
}

// Guards that a child opens by its position in the parent.
void FileWalker::apply_context_guards() {
  Open& child = open_.back();
  Open& parent = open_[open_.size() - 2];
  switch (parent.sym) {
    case Sym::IfStatement:
      if (child.field == g_.f_consequence) {
        push_guard(child, Guard::Origin::If, false, field(parent.node, g_.f_condition));
      } else if (child.sym == Sym::ElifClause || child.sym == Sym::ElseClause) {
        const bool is_else = child.sym == Sym::ElseClause;
        std::vector<TSNode> earlier;
        for_each_named_child(aux_, parent.node, [&](TSNode arm, TSFieldId fid) {
          if (ts_node_eq(arm, child.node)) return false;
          if (fid == g_.f_condition)
            earlier.push_back(arm);
          else if (sym(arm) == Sym::ElifClause)
            earlier.push_back(field(arm, g_.f_condition));
          return true;
        });
        for (TSNode cond : earlier)
          push_guard(child, is_else ? Guard::Origin::Else : Guard::Origin::If, true, cond);
      }
      break;
    case Sym::ElifClause:
      if (child.field == g_.f_consequence)
        push_guard(child, Guard::Origin::If, false, field(parent.node, g_.f_condition));
      break;
    case Sym::ForStatement:
      if (child.field == g_.f_body)
        push_guard(child, Guard::Origin::Loop, false, field(parent.node, g_.f_right));
      break;
    case Sym::WhileStatement:
      if (child.field == g_.f_body)
        push_guard(child, Guard::Origin::Loop, false, field(parent.node, g_.f_condition));
      break;
    case Sym::WithStatement:
      if (child.field == g_.f_body) {
        if (parent.graph_capture >= 0) {
          captures_open_.push_back(static_cast<std::size_t>(parent.graph_capture));
          child.pops_capture = true;
        } else {
          TSNode clause{};
          for_each_named_child(aux_, parent.node, [&](TSNode c, TSFieldId) {
            if (sym(c) != Sym::WithClause) return true;
            clause = c;
            return false;
          });
          push_guard(child, Guard::Origin::With, false, clause);
        }
      }
      break;
    case Sym::ConditionalExpression:
      if (child.sym != Sym::Comment && (child.named_index == 0 || child.named_index == 2)) {
        TSNode cond = named_child(parent.node, 1);
        push_guard(child, Guard::Origin::Ternary, child.named_index == 2, cond);
      }
      break;
    default:
      break;
  }
}

bool FileWalker::is_early_return(TSNode if_node) {
  if (!ts_node_is_null(field(if_node, g_.f_alternative))) return false;
  TSNode body = field(if_node, g_.f_consequence);
  if (ts_node_is_null(body)) return false;
  bool found = false;
  for_each_named_child(aux_, body, [&](TSNode stmt, TSFieldId) {
    found = found || sym(stmt) == Sym::ReturnStatement;
    return !found;
  });
  return found;
}

void FileWalker::on_self_call(TSNode call, std::string_view method) {
  Frame* f = innermost_frame();
  if (!f || f->is_class || f->class_state < 0) return;
  ClassState& cls = *classes_[static_cast<std::size_t>(f->class_state)];
  cls.self_call_nodes.emplace_back(method, call);
  if (method != f->method) {
    auto& info = cls.self_calls[method];
    if (!info.any_unguarded) {
      auto refs = active_guard_refs(true);
      if (refs.empty()) {
        info.any_unguarded = true;
        info.guard_sets.clear();
      } else {
        info.guard_sets.push_back(std::move(refs));
      }
    }
  }
  if (f->is_declaration && cls.active_declaration)
    cls.helper_calls.push_back({*cls.active_declaration, std::string(method), current_guards()});
  (void)call;
}

// Caller guards: a method called within its class only from guarded places.
void FileWalker::apply_caller_guards(const ClassState& cls) {
  for (const auto& ref : cls.sites) {
    if (ref.method.empty()) continue;
    auto it = cls.self_calls.find(ref.method);
    if (it == cls.self_calls.end() || it->second.any_unguarded || it->second.guard_sets.empty()) continue;
    facts::Guards extra;
    for (const auto& set : it->second.guard_sets)
      for (const auto& gref : set) {
        std::shared_ptr<const Guard> g = shared_guard(gref, Guard::Origin::CallerGuard);
        const bool dup = std::any_of(extra.begin(), extra.end(), [&](const Guard& e) {
          return e.negated == g->negated && e.condition.text == g->condition.text;
        });
        if (!dup) extra.push_back(std::move(g));
      }
    facts::Guards* target = nullptr;
    switch (ref.kind) {
      case ClassState::SiteRef::Kind::Cache:
        target = &out_.cache_sites[ref.index].guards;
        break;
      case ClassState::SiteRef::Kind::Implicit:
        target = &out_.implicit_caches[ref.index].guards;
        break;
      case ClassState::SiteRef::Kind::Capture:
        target = &out_.captures[ref.index].guards;
        break;
      case ClassState::SiteRef::Kind::Construction:
        target = &out_.constructions[ref.index].guards;
        break;
    }
    target->append(extra);
  }
}

}  // namespace kvlint::python::detail
