// Where Python cache sites come from: constructions of a cache class (facts::CacheSite), how
// each is kept (retention: stored on self, returned, passed on), and where a call's cache
// output goes (kept, for implicit sites).
#include "analyzers/python/walker.hpp"

namespace kvlint::python::detail {
namespace {

bool is_transparent(Sym s) {
  return s == Sym::ParenthesizedExpression || s == Sym::ConditionalExpression || s == Sym::BooleanOperator ||
         s == Sym::Await;
}
bool is_container(Sym s) {
  return s == Sym::List || s == Sym::Tuple || s == Sym::Set || s == Sym::Dictionary || s == Sym::Pair ||
         s == Sym::ExpressionList || s == Sym::ListComprehension || s == Sym::SetComprehension ||
         s == Sym::DictComprehension || s == Sym::GeneratorExpression;
}
bool is_container_method(std::string_view m) {
  return m == "append" || m == "setdefault" || m == "add" || m == "insert" || m == "extend" ||
         m == "update" || m == "__setitem__";
}
bool names_cache(std::string_view name) {
  const std::string l = lower(name);
  return contains(l, "past") || contains(l, "cache") || contains(l, "kv");
}

}  // namespace

// Canonical cache class a call constructs (`DC()`, `cu.DynamicCache()`,
// `DynamicCache.from_legacy_cache(x)`), or empty.
std::string_view FileWalker::cache_class_of_call(TSNode call) const {
  TSNode fn = field(call, g_.f_function);
  if (ts_node_is_null(fn) || !is_dotted(fn)) return {};
  const std::string_view simple = resolved_simple(strip_view(fn));
  if (is_cache_simple(simple)) return *cache_names_.find(simple);
  if (sym(fn) == Sym::Attribute) {
    const std::string_view method = text(field(fn, g_.f_attribute));
    if (starts_with(method, "__")) return {};
    const std::string_view object_simple = resolved_simple(strip_view(field(fn, g_.f_object)));
    if (is_cache_simple(object_simple)) return *cache_names_.find(object_simple);
  }
  return {};
}

// The call at open_[index] ends up in a return / yield (through calls, tuples, ...).
bool FileWalker::returned_from(std::size_t index) const {
  while (index > 0) {
    const Sym s = open_[index - 1].sym;
    if (s == Sym::ReturnStatement || s == Sym::Yield) return true;
    if (!(is_transparent(s) || is_container(s) || s == Sym::ArgumentList || s == Sym::KeywordArgument ||
          s == Sym::Call))
      return false;
    --index;
  }
  return false;
}

FileWalker::RetentionInfo FileWalker::retention_of(std::size_t index) {
  RetentionInfo r;
  bool in_container = false;
  while (index > 0) {
    const Open& parent = open_[index - 1];
    const Open& child = open_[index];
    if (is_transparent(parent.sym)) {
      --index;
      continue;
    }
    if (is_container(parent.sym)) {
      in_container = true;
      --index;
      continue;
    }
    switch (parent.sym) {
      case Sym::ArgumentList:
      case Sym::KeywordArgument: {
        const bool keyword = parent.sym == Sym::KeywordArgument;
        const std::size_t outer = keyword ? index - 1 : index;  // index of argument_list + 1
        if (outer < 2 || open_[outer - 2].sym != Sym::Call) return r;
        TSNode call2 = open_[outer - 2].node;
        if (!in_container && !cache_class_of_call(call2).empty()) {
          r.nested_in_cache = true;
          return r;
        }
        TSNode fn2 = field(call2, g_.f_function);
        if (sym(fn2) == Sym::Attribute && is_container_method(text(field(fn2, g_.f_attribute))) &&
            rooted_at_self(field(fn2, g_.f_object))) {
          r.kind = Retention::SelfContainer;
          r.retained_as = strip_spaces(text(field(fn2, g_.f_object)));
          if (text(field(fn2, g_.f_attribute)) == "setdefault") {
            TSNode first = first_positional(call2);
            if (!ts_node_is_null(first) && !ts_node_eq(first, child.node)) r.key = make_expr(first);
          }
          return r;
        }
        if (returned_from(outer - 2)) {
          r.kind = Retention::Returned;
          r.retained_as = "return";
        } else {
          r.kind = Retention::PassedToCall;
          r.retained_as =
              keyword ? std::string(text(field(parent.node, g_.f_name))) : strip_spaces(text(fn2));
        }
        return r;
      }
      case Sym::Assignment:
      case Sym::AugmentedAssignment:
        if (child.field == g_.f_right) assignment_retention(parent.node, in_container, r);
        return r;
      case Sym::ReturnStatement:
      case Sym::Yield:
        r.kind = Retention::Returned;
        r.retained_as = "return";
        return r;
      default:
        return r;
    }
  }
  return r;
}

void FileWalker::assignment_retention(TSNode assignment, bool in_container, RetentionInfo& r) {
  TSNode left = field(assignment, g_.f_left);
  if (ts_node_is_null(left)) return;
  switch (sym(left)) {
    case Sym::Attribute:
    case Sym::Subscript: {
      TSNode holder = sym(left) == Sym::Subscript ? field(left, g_.f_value) : left;
      if (rooted_at_self(holder)) {
        const bool container = sym(left) == Sym::Subscript || in_container;
        r.kind = container ? Retention::SelfContainer : Retention::SelfAttribute;
        r.retained_as = strip_spaces(text(holder));
        TSNode key = field(left, g_.f_subscript);
        if (sym(left) == Sym::Subscript && !ts_node_is_null(key)) r.key = make_expr(key);
        return;
      }
      // Stored on another object (`session.cache = C()`): it goes where that
      // object goes, one step (returned, stored on self, passed on).
      r.retained_as = strip_spaces(text(left));
      TSNode root = holder;
      while (sym(root) == Sym::Attribute || sym(root) == Sym::Subscript)
        root = field(root, sym(root) == Sym::Attribute ? g_.f_object : g_.f_value);
      Frame* func = function_frame();
      // Stored into an object the caller passed in (`model_kwargs["past_key_values"] =
      // DynamicCache()`): the caller gets it back, as with a returned cache.
      if (func && sym(root) == Sym::Identifier && is_param(text(root))) r.assigned_to_param = true;
      if (func && sym(root) == Sym::Identifier) {
        RetentionInfo via_root;
        follow_local(func->node, text(root), ts_node_end_byte(assignment), via_root);
        if (via_root.kind != Retention::Local) {
          r.kind = via_root.kind;
          r.key = std::move(via_root.key);
          if (via_root.kind != Retention::Returned) r.retained_as = std::move(via_root.retained_as);
        }
      }
      return;
    }
    case Sym::Identifier: {
      const std::string_view name = text(left);
      r.retained_as = std::string(name);
      Frame* func = function_frame();
      if (!func) {
        r.kind = Retention::ModuleGlobal;
        if (Frame* f = innermost_frame(); f && f->is_class)
          r.retained_as = std::string(f->name) + "." + r.retained_as;
        return;
      }
      r.assigned_to_param = is_param(name);
      follow_local(func->node, name, ts_node_end_byte(assignment), r);
      return;
    }
    default:
      return;
  }
}

// Where a local holding the object goes next (one step): stored on self,
// returned, or passed on.
void FileWalker::follow_local(TSNode function, std::string_view name, uint32_t after, RetentionInfo& r) {
  int best = 0;  // 3 self, 2 returned, 1 passed
  Cursor c(function);
  std::vector<TSNode> stack{function};
  auto is_name = [&](TSNode n) {
    n = unwrap_parens(n);
    return !ts_node_is_null(n) && sym(n) == Sym::Identifier && text(n) == name;
  };
  while (!stack.empty()) {
    TSNode n = stack.back();
    stack.pop_back();
    if (ts_node_end_byte(n) <= after) continue;
    const Sym s = sym(n);
    if (ts_node_start_byte(n) >= after) {
      if (s == Sym::Assignment && is_name(field(n, g_.f_right))) {
        TSNode left = field(n, g_.f_left);
        if (sym(left) == Sym::Attribute && rooted_at_self(left) && best < 3) {
          best = 3;
          r.kind = Retention::SelfAttribute;
          r.retained_as = strip_spaces(text(left));
          r.key.reset();
        } else if (sym(left) == Sym::Subscript && rooted_at_self(field(left, g_.f_value)) && best < 3) {
          best = 3;
          r.kind = Retention::SelfContainer;
          r.retained_as = strip_spaces(text(field(left, g_.f_value)));
          TSNode key = field(left, g_.f_subscript);
          if (!ts_node_is_null(key)) r.key = make_expr(key);
        }
      } else if ((s == Sym::ReturnStatement || s == Sym::Yield) && contains_word(text(n), name) && best < 2) {
        best = 2;
        r.kind = Retention::Returned;
        r.retained_as = std::string(name);
      } else if (s == Sym::Call && best < 3) {
        TSNode args = field(n, g_.f_arguments);
        bool passes = false;
        TSNode key{};
        if (!ts_node_is_null(args) && sym(args) == Sym::ArgumentList) {
          bool first = true;
          for_each_named_child(sub_, args, [&](TSNode a, TSFieldId) {
            TSNode v = sym(a) == Sym::KeywordArgument ? field(a, g_.f_value) : a;
            if (is_name(v))
              passes = true;
            else if (first && sym(a) != Sym::KeywordArgument)
              key = a;
            first = false;
            return !passes;
          });
        }
        if (passes) {
          TSNode fn = field(n, g_.f_function);
          if (sym(fn) == Sym::Attribute && is_container_method(text(field(fn, g_.f_attribute))) &&
              rooted_at_self(field(fn, g_.f_object))) {
            best = 3;
            r.kind = Retention::SelfContainer;
            r.retained_as = strip_spaces(text(field(fn, g_.f_object)));
            r.key.reset();
            if (text(field(fn, g_.f_attribute)) == "setdefault" && !ts_node_is_null(key))
              r.key = make_expr(key);
          } else if (best < 1) {
            best = 1;
            r.kind = Retention::PassedToCall;
            r.retained_as = strip_spaces(text(fn));
          }
        }
      }
    }
    const std::size_t first = stack.size();
    for_each_named_child(c, n, [&](TSNode child, TSFieldId) {
      stack.push_back(child);
      return true;
    });
    std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(first), stack.end());
  }
}

