// `model_local_kv_specs()` declarations and their specs (fields, rows driver, helpers), batch
// evidence, and protocol uses (collectors, capacity_source branches, scope-derived rows).
#include "analyzers/python/walker.hpp"

namespace kvlint::python::detail {

void FileWalker::finish_collector(const Frame& f) {
  const std::string_view body = text(f.node);
  bool mentions = contains(body, vocab_.declaration_method) || contains(body, vocab_.collector);
  for (const auto& ctor : vocab_.spec_constructors) mentions = mentions || contains(body, ctor);
  if (!mentions) return;
  facts::ProtocolUse use;
  use.kind = facts::ProtocolUse::Kind::Collector;
  use.owner_class = f.class_state >= 0 ? classes_[static_cast<std::size_t>(f.class_state)]->name : "";
  use.function = std::string(f.name);
  use.loc = loc(f.node);
  use.expression = make_expr(f.module_walk_call);
  use.calls_unwrap = contains_word(body, vocab_.unwrap) && contains(body, vocab_.unwrap + "(");
  use.reads_runnable = contains(body, "." + vocab_.runnable) ||
                       contains(body, "\"" + vocab_.runnable + "\"") ||
                       contains(body, "'" + vocab_.runnable + "'");
  use.walks_named_modules = f.walks_named_modules;
  out_.protocol_uses.push_back(std::move(use));
}

void FileWalker::on_spec_call(TSNode call, const std::string& ctor) {
  Frame* f = innermost_frame();
  if (!f || f->is_class || f->class_state < 0) return;
  ClassState& cls = *classes_[static_cast<std::size_t>(f->class_state)];
  facts::SpecFact spec;
  spec.loc = loc(call);
  spec.constructor = ctor;
  const bool takes_config = !vocab_.spec_constructors.empty() && ctor == vocab_.spec_constructors.front();
  for (auto& arg : args_of(call)) {
    if (arg.keyword.empty()) {
      if (takes_config && arg.position == 0) spec.config = std::move(arg.value);
      continue;
    }
    if (arg.keyword == "*" || arg.keyword == "**") {
      spec.unpacked.push_back(std::move(arg.value));
      continue;
    }
    for (const auto& [written, canonical] : vocab_.field_aliases)
      if (arg.keyword == written) arg.keyword = canonical;
    spec.fields.push_back(std::move(arg));
  }
  spec.rows = rows_driver_of(call, spec);
  spec.guards = current_guards();
  if (f->is_declaration && cls.active_declaration) {
    cls.declarations[*cls.active_declaration].specs.push_back(std::move(spec));
  } else {
    cls.helper_specs[std::string(f->method)].push_back(std::move(spec));
  }
}

facts::RowsDriver FileWalker::rows_driver_of(TSNode call, facts::SpecFact& spec) {
  TSNode args = field(call, g_.f_arguments);
  TSNode rows{};
  if (!ts_node_is_null(args) && sym(args) == Sym::ArgumentList)
    for_each_named_child(aux_, args, [&](TSNode a, TSFieldId) {
      if (sym(a) == Sym::KeywordArgument && text(field(a, g_.f_name)) == "rows") rows = field(a, g_.f_value);
      return ts_node_is_null(rows);
    });
  rows = unwrap_parens(rows);
  if (ts_node_is_null(rows)) return facts::RowsDriver::Absent;
  if (sym(rows) == Sym::Attribute && is_dotted(rows)) {
    const std::string_view member = text(field(rows, g_.f_attribute));
    const std::string_view owner = resolved_simple(strip_view(field(rows, g_.f_object)));
    if (owner == vocab_.row_driver && member == vocab_.row_fixed) return facts::RowsDriver::Fixed;
    if (owner == vocab_.row_driver && member == vocab_.row_max_num_seqs) return facts::RowsDriver::MaxNumSeqs;
    return facts::RowsDriver::Other;
  }
  if (sym(rows) == Sym::Call && is_dotted(field(rows, g_.f_function))) {
    const std::string_view callee = resolved_simple(strip_view(field(rows, g_.f_function)));
    if (callee == vocab_.max_num_seqs_call) return facts::RowsDriver::MaxNumSeqs;
    if (callee == vocab_.fixed_call) {
      // Earlier revision: Fixed(n, because="...") carries rows_fixed and rows_reason.
      for (auto& arg : args_of(rows)) {
        std::string canonical;
        if (arg.keyword.empty() && arg.position == 0)
          canonical = "rows_fixed";
        else if (arg.keyword == vocab_.fixed_reason_keyword || (arg.keyword.empty() && arg.position == 1))
          canonical = "rows_reason";
        if (canonical.empty() || spec.field(canonical)) continue;
        arg.keyword = canonical;
        spec.fields.push_back(std::move(arg));
      }
      return facts::RowsDriver::Fixed;
    }
  }
  return facts::RowsDriver::Other;
}

void FileWalker::on_return(TSNode node) {
  Frame* f = innermost_frame();
  if (!f || f->is_class || !f->is_declaration || f->method != f->name || f->class_state < 0) return;
  ClassState& cls = *classes_[static_cast<std::size_t>(f->class_state)];
  if (!cls.active_declaration) return;
  TSNode value = unwrap_parens(named_child(node, 0));
  if (ts_node_is_null(value)) return;
  bool empty = false;
  const Sym s = sym(value);
  if ((s == Sym::List || s == Sym::Tuple) && ts_node_named_child_count(value) == 0) empty = true;
  if (s == Sym::Call) {
    const std::string_view callee = text(field(value, g_.f_function));
    TSNode args = field(value, g_.f_arguments);
    empty = (callee == "list" || callee == "tuple") && !ts_node_is_null(args) &&
            ts_node_named_child_count(args) == 0;
  }
  if (text(value) == "()") empty = true;
  if (empty) cls.declarations[*cls.active_declaration].returns_empty_somewhere = true;
}

void FileWalker::add_evidence(facts::BatchEvidence::Kind kind, TSNode node) {
  facts::BatchEvidence e;
  e.kind = kind;
  e.owner_class = owner_name();
  e.method = method_name();
  e.loc = loc(node);
  e.expression = make_expr(node);
  out_.batch_evidence.push_back(std::move(e));
}

void FileWalker::on_subscript(TSNode node) {
  if (has_scope_) on_scope_candidate(node);
  if (!function_frame()) return;
  TSNode value = field(node, g_.f_value);
  TSNode index = field(node, g_.f_subscript);
  if (ts_node_is_null(value) || ts_node_is_null(index) || sym(value) != Sym::Identifier) return;
  if (sym(index) != Sym::Integer || text(index) != "0") return;
  if (ts_node_named_child_count(node) != 2) return;  // x[0, 1] is not a first element
  if (is_param(text(value))) add_evidence(facts::BatchEvidence::Kind::TakesFirstElement, node);
}

// `x == 1` / `x != 1` where x looks like a batch size.
bool FileWalker::is_batch_one_comparison(TSNode cond, std::string_view op_wanted) {
  cond = unwrap_parens(cond);
  if (ts_node_is_null(cond) || sym(cond) != Sym::ComparisonOperator || ts_node_named_child_count(cond) != 2)
    return false;
  TSNode a = named_child(cond, 0), b = named_child(cond, 1);
  // The operator token sits between the operands.
  const uint32_t op_start = ts_node_end_byte(a), op_end = ts_node_start_byte(b);
  if (op_end <= op_start || trim(src_.substr(op_start, op_end - op_start)) != op_wanted) return false;
  TSNode other;
  if (sym(b) == Sym::Integer && text(b) == "1")
    other = a;
  else if (sym(a) == Sym::Integer && text(a) == "1")
    other = b;
  else
    return false;
  const std::string t = lower(strip_spaces(text(other)));
  return contains(t, "shape[0]") || contains(t, "size(0)") || contains(t, "batch") || contains(t, "bsz") ||
         contains(t, "len(");
}

void FileWalker::on_assert(TSNode node) {
  if (!function_frame()) return;
  TSNode cond = named_child(node, 0);
  if (is_batch_one_comparison(cond, "==")) add_evidence(facts::BatchEvidence::Kind::AssertsBatchOne, node);
}

void FileWalker::on_if(TSNode node) {
  if (has_scope_) on_scope_candidate(node);
  if (!function_frame()) return;
  TSNode cond = field(node, g_.f_condition);
  if (!is_batch_one_comparison(cond, "!=")) return;
  TSNode body = field(node, g_.f_consequence);
  bool raises = false;
  if (!ts_node_is_null(body))
    for_each_named_child(aux_, body, [&](TSNode s, TSFieldId) {
      raises = raises || sym(s) == Sym::RaiseStatement;
      return !raises;
    });
  if (raises) add_evidence(facts::BatchEvidence::Kind::AssertsBatchOne, node);
}

void FileWalker::on_for(TSNode node) {
  if (!function_frame()) return;
  TSNode iter = unwrap_parens(field(node, g_.f_right));
  if (ts_node_is_null(iter)) return;
  std::string_view name;
  if (sym(iter) == Sym::Identifier && is_param(text(iter)))
    name = text(iter);
  else if (is_self_attribute(iter))
    name = text(field(iter, g_.f_attribute));
  if (name.empty()) return;
  const std::string l = lower(name);
  if (contains(l, "req") || contains(l, "batch") || contains(l, "seq") || contains(l, "session"))
    add_evidence(facts::BatchEvidence::Kind::IteratesRequests, iter);
}

void FileWalker::add_protocol_use(facts::ProtocolUse::Kind kind, TSNode at, TSNode expression) {
  facts::ProtocolUse use;
  use.kind = kind;
  use.owner_class = owner_name();
  if (Frame* f = function_frame()) use.function = std::string(f->name);
  use.loc = loc(at);
  use.expression = make_expr(expression);
  out_.protocol_uses.push_back(std::move(use));
}

void FileWalker::on_attribute(TSNode node) {
  if (text(field(node, g_.f_attribute)) != "capacity_source") return;
  for (std::size_t i = open_.size() - 1; i > 0; --i) {
    const Open& parent = open_[i - 1];
    const Open& child = open_[i];
    switch (parent.sym) {
      case Sym::ComparisonOperator:
      case Sym::AssertStatement:
        add_protocol_use(facts::ProtocolUse::Kind::CapacitySourceBranch, node, parent.node);
        return;
      case Sym::IfStatement:
      case Sym::ElifClause:
      case Sym::WhileStatement:
        if (child.field == g_.f_condition)
          add_protocol_use(facts::ProtocolUse::Kind::CapacitySourceBranch, node, child.node);
        return;
      case Sym::MatchStatement:
        if (child.field == g_.f_subject)
          add_protocol_use(facts::ProtocolUse::Kind::CapacitySourceBranch, node, child.node);
        return;
      case Sym::ConditionalExpression:
        if (child.named_index == 1) {
          add_protocol_use(facts::ProtocolUse::Kind::CapacitySourceBranch, node, child.node);
          return;
        }
        break;
      case Sym::KeywordArgument:
      case Sym::ExpressionStatement:
      case Sym::Block:
      case Sym::Module:
      case Sym::Assignment:
      case Sym::ReturnStatement:
      case Sym::FunctionDef:
      case Sym::ClassDef:
      case Sym::Lambda:
      case Sym::Pair:
      case Sym::ListComprehension:
        return;
      default:
        break;
    }
  }
}

bool FileWalker::reads_scope(TSNode n) const {
  const std::string_view t = text(n);
  spend(t.size());
  for (auto pos = t.find(".scope"); pos != std::string_view::npos; pos = t.find(".scope", pos + 1))
    if (pos + 6 >= t.size() || !is_ident_char(t[pos + 6])) return true;
  return contains_word(t, vocab_.scope_enum) || compares_scope(n);
}

// A comparison of a name that says scope (`scope`, `spec_scope`, `kv.scope`) with an enum
// member (`Lifetime.REQUEST`) or a string (`"model"`), outside the protocol's own names.
bool FileWalker::compares_scope(TSNode n) const {
  std::vector<TSNode> stack{n};
  for (std::size_t visited = 0; !stack.empty() && ++visited < 256;) {
    TSNode c = stack.back();
    stack.pop_back();
    if (sym(c) == Sym::ComparisonOperator) {
      bool scope_side = false, value_side = false;
      each_named_child(c, [&](TSNode child) {
        TSNode side = unwrap_parens(child);
        const Sym ss = sym(side);
        const std::string_view last = is_dotted(side) ? last_component(side) : std::string_view{};
        if (!last.empty() && ends_with(lower(last), "scope")) scope_side = true;
        const bool enum_member = ss == Sym::Attribute && is_dotted(side) && !last.empty() &&
                                 std::all_of(last.begin(), last.end(), [](char ch) {
                                   return (ch >= 'A' && ch <= 'Z') || ch == '_' || (ch >= '0' && ch <= '9');
                                 });
        if (ss == Sym::String || enum_member || ss == Sym::Tuple) value_side = true;
        return true;
      });
      if (scope_side && value_side) return true;
    }
    each_named_child(c, [&](TSNode child) {
      stack.push_back(child);
      return true;
    });
  }
  return false;
}

bool FileWalker::mentions_multiplicity(TSNode n) const {
  if (ts_node_is_null(n)) return false;
  spend(text(n).size());
  const std::string t = lower(text(n));
  if (contains(t, "rows") || contains(t, "num_seqs") || contains(t, lower(vocab_.row_driver))) return true;
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t[i] == '*' && (i == 0 || t[i - 1] != '*') && (i + 1 == t.size() || t[i + 1] != '*')) return true;
  return false;
}

