// Call facts (MethodFact::calls), `use_cache=True` calls that make transformers build a cache
// (facts::ImplicitCacheSite), the cache keywords a call receives, and what its callee is rooted at.
#include "analyzers/python/walker.hpp"

namespace kvlint::python::detail {
namespace {

bool is_builtin_function(std::string_view name) {
  static constexpr std::array<std::string_view, 40> kBuiltins{
      "abs",        "all",        "any",    "bool",    "callable", "dict",  "divmod",   "enumerate",
      "filter",     "float",      "format", "getattr", "hasattr",  "hash",  "id",       "int",
      "isinstance", "issubclass", "iter",   "len",     "list",     "map",   "max",      "min",
      "next",       "object",     "open",   "print",   "range",    "repr",  "reversed", "round",
      "set",        "setattr",    "sorted", "str",     "sum",      "super", "tuple",    "zip"};
  return std::find(kBuiltins.begin(), kBuiltins.end(), name) != kBuiltins.end();
}

}  // namespace

// The MethodFact of the function whose body is being walked, or nullptr.
facts::MethodFact* FileWalker::current_method_fact() {
  Frame* f = function_frame();
  if (!f || f->method_fact < 0) return nullptr;
  const auto index = static_cast<std::size_t>(f->method_fact);
  if (!f->method_in_class) return index < out_.functions.size() ? &out_.functions[index] : nullptr;
  if (f->class_state < 0) return nullptr;
  auto& methods = out_.classes[class_fact_index_[static_cast<std::size_t>(f->class_state)]].methods;
  return index < methods.size() ? &methods[index] : nullptr;
}

// The call writes attention KV: it passes `use_cache=True` (transformers builds or
// extends a cache), or hands over a cache the object keeps (`past_key_values=self._cache`).
bool FileWalker::writes_kv_call(TSNode call) {
  TSNode args = field(call, g_.f_arguments);
  if (ts_node_is_null(args) || sym(args) != Sym::ArgumentList) return false;
  if (!occurs_within(use_cache_at_, kUseCache.size(), args) &&
      !occurs_within(past_key_values_at_, kPastKeyValues.size(), args))
    return false;
  bool found = false;
  for_each_named_child(aux_, args, [&](TSNode a, TSFieldId) {
    if (sym(a) != Sym::KeywordArgument) return true;
    const std::string_view name = text(field(a, g_.f_name));
    TSNode value = unwrap_parens(field(a, g_.f_value));
    if (name == "use_cache") found = sym(value) == Sym::True;
    if (name == "past_key_values") found = sym(value) != Sym::Identifier && rooted_at_self(value);
    return !found;
  });
  return found;
}

// A call in a function body, kept when rules could follow it: rooted at self, cls or a
// parameter, a bare function name, `Class.method`; or any call that writes KV.
void FileWalker::record_call(TSNode call, TSNode fn, bool writes_kv) {
  facts::MethodFact* method = current_method_fact();
  if (!method) return;
  std::string callee = strip_spaces(text(fn));
  {
    // `decoder = self.decoder` then `decoder.decode(...)`: a call into `self.decoder`.
    const std::string_view written_root = std::string_view(callee).substr(0, callee.find('.'));
    if (written_root.size() != callee.size() && written_root != "self" && !is_param(written_root))
      if (std::string attribute = self_attribute_alias(written_root, call); !attribute.empty())
        callee = "self." + attribute + callee.substr(written_root.size());
  }
  const std::string_view root = std::string_view(callee).substr(0, callee.find('.'));
  const bool bare = root.size() == callee.size();
  const bool followable = root == "self" || root == "cls" || is_param(root) ||
                          (bare && !is_uppercase_name(root) && !is_builtin_function(root)) ||
                          (!bare && is_uppercase_name(root));
  if (!followable && !writes_kv) return;
  // Calls into another object keep their conditions: a holder may switch a held
  // object's behaviour on only under a gate (`self.decoder.enable_graphs()`).
  const bool into_object =
      (root == "self" && std::count(callee.begin(), callee.end(), '.') >= 2) || (!bare && is_param(root));
  const bool function = bare && followable;
  // What each call passes, for calls that may go into another object: `self.decoder.decode(...)`,
  // `model.step(...)`, and `self.decoder(...)` (a held module called directly).
  const bool passes = into_object || (root == "self" && !bare);
  for (auto& existing : method->calls) {
    if (existing.callee != callee) continue;
    if (writes_kv && !existing.writes_kv) {
      existing.writes_kv = true;
      existing.loc = loc(call);
    }
    if ((into_object || function) && !existing.guards.empty() && active_guard_refs(true).empty())
      existing.guards.clear();
    if (passes && existing.passes.size() < facts::kMaxCallPasses) existing.passes.push_back(call_pass(call));
    return;
  }
  if (method->calls.size() >= kMaxCallsPerFunction) return;
  facts::CallFact fact{callee, loc(call), writes_kv, {}, {}, false, {}};
  if (into_object || function)
    for (const auto& ref : active_guard_refs(true)) fact.guards.push_back(shared_guard(ref));
  if (function)
    for (auto& a : args_of(call))
      if (a.value.literal != facts::LiteralKind::String) fact.args.push_back(std::move(a));
  if (passes) fact.passes.push_back(call_pass(call));
  method->calls.push_back(std::move(fact));
}

// The attribute of self a local was last bound to before `at` (`decoder = self.decoder`), when
// that binding is a plain `self.<attr>`; else empty.
std::string FileWalker::self_attribute_alias(std::string_view local, TSNode at) {
  Frame* func = function_frame();
  if (!func) return {};
  std::optional<TSNode> bound;
  for (const auto& [name, value] : func->local_values)
    if (name == local && ts_node_start_byte(value) < ts_node_start_byte(at)) bound = value;
  if (!bound) return {};
  TSNode value = unwrap_parens(*bound);
  if (!is_self_attribute(value)) return {};
  return std::string(text(field(value, g_.f_attribute)));
}

facts::CallPass FileWalker::call_pass(TSNode call) {
  facts::CallPass pass;
  pass.loc = loc(call);
  TSNode args = field(call, g_.f_arguments);
  if (!ts_node_is_null(args) && sym(args) == Sym::ArgumentList)
    for_each_named_child(aux_, args, [&](TSNode a, TSFieldId) {
      switch (sym(a)) {
        case Sym::KeywordArgument:
          if (sym(unwrap_parens(field(a, g_.f_value))) != Sym::None)
            pass.keywords.emplace_back(text(field(a, g_.f_name)));
          break;
        case Sym::ListSplat:
        case Sym::DictionarySplat:
          pass.unpacked = true;
          break;
        default:
          if (!pass.unpacked) ++pass.positionals;
          break;
      }
      return true;
    });
  for (const auto& ref : active_guard_refs(true)) pass.guards.push_back(shared_guard(ref));
  return pass;
}

// `self.<attribute> = <not None>` as the statement itself, or inside a `with` / `try`
// body that runs before what follows it.
bool FileWalker::assigns_attribute(TSNode stmt, std::string_view attribute, int depth) {
  if (ts_node_is_null(stmt) || depth > 4) return false;
  const Sym s = sym(stmt);
  if (s == Sym::ExpressionStatement) {
    TSNode a = named_child(stmt, 0);
    if (sym(a) != Sym::Assignment) return false;
    TSNode left = field(a, g_.f_left);
    TSNode right = unwrap_parens(field(a, g_.f_right));
    return is_self_attribute(left) && text(field(left, g_.f_attribute)) == attribute &&
           !ts_node_is_null(right) && sym(right) != Sym::None;
  }
  if (s == Sym::WithStatement || s == Sym::Block || s == Sym::TryStatement) {
    bool found = false;
    each_named_child(stmt, [&](TSNode c) {
      const Sym cs = sym(c);
      if (cs == Sym::Block || cs == Sym::ExpressionStatement || cs == Sym::WithStatement)
        found = assigns_attribute(c, attribute, depth + 1);
      return !found && !(cs == Sym::Block && s != Sym::Block);  // a try's first block only
    });
    return found;
  }
  return false;
}

// An earlier statement of a block around `node`, in its function, assigns self.<attribute>.
bool FileWalker::dominated_by_assignment(TSNode node, std::string_view attribute) {
  TSNode child = node;
  for (TSNode parent = ts_node_parent(node); !ts_node_is_null(parent); parent = ts_node_parent(parent)) {
    const Sym ps = sym(parent);
    if (ps == Sym::FunctionDef || ps == Sym::ClassDef || ps == Sym::Module) return false;
    if (ps == Sym::Block) {
      bool assigned = false;
      each_named_child(parent, [&](TSNode stmt) {
        if (ts_node_start_byte(stmt) >= ts_node_start_byte(child)) return false;
        assigned = assigns_attribute(stmt, attribute);
        return !assigned;
      });
      if (assigned) return true;
    }
    child = parent;
  }
  return false;
}

TSNode FileWalker::enclosing_function(TSNode node) const {
  for (TSNode p = ts_node_parent(node); !ts_node_is_null(p); p = ts_node_parent(p))
    if (sym(p) == Sym::FunctionDef) return p;
  return TSNode{};
}

// self.<attribute> is assigned before `call` runs: earlier in its method, or before
// every call of that method within the class (following callers `depth` levels).
bool FileWalker::assigned_before(const ClassState& cls, TSNode call, std::string_view attribute, int depth) {
  if (ts_node_is_null(call)) return false;
  if (dominated_by_assignment(call, attribute)) return true;
  if (depth == 0) return false;
  TSNode fn = enclosing_function(call);
  if (ts_node_is_null(fn)) return false;
  const std::string_view method = text(field(fn, g_.f_name));
  auto it = cls.method_nodes.find(method);
  if (it == cls.method_nodes.end() || !ts_node_eq(it->second, fn)) return false;
  bool any = false;
  for (const auto& [callee, caller_call] : cls.self_call_nodes) {
    if (callee != method) continue;
    if (!assigned_before(cls, caller_call, attribute, depth - 1)) return false;
    any = true;
  }
  return any;
}

void FileWalker::note_cache_keyword(CacheKeywords& k, std::string_view name, TSNode value, bool from_dict) {
  if (name == "use_cache") {
    k.use_cache = unwrap_parens(value);
    k.through_dict = from_dict;
  } else if (name == "past_key_values") {
    k.past_key_values = unwrap_parens(value);
  }
}

// Keys of a dict literal or `dict(k=v)` call; false when `value` is neither.
bool FileWalker::read_dict_keys(TSNode value, CacheKeywords& k) {
  value = unwrap_parens(value);
  std::vector<std::pair<std::string, TSNode>> pairs;
  if (sym(value) == Sym::Dictionary) {
    each_named_child(value, [&](TSNode pair) {
      if (sym(pair) != Sym::Pair) {
        if (sym(pair) == Sym::DictionarySplat) k.unread_splat = true;
        return true;
      }
      std::string key;
      TSNode key_node = unwrap_parens(field(pair, g_.f_key));
      if (sym(key_node) == Sym::String && decode_string(key_node, key))
        pairs.emplace_back(std::move(key), field(pair, g_.f_value));
      return true;
    });
  } else if (sym(value) == Sym::Call && text(field(value, g_.f_function)) == "dict") {
    TSNode args = field(value, g_.f_arguments);
    each_named_child(args, [&](TSNode a) {
      if (sym(a) == Sym::KeywordArgument)
        pairs.emplace_back(std::string(text(field(a, g_.f_name))), field(a, g_.f_value));
      else
        k.unread_splat = true;  // dict(base, ...) or dict(**base)
      return true;
    });
  } else {
    return false;
  }
  for (const auto& [key, v] : pairs) note_cache_keyword(k, key, v, true);
  return true;
}

// `**name` where `name` is a local dict: what the function put in it before `before`
// (`name = {...}`, `name = dict(...)`, `name.update({...})`, `name["use_cache"] = True`).
void FileWalker::read_local_dict(std::string_view name, uint32_t before, CacheKeywords& k) {
  Frame* func = function_frame();
  if (!func) {
    k.unread_splat = true;
    return;
  }
  bool base_known = false;
  CacheKeywords local;
  auto is_name = [&](TSNode n) { return sym(n) == Sym::Identifier && text(n) == name; };
  // In source order, so a node's children come after it: every write starting before the
  // splat, and none after. The walk is pre-order, so every write that starts before the
  // splat has been recorded by now.
  for (TSNode n : func->dict_writes) {
    if (ts_node_start_byte(n) >= before) break;
    if (sym(n) == Sym::Assignment) {
      TSNode left = field(n, g_.f_left);
      TSNode right = field(n, g_.f_right);
      if (is_name(left)) {
        local = CacheKeywords{};
        base_known = read_dict_keys(right, local);
      } else if (sym(left) == Sym::Subscript && is_name(field(left, g_.f_value))) {
        std::string key;
        TSNode key_node = unwrap_parens(field(left, g_.f_subscript));
        if (sym(key_node) == Sym::String && decode_string(key_node, key))
          note_cache_keyword(local, key, right, true);
      }
    } else if (is_name(field(field(n, g_.f_function), g_.f_object))) {
      TSNode args = field(n, g_.f_arguments);
      each_named_child(args, [&](TSNode a) {
        if (sym(a) == Sym::KeywordArgument)
          note_cache_keyword(local, text(field(a, g_.f_name)), field(a, g_.f_value), true);
        else if (!read_dict_keys(a, local))
          local.unread_splat = true;
        return true;
      });
    }
  }
  if (local.use_cache) {
    k.use_cache = local.use_cache;
    k.through_dict = true;
  }
  if (local.past_key_values) k.past_key_values = local.past_key_values;
  if (!base_known || local.unread_splat) k.unread_splat = true;
}

FileWalker::CacheKeywords FileWalker::cache_keywords(TSNode call) {
  CacheKeywords k;
  TSNode args = field(call, g_.f_arguments);
  std::vector<TSNode> children;
  each_named_child(args, [&](TSNode a) {
    children.push_back(a);
    return true;
  });
  for (TSNode a : children) {
    if (sym(a) == Sym::KeywordArgument) {
      note_cache_keyword(k, text(field(a, g_.f_name)), field(a, g_.f_value), false);
    } else if (sym(a) == Sym::DictionarySplat) {
      TSNode value = unwrap_parens(named_child(a, 0));
      if (sym(value) == Sym::Identifier)
        read_local_dict(text(value), ts_node_start_byte(call), k);
      else if (!read_dict_keys(value, k))
        k.unread_splat = true;
    }
  }
  return k;
}

// What the call's callee is rooted at (see ImplicitCacheSite::CalleeRoot).
void FileWalker::describe_callee(TSNode call, TSNode fn, facts::ImplicitCacheSite& site) {
  std::vector<std::string> path;
  TSNode n = fn;
  while (sym(n) == Sym::Attribute) {
    path.emplace_back(text(field(n, g_.f_attribute)));
    n = field(n, g_.f_object);
  }
  std::reverse(path.begin(), path.end());
  const std::string_view root = text(n);
  site.callee_path = path;
  if (root == "self") {
    site.callee_root = facts::ImplicitCacheSite::CalleeRoot::Self;
    return;
  }
  if (is_param(root)) {
    site.callee_root = facts::ImplicitCacheSite::CalleeRoot::Parameter;
    return;
  }
  Frame* func = function_frame();
  if (!func) return;
  std::optional<TSNode> bound;
  for (const auto& [local, value] : func->local_values)
    if (local == root && ts_node_start_byte(value) < ts_node_start_byte(call)) bound = value;
  if (!bound) return;
  TSNode value = unwrap_parens(*bound);
  // `lm = self.language_model`: the callee is that attribute of self.
  std::vector<std::string> prefix;
  TSNode v = value;
  while (sym(v) == Sym::Attribute) {
    prefix.emplace_back(text(field(v, g_.f_attribute)));
    v = field(v, g_.f_object);
  }
  if (sym(v) == Sym::Identifier && text(v) == "self" && !prefix.empty()) {
    std::reverse(prefix.begin(), prefix.end());
    prefix.insert(prefix.end(), path.begin(), path.end());
    site.callee_root = facts::ImplicitCacheSite::CalleeRoot::Self;
    site.callee_path = std::move(prefix);
    return;
  }
  site.callee_root = facts::ImplicitCacheSite::CalleeRoot::Local;
  site.callee_origin = make_expr(value);
  if (sym(value) == Sym::Call) site.callee_origin_class = constructed_class(value);
}

void FileWalker::on_implicit_candidate(TSNode call, TSNode fn) {
  // Constructing an object (`GenerationConfig(use_cache=True)`) or building
  // keyword sets takes use_cache as a setting; no forward pass runs.
  const std::string_view callee_simple = resolved_simple(strip_view(fn));
  if (is_uppercase_name(callee_simple) || callee_simple == "dict" || callee_simple == "update" ||
      callee_simple == "partial")
    return;
  TSNode args = field(call, g_.f_arguments);
  if (ts_node_is_null(args) || sym(args) != Sym::ArgumentList) return;
  // No `use_cache` keyword and no splat that could carry one: nothing to read.
  if (!occurs_within(use_cache_at_, kUseCache.size(), args) && !contains(text(args), "**")) return;
  const CacheKeywords k = cache_keywords(call);
  if (!k.use_cache || sym(*k.use_cache) != Sym::True) return;
  // A call that hands the callee its convolution padding state (`padding_cache=`: VibeVoice's
  // acoustic tokenizer, transformers' VibeVoiceAcousticTokenizerModel) asks for that state with
  // `use_cache=True`; no attention cache is built behind it.
  bool passes_conv_state = false;
  each_named_child(args, [&](TSNode a) {
    if (sym(a) == Sym::KeywordArgument) {
      const std::string_view name = text(field(a, g_.f_name));
      passes_conv_state = passes_conv_state || name == "padding_cache" || name == "conv_cache";
    }
    return true;
  });
  if (passes_conv_state) return;
  facts::ImplicitCacheSite site;
  site.owner_class = owner_name();
  site.method = method_name();
  site.loc = loc(call);
  site.callee = strip_spaces(text(fn));
  site.through_kwargs_dict = k.through_dict;
  describe_callee(call, fn, site);
  {
    const KeptResult kept = follow_value(call, false, 0);
    site.kept = kept.kept;
    site.kept_at = kept.at;
  }
  if (!k.past_key_values) {
    if (k.unread_splat) return;
    site.reason = facts::ImplicitCacheSite::Reason::NoPastKeyValues;
    site.guards = current_guards();
    emit_implicit(std::move(site));
    return;
  }
  TSNode pkv = *k.past_key_values;
  site.reason = facts::ImplicitCacheSite::Reason::PastKeyValuesStartsNone;
  if (sym(pkv) == Sym::None) {
    site.none_origin = loc(pkv);
    site.guards = current_guards();
    emit_implicit(std::move(site));
    return;
  }
  if (sym(pkv) == Sym::Identifier) {
    Frame* func = function_frame();
    if (!func) return;
    const std::string_view name = text(pkv);
    for (const auto& [local, at] : func->none_locals)
      if (local == name) {
        site.none_origin = loc(at);
        site.guards = current_guards();
        emit_implicit(std::move(site));
        return;
      }
    return;
  }
  if (is_self_attribute(pkv)) {
    ClassState* cls = owner_state();
    if (!cls) return;
    site.guards = current_guards();
    cls->pending_implicit.push_back({std::move(site), std::string(text(field(pkv, g_.f_attribute))), call});
  }
}

void FileWalker::emit_implicit(facts::ImplicitCacheSite site) {
  if (ClassState* cls = owner_state())
    cls->sites.push_back({ClassState::SiteRef::Kind::Implicit, out_.implicit_caches.size(), site.method});
  out_.implicit_caches.push_back(std::move(site));
}

// A lookup that yields None when the key is missing: `d.get(k)`, `d.get(k, None)`,
// `getattr(o, "x", None)`. A past_key_values read this way starts as None on the
// first call, so transformers builds the cache behind `use_cache=True`.
bool FileWalker::may_be_none(TSNode value) {
  if (sym(value) != Sym::Call) return false;
  TSNode fn = field(value, g_.f_function);
  TSNode args = field(value, g_.f_arguments);
  if (ts_node_is_null(fn) || ts_node_is_null(args) || sym(args) != Sym::ArgumentList) return false;
  std::vector<TSNode> positional;  // argument lists are short: no cursor needed
  for (uint32_t i = 0, n = ts_node_named_child_count(args); i < n; ++i)
    positional.push_back(ts_node_named_child(args, i));
  auto is_none_or_absent = [&](std::size_t index) {
    return positional.size() <= index || sym(unwrap_parens(positional[index])) == Sym::None;
  };
  if (sym(fn) == Sym::Attribute && text(field(fn, g_.f_attribute)) == "get")
    return !positional.empty() && positional.size() <= 2 && is_none_or_absent(1);
  if (sym(fn) == Sym::Identifier && text(fn) == "getattr")
    return positional.size() == 3 && is_none_or_absent(2);
  return false;
}

// `past_key_values=self.x` where self.x starts as None in __init__ and is
// never given a cache constructor, nor assigned a value before every call that passes it.
void FileWalker::finish_pending_implicit_sites(ClassState& cls) {
  for (auto& pending : cls.pending_implicit) {
    auto none = cls.none_attributes.find(pending.attribute);
    if (none == cls.none_attributes.end() || cls.cache_attributes.count(pending.attribute)) continue;
    if (assigned_before(cls, pending.call, pending.attribute, 2)) continue;
    pending.site.none_origin = none->second;
    cls.sites.push_back(
        {ClassState::SiteRef::Kind::Implicit, out_.implicit_caches.size(), pending.site.method});
    out_.implicit_caches.push_back(std::move(pending.site));
  }
}

}  // namespace kvlint::python::detail