void FileWalker::on_cache_call(TSNode call, TSNode fn, std::string_view cache_class) {
  if (ClassState* owner = owner_state(); owner && owner->is_cache_class) return;
  RetentionInfo r = retention_of(open_.size() - 1);
  if (r.nested_in_cache) return;
  CacheSite site;
  site.cache_class = std::string(cache_class);
  site.written = strip_spaces(text(fn));
  site.owner_class = owner_name();
  site.method = method_name();
  site.loc = loc(call);
  site.args = args_of(call);
  resolve_local_aliases(site.args, call);
  site.retention = r.kind;
  site.retained_as = std::move(r.retained_as);
  site.container_key = std::move(r.key);
  site.guards = current_guards();
  for (const auto& cap : captures_open_)
    if (out_.captures[cap].kind == CaptureSite::Kind::GraphContext) site.inside_graph_capture = true;
  const bool handed_back = site.retention == Retention::Returned || r.assigned_to_param;
  // A branch on a cache parameter (`use_cache`, `past_key_values`: an `if`, its `else`,
  // an earlier `if ...: return`), or on the type of an argument the caller handed in
  // (`isinstance(values, EncoderDecoderCache)`: a conversion of the caller's cache), means
  // the caller asked for the cache; a branch on any other argument (`if bsz == 0: return
  // None`) does not.
  const bool asked = std::any_of(site.guards.begin(), site.guards.end(), [&](const Guard& g) {
    if (!is_conditional_origin(g.origin)) return false;
    if (std::any_of(g.parameters.begin(), g.parameters.end(),
                    [](const std::string& p) { return names_cache(p); }))
      return true;
    const bool type_test = std::find(g.calls.begin(), g.calls.end(), "isinstance") != g.calls.end();
    return type_test && !g.parameters.empty() &&
           std::any_of(g.condition.names.begin(), g.condition.names.end(),
                       [&](const std::string& n) { return is_cache_simple(resolved_simple(n)); });
  });
  site.caller_requested = handed_back && asked;
  if (ClassState* cls = owner_state()) {
    if (site.retention == Retention::SelfAttribute && starts_with(site.retained_as, "self."))
      cls->cache_attributes.insert(site.retained_as.substr(5));
    cls->sites.push_back({ClassState::SiteRef::Kind::Cache, out_.cache_sites.size(), site.method});
  }
  out_.cache_sites.push_back(std::move(site));
}