// The expression at open_.back() is the value of `rows=` / `rows_fixed=` / `rows = ...`.
bool FileWalker::in_rows_context() const {
  for (std::size_t i = open_.size() - 1; i > 0; --i) {
    const Open& parent = open_[i - 1];
    if (parent.sym == Sym::ParenthesizedExpression) continue;
    if (parent.sym == Sym::KeywordArgument || parent.sym == Sym::Assignment) {
      TSNode name = field(parent.node, parent.sym == Sym::KeywordArgument ? g_.f_name : g_.f_left);
      const std::string t = lower(text(name));
      if (contains(t, "rows") || contains(t, "num_seqs")) return true;
      for (const auto& [written, canonical] : vocab_.field_aliases)
        if (text(name) == written) return true;
    }
    return false;
  }
  return false;
}

void FileWalker::on_scope_candidate(TSNode node) {
  if (ts_node_start_byte(node) < last_scope_use_end_) return;  // inside one already reported
  bool hit = false;
  switch (sym(node)) {
    case Sym::ConditionalExpression: {
      TSNode cond = named_child(node, 1);
      hit = !ts_node_is_null(cond) && reads_scope(cond) &&
            (mentions_multiplicity(named_child(node, 0)) || mentions_multiplicity(named_child(node, 2)) ||
             in_rows_context());
      break;
    }
    case Sym::IfStatement: {
      TSNode cond = field(node, g_.f_condition);
      hit =
          !ts_node_is_null(cond) && reads_scope(cond) && mentions_multiplicity(field(node, g_.f_consequence));
      break;
    }
    case Sym::Subscript: {
      TSNode index = field(node, g_.f_subscript);
      hit = !ts_node_is_null(index) && reads_scope(index) &&
            (mentions_multiplicity(field(node, g_.f_value)) || in_rows_context());
      break;
    }
    case Sym::BinaryOperator: {
      const std::string_view op = text(field(node, g_.f_operator));
      hit = (op == "*" || op == "//" || op == "/") &&
            (reads_scope(field(node, g_.f_left)) || reads_scope(field(node, g_.f_right)));
      break;
    }
    case Sym::GeneratorExpression:
    case Sym::ListComprehension: {
      // `sum(s.bytes_per_row * max_num_seqs for s in specs if s.scope != "model")`
      bool filters_on_scope = false;
      each_named_child(node, [&](TSNode c) {
        if (sym(c) == Sym::IfClause && reads_scope(c)) filters_on_scope = true;
        return true;
      });
      hit = filters_on_scope && mentions_multiplicity(field(node, g_.f_body));
      break;
    }
    default:
      break;
  }
  if (!hit) return;
  TSNode shown = sym(node) == Sym::IfStatement ? field(node, g_.f_condition) : node;
  add_protocol_use(facts::ProtocolUse::Kind::ScopeDerivedRows, node, shown);
  last_scope_use_end_ = ts_node_end_byte(node);
}

// Declarations gather specs built by helpers they call (one level).
void FileWalker::finish_class_declarations(ClassState& cls) {
  for (const auto& call : cls.helper_calls) {
    facts::Declaration& d = cls.declarations[call.declaration];
    if (auto it = cls.helper_specs.find(call.helper); it != cls.helper_specs.end())
      for (auto spec : it->second) {
        spec.guards.append(call.guards);
        d.specs.push_back(std::move(spec));
      }
    if (auto it = cls.helper_forwards.find(call.helper); it != cls.helper_forwards.end())
      for (auto fw : it->second) {
        fw.guards.append(call.guards);
        d.forwards.push_back(std::move(fw));
      }
  }
  for (auto& d : cls.declarations) out_.declarations.push_back(std::move(d));
}

// `.named_modules()` / `.modules()` in a function: it may be a collector of declarations,
// decided when the function closes (finish_collector).
void FileWalker::note_module_walk(Frame& func, TSNode call, std::string_view simple) {
  if (!func.has_module_walk) func.module_walk_call = call;
  func.has_module_walk = true;
  func.walks_named_modules = func.walks_named_modules || simple == "named_modules";
}

}  // namespace kvlint::python::detail
