// The walk: one iterative pass over the syntax tree (no recursion), the open-node and frame
// stacks, and dispatch by node kind to the extractors (see walker.hpp for the map).
#include "analyzers/python/walker.hpp"

namespace kvlint::python::detail {

// Where an import may go in a module that has none at top level: after a leading `#!` or
// coding line (the first two lines) and after the module docstring, which must stay the
// first statement to remain the docstring. A top-level import seen later moves it below.
uint32_t FileWalker::module_header_end(TSNode root) const {
  uint32_t at = 0;
  const uint32_t count = ts_node_named_child_count(root);
  for (uint32_t i = 0; i < count; ++i) {
    const TSNode child = ts_node_named_child(root, i);
    if (sym(child) == Sym::Comment) {
      const std::string_view line = text(child);
      if (ts_node_start_point(child).row > 1 ||
          !(line.starts_with("#!") || line.find("coding") != std::string_view::npos))
        break;
      at = after_line_end(ts_node_end_byte(child));
      continue;
    }
    if (sym(child) == Sym::ExpressionStatement && ts_node_named_child_count(child) == 1) {
      const Sym inner = sym(ts_node_named_child(child, 0));
      if (inner == Sym::String || inner == Sym::ConcatenatedString)
        at = after_line_end(ts_node_end_byte(child));
    }
    break;
  }
  return at;
}

void FileWalker::run(TSNode root) {
  has_errors_ = ts_node_has_error(root);
  out_.import_insert_byte = module_header_end(root);
  Cursor cursor(root);
  enter(root, 0);
  for (;;) {
    if (over_budget(cursor)) return;
    if (open_.back().descend && ts_tree_cursor_goto_first_child(cursor.get())) {
      if (enter_at(cursor)) continue;
      if (over_budget(cursor)) return;
    } else {
      leave();
    }
    for (;;) {
      if (ts_tree_cursor_goto_next_sibling(cursor.get())) {
        if (enter_at(cursor)) break;
        if (over_budget(cursor)) return;
        continue;
      }
      if (!ts_tree_cursor_goto_parent(cursor.get())) {
        finish();
        return;
      }
      leave();
    }
  }
}

bool FileWalker::over_budget(const Cursor& cursor) {
  if (steps_ <= step_budget_) return false;
  stop_over_budget(cursor.node());
  return true;
}

// The parents whose children's field ids an extractor reads (apply_context_guards,
// the retention walk's assignment, a capacity source in a condition or a match subject).
// Other nodes' field ids are never asked for, and finding one costs a search of the
// parent's field map, so the walk skips it.
static bool children_fields_read(Sym parent) {
  switch (parent) {
    case Sym::IfStatement:
    case Sym::ElifClause:
    case Sym::ForStatement:
    case Sym::WhileStatement:
    case Sym::WithStatement:
    case Sym::Assignment:
    case Sym::AugmentedAssignment:
    case Sym::MatchStatement:
      return true;
    default:
      return false;
  }
}

// Visits the node the cursor is on. A named node is entered (pushed) and true is returned;
// an anonymous one (a keyword or punctuation leaf: no facts start there, nothing descends
// into it) is counted and checked for a missing token without being pushed, and false is
// returned: it has been visited and left.
bool FileWalker::enter_at(Cursor& cursor) {
  const TSNode node = cursor.node();
  if (!ts_node_is_named(node)) {
    spend(1);
    if (has_errors_ && ts_node_is_missing(node)) parse_problem(node, true);
    return false;
  }
  enter(node, children_fields_read(open_.back().sym) ? ts_tree_cursor_current_field_id(cursor.get()) : 0);
  return true;
}

// A file whose analysis would take more steps than its budget is cut off where the walk
// stands: facts found so far are kept (as for a syntax error) and a problem says so.
void FileWalker::stop_over_budget(TSNode at) {
  const Location where = loc(at);
  while (open_.size() > 1) leave();
  finish();
  out_.parse_problems.push_back(
      {where, "analysis stopped here: the file needs more than " + std::to_string(step_budget_) +
                  " analysis steps (the per-file budget for its size); facts from here on are missing"});
}

std::string FileWalker::owner_name() {
  ClassState* c = owner_state();
  return c ? c->name : std::string();
}

std::string FileWalker::method_name() {
  Frame* f = innermost_frame();
  return f && !f->is_class ? std::string(f->method) : std::string();
}

const std::vector<std::string_view>* FileWalker::current_params() {
  Frame* f = function_frame();
  return f && f->params_index >= 0 ? &params_[static_cast<std::size_t>(f->params_index)] : nullptr;
}

bool FileWalker::is_param(std::string_view name) {
  const auto* p = current_params();
  return p && std::find(p->begin(), p->end(), name) != p->end();
}

// Pushes a named node and dispatches it (anonymous ones are visited by enter_at).
void FileWalker::enter(TSNode node, TSFieldId field_id) {
  spend(1);
  Open o;
  o.node = node;
  o.sym = sym(node);
  o.field = field_id;
  if (!open_.empty() && o.sym != Sym::Comment) {
    Open& parent = open_.back();
    o.named_index = parent.named_seen++;
  }
  open_.push_back(o);
  if (open_.size() >= 2) apply_context_guards();
  Open& self = open_.back();
  if (has_errors_ && (self.sym == Sym::Error || ts_node_is_missing(node)))
    parse_problem(node, ts_node_is_missing(node));

  switch (self.sym) {
    case Sym::Comment:
      on_comment(node);
      self.descend = false;
      break;
    case Sym::String:
    case Sym::ConcatenatedString:
      self.descend = false;
      break;
    case Sym::ImportStatement:
    case Sym::ImportFromStatement:
      on_import(node);
      self.descend = false;
      break;
    case Sym::FutureImport:
      self.descend = false;
      break;
    case Sym::ClassDef:
      on_class(node);
      break;
    case Sym::FunctionDef:
      on_function(node);
      break;
    case Sym::Call:
      on_call(node);
      break;
    case Sym::Assignment:
      note_dict_write(node);
      on_assignment(node);
      if (has_raw_kv_text_ && function_depth_ > 0) on_raw_kv_assignment(node);
      break;
    case Sym::AugmentedAssignment:
      on_assignment(node);
      break;
    case Sym::Attribute:
      if (has_capacity_source_) on_attribute(node);
      break;
    case Sym::Subscript:
      on_subscript(node);
      break;
    case Sym::AssertStatement:
      on_assert(node);
      break;
    case Sym::IfStatement:
      on_if(node);
      break;
    case Sym::ForStatement:
      on_for(node);
      if (has_raw_kv_text_) note_loop_binding(node);
      break;
    case Sym::WithStatement:
      on_with(node);
      break;
    case Sym::ReturnStatement:
      on_return(node);
      if (has_raw_kv_text_ && function_depth_ > 0) {
        on_raw_kv_return(node);
        on_raw_kv_view_return(node);  // raw_kv_views.cpp
      }
      break;
    case Sym::ConditionalExpression:
      if (has_scope_) on_scope_candidate(node);
      break;
    case Sym::BinaryOperator:
      if (has_raw_kv_text_ && function_depth_ > 0) on_raw_kv_matmul(node);
      if (has_scope_) on_scope_candidate(node);
      break;
    case Sym::GeneratorExpression:
    case Sym::ListComprehension:
      if (has_scope_) on_scope_candidate(node);
      break;
    default:
      break;
  }
}

void FileWalker::leave() {
  Open o = open_.back();
  open_.pop_back();
  guards_.resize(guards_.size() - o.guards_pushed);
  if (o.pops_capture) captures_open_.pop_back();
  if (o.pops_frame) close_frame();
  if (o.sym == Sym::IfStatement && !open_.empty() && function_depth_ > 0) {
    Open& parent = open_.back();
    if ((parent.sym == Sym::Block || parent.sym == Sym::Module) && is_early_return(o.node))
      push_guard(parent, Guard::Origin::EarlyReturn, true, field(o.node, g_.f_condition));
  }
}

void FileWalker::parse_problem(TSNode node, bool missing) {
  ++problem_count_;
  if (out_.parse_problems.size() < kMaxParseProblems) {
    std::string message = missing ? "missing '" + std::string(ts_node_type(node)) + "'" : "syntax error";
    out_.parse_problems.push_back({loc(node), std::move(message)});
  } else if (!more_problems_loc_) {
    more_problems_loc_ = loc(node);
  }
}

void FileWalker::close_frame() {
  Frame f = std::move(frames_.back());
  frames_.pop_back();
  if (f.is_class) {
    close_class(*classes_[static_cast<std::size_t>(f.class_state)]);
    return;
  }
  --function_depth_;
  if (f.has_module_walk) finish_collector(f);
}

// Work that needs the whole class, family by family. The order matters: the implicit sites
// found here get caller guards too.
void FileWalker::close_class(ClassState& cls) {
  finish_pending_implicit_sites(cls);  // calls.cpp
  finish_class_cache_sites(cls);       // cache_sites.cpp
  finish_class_raw_kv(cls);            // raw_kv.cpp
  finish_class_raw_kv_views(cls);      // raw_kv_views.cpp: what finish_class_raw_kv left unjudged
  apply_caller_guards(cls);            // guards.cpp
  finish_class_declarations(cls);      // declarations.cpp
}

void FileWalker::finish() {
  if (has_raw_kv_text_) finish_raw_kv_late_factories();  // raw_kv_views.cpp
  if (more_problems_loc_)
    out_.parse_problems.push_back(
        {*more_problems_loc_, std::to_string(problem_count_ - kMaxParseProblems) + " more syntax errors"});
}

// An assignment or an `x.update(...)` call directly in a function (not in a class nested in
// it): what read_local_dict reads a `**name` splat from. The walk does not enter strings, so
// an `update` call inside an f-string's braces is not one.
void FileWalker::note_dict_write(TSNode node) {
  Frame* frame = innermost_frame();
  if (frame && !frame->is_class) frame->dict_writes.push_back(node);
}

// A call node, offered to each family in turn (the order is the order facts are emitted in).
void FileWalker::on_call(TSNode call) {
  TSNode fn = field(call, g_.f_function);
  if (ts_node_is_null(fn)) return;
  const Sym fs = sym(fn);
  if (fs == Sym::Attribute && text(field(fn, g_.f_attribute)) == "update") note_dict_write(call);
  const bool dotted = is_dotted(fn);
  const std::string_view simple = dotted ? last_component(fn) : std::string_view{};
  if (has_raw_kv_text_ && function_depth_ > 0) on_raw_kv_call(call, fn);  // raw_kv.cpp
  if (function_depth_ > 0) on_kv_handoff(call);                           // raw_kv_views.cpp

  const bool writes_kv = (!use_cache_at_.empty() || !past_key_values_at_.empty()) && writes_kv_call(call);
  if (!captures_open_.empty() && dotted) note_captured_call(fn, writes_kv);
  if (!dotted) return;
  record_call(call, fn, writes_kv);

  Frame* func = function_frame();
  if (fs == Sym::Attribute && func && (simple == "named_modules" || simple == "modules"))
    note_module_walk(*func, call, simple);
  if (fs == Sym::Attribute && is_self_attribute(fn)) on_self_call(call, simple);

  const std::string_view cache_class = cache_class_of_call(call);
  if (!cache_class.empty()) on_cache_call(call, fn, cache_class);

  const std::string_view resolved = resolved_simple(strip_view(fn));
  for (const auto& ctor : vocab_.spec_constructors)
    if (resolved == ctor) on_spec_call(call, ctor);
  on_forward_candidate(call, fn, simple);

  on_capture_candidate(call, fn, fs == Sym::Attribute && simple == "capture_begin", resolved);

  if (!use_cache_at_.empty()) on_implicit_candidate(call, fn);
  if (func) on_construction(call);
}

}  // namespace kvlint::python::detail