bool FileWalker::inside_loop(TSNode node) const {
  for (TSNode p = ts_node_parent(node); !ts_node_is_null(p); p = ts_node_parent(p)) {
    const Sym s = sym(p);
    if (s == Sym::ForStatement || s == Sym::WhileStatement) return true;
    if (s == Sym::FunctionDef || s == Sym::ClassDef || s == Sym::Module) return false;
  }
  return false;
}

// Where the value of `node` goes. `is_cache`: the value is the cache itself (an
// output's `.past_key_values`), not the whole output.
FileWalker::KeptResult FileWalker::follow_value(TSNode node, bool is_cache, int depth) {
  KeptResult r;
  if (depth > 4) {
    r.kept = Kept::Unknown;
    return r;
  }
  TSNode child = node;
  for (TSNode parent = ts_node_parent(node); !ts_node_is_null(parent);
       child = parent, parent = ts_node_parent(parent)) {
    const Sym ps = sym(parent);
    if (ps == Sym::ParenthesizedExpression || ps == Sym::ConditionalExpression ||
        ps == Sym::BooleanOperator || ps == Sym::Await)
      continue;
    if (ps == Sym::Attribute) {
      if (!ts_node_eq(field(parent, g_.f_object), child)) break;
      if (!is_cache && text(field(parent, g_.f_attribute)) == "past_key_values") {
        is_cache = true;
        continue;
      }
      return r;  // `.logits`, `.last_hidden_state`, `cache.get_seq_length()`: read, not kept
    }
    if (ps == Sym::Subscript) {
      if (!ts_node_eq(field(parent, g_.f_value), child)) break;
      TSNode index = unwrap_parens(field(parent, g_.f_subscript));
      std::string key;
      const bool cache_key =
          (sym(index) == Sym::String && decode_string(index, key) && key == "past_key_values") ||
          (sym(index) == Sym::Integer && text(index) != "0") || sym(index) == Sym::UnaryOperator;
      if (!is_cache && cache_key) {
        is_cache = true;
        continue;
      }
      return r;
    }
    if (ps == Sym::ExpressionStatement) return r;  // discarded
    if (ps == Sym::ReturnStatement || ps == Sym::Yield) {
      r.merge(Kept::Returned, parent, *this);
      return r;
    }
    if (ps == Sym::Pair || is_container(ps)) {
      // {"past_key_values": out.past_key_values}, (hidden, past): where the container goes.
      if (ps == Sym::Pair && !ts_node_eq(field(parent, g_.f_value), child)) return r;
      continue;
    }
    if (ps == Sym::Assignment) {
      if (!ts_node_eq(field(parent, g_.f_right), child)) return r;
      follow_targets(field(parent, g_.f_left), parent, is_cache, depth, r);
      return r;
    }
    if (ps == Sym::KeywordArgument || ps == Sym::ArgumentList) {
      TSNode arg_list = ps == Sym::KeywordArgument ? ts_node_parent(parent) : parent;
      TSNode call = ts_node_parent(arg_list);
      TSNode fn = field(call, g_.f_function);
      const std::string_view keyword = ps == Sym::KeywordArgument ? text(field(parent, g_.f_name)) : "";
      if (sym(fn) == Sym::Attribute && is_container_method(text(field(fn, g_.f_attribute)))) {
        // self._d.update(...), session.update({...}), caches.append(out.past_key_values)
        TSNode object = field(fn, g_.f_object);
        if (rooted_at_self(object)) {
          r.merge(Kept::Stored, call, *this);
        } else if (sym(object) == Sym::Identifier) {
          r.merge(follow_name(text(object), ts_node_end_byte(call), false, depth + 1));
        } else {
          r.merge(Kept::Unknown, call, *this);
        }
        return r;
      }
      if (is_cache && keyword == "past_key_values") {
        r.merge(inside_loop(call) ? Kept::Reused : Kept::UsedOnce, call, *this);
        return r;
      }
      r.merge(Kept::Unknown, call, *this);
      return r;
    }
    break;
  }
  r.merge(Kept::Unknown, node, *this);
  return r;
}

void FileWalker::follow_targets(TSNode left, TSNode assignment, bool is_cache, int depth, KeptResult& r) {
  const Sym ls = sym(left);
  if (ls == Sym::Attribute || ls == Sym::Subscript) {
    TSNode holder = ls == Sym::Subscript ? field(left, g_.f_value) : left;
    if (rooted_at_self(holder)) {
      r.merge(Kept::Stored, assignment, *this);
    } else {
      TSNode root = holder;
      while (sym(root) == Sym::Attribute || sym(root) == Sym::Subscript)
        root = field(root, sym(root) == Sym::Attribute ? g_.f_object : g_.f_value);
      if (sym(root) == Sym::Identifier)
        r.merge(follow_name(text(root), ts_node_end_byte(assignment), false, depth + 1));
      else
        r.merge(Kept::Unknown, assignment, *this);
    }
    return;
  }
  if (ls == Sym::Identifier) {
    r.merge(follow_name(text(left), ts_node_end_byte(assignment), is_cache, depth + 1));
    return;
  }
  // `hidden, past = model(...)`: the elements after the first, or any named like a cache.
  uint32_t index = 0;
  each_named_child(left, [&](TSNode element) {
    if (sym(element) == Sym::Identifier && (is_cache || index > 0 || names_cache(text(element))))
      r.merge(follow_name(text(element), ts_node_end_byte(assignment), true, depth + 1));
    ++index;
    return true;
  });
}

// Reads of a local bound at `after`: later ones, and any in a loop (the next step reads it).
FileWalker::KeptResult FileWalker::follow_name(std::string_view name, uint32_t after, bool is_cache,
                                               int depth) {
  KeptResult r;
  Frame* func = function_frame();
  if (!func || depth > 4) {
    r.kept = Kept::Unknown;
    return r;
  }
  std::vector<TSNode> reads;
  walk_function_body(func->node, [&](TSNode n) {
    if (sym(n) == Sym::Identifier && text(n) == name) {
      TSNode parent = ts_node_parent(n);
      const bool is_target = sym(parent) == Sym::Assignment && ts_node_eq(field(parent, g_.f_left), n);
      const bool is_keyword_name =
          sym(parent) == Sym::KeywordArgument && ts_node_eq(field(parent, g_.f_name), n);
      const bool is_attribute_name =
          sym(parent) == Sym::Attribute && ts_node_eq(field(parent, g_.f_attribute), n);
      if (!is_target && !is_keyword_name && !is_attribute_name &&
          (ts_node_start_byte(n) >= after || inside_loop(n)))
        reads.push_back(n);
      return false;
    }
    return true;
  });
  for (TSNode read : reads) r.merge(follow_value(read, is_cache, depth));
  return r;
}

// `cfg = self._llm_config; StaticCache(config=cfg, ...)`: record what the bare local
// holds when it was assigned exactly once before the call in the same function.
void FileWalker::resolve_local_aliases(std::vector<Argument>& args, TSNode call) {
  Frame* func = function_frame();
  if (!func) return;
  const uint32_t call_start = ts_node_start_byte(call);
  for (auto& arg : args) {
    const std::string_view name = arg.value.text;
    if (name.empty() ||
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
            std::string_view::npos)
      continue;
    std::optional<TSNode> only;
    bool ambiguous = false;
    for (const auto& [local, value] : func->local_values) {
      if (local != name) continue;
      if (only || ts_node_start_byte(value) >= call_start) ambiguous = true;
      only = value;
    }
    if (!only || ambiguous) continue;
    arg.value.alias_of = fold_text(text(*only));
    collect_names(*only, arg.value.names, nullptr);
  }
}

// A helper that hands its cache back to a method of its own class (`_init_kv_cache`
// called by the class's decode loop) builds it for the class, not for an outside caller.
// A conversion (`EncoderDecoderCache.from_legacy_cache(past)`) only re-wraps KV the caller
// already holds, and stays the caller's.
void FileWalker::finish_class_cache_sites(const ClassState& cls) {
  for (const auto& ref : cls.sites) {
    if (ref.kind != ClassState::SiteRef::Kind::Cache || ref.method == "forward" || ref.method == "__call__")
      continue;
    CacheSite& site = out_.cache_sites[ref.index];
    if (site.caller_requested && cls.self_calls.count(ref.method) &&
        !ends_with(site.written, ".from_legacy_cache"))
      site.caller_requested = false;
  }
}

}  // namespace kvlint::python::detail
