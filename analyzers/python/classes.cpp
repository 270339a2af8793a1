// Classes, bases, methods and their parameter types; imports and name resolution; members
// (`self.x = ...`), constants, constructions, ownership hops, and declaration forwards
// (`self.x.model_local_kv_specs()`).
#include "analyzers/python/walker.hpp"

namespace kvlint::python::detail {
namespace {

std::string join_module(std::string_view module, std::string_view name) {
  std::string out(module);
  if (!out.empty() && out.back() != '.') out.push_back('.');
  out += name;
  return out;
}

bool is_module_container(std::string_view s) {
  return s == "ModuleList" || s == "ModuleDict" || s == "Sequential" || s == "ParameterList" ||
         s == "ParameterDict";
}

}  // namespace

// Simple name after import resolution. Aliases only rename a dotted name's
// first component, so only an undotted name can change its last component.
std::string_view FileWalker::resolved_simple(std::string_view written) const {
  if (written.find('.') != std::string_view::npos) return facts::simple_name(written);
  auto it = aliases_.find(written);
  if (it != aliases_.end()) return facts::simple_name(it->second);
  return written;
}

std::string FileWalker::resolve(std::string_view written_raw) const {
  const std::string written = strip_spaces(written_raw);
  const auto dot = written.find('.');
  const std::string_view head = std::string_view(written).substr(0, dot);
  auto it = aliases_.find(head);
  if (it != aliases_.end()) return dot == std::string::npos ? it->second : it->second + written.substr(dot);
  // Star imports make the vocabulary's cache names available bare.
  if (dot == std::string::npos && !star_targets_.empty() && cache_names_.count(head))
    return join_module(star_targets_.front(), written);
  return written;
}

// Dotted names rarely hold whitespace; keep a view when they do not.
std::string_view FileWalker::strip_view(TSNode n) const {
  std::string_view t = text(n);
  spend(t.size());
  for (char c : t)
    if (is_space(c)) {
      scratch_.push_back(strip_spaces(t));
      return scratch_.back();
    }
  return t;
}

void FileWalker::add_import(std::string local, std::string target, TSNode at) {
  if (local == "*") {
    star_targets_.push_back(target);
  } else {
    aliases_[local] = target;
  }
  out_.imports.push_back({std::move(local), std::move(target), loc(at)});
}

void FileWalker::on_import(TSNode node) {
  // Top-level statements only (column 0): after an import inside `try:` or `if TYPE_CHECKING:`
  // an unindented line would end the block early.
  if (frames_.empty() && ts_node_start_point(node).column == 0)
    out_.import_insert_byte = after_line_end(ts_node_end_byte(node));
  std::vector<std::pair<TSNode, TSFieldId>> children;
  for_each_named_child(aux_, node, [&](TSNode c, TSFieldId fid) {
    children.emplace_back(c, fid);
    return true;
  });
  if (sym(node) == Sym::ImportStatement) {
    for (auto [c, fid] : children) {
      if (sym(c) == Sym::DottedName) {
        const std::string full = strip_spaces(text(c));
        const std::string head = full.substr(0, full.find('.'));
        add_import(head, head, c);
      } else if (sym(c) == Sym::AliasedImport) {
        add_import(std::string(text(field(c, g_.f_alias))), strip_spaces(text(field(c, g_.f_name))), c);
      }
    }
    return;
  }
  std::string module;
  for (auto [c, fid] : children)
    if (fid == g_.f_module_name) module = strip_spaces(text(c));
  for (auto [c, fid] : children) {
    if (fid == g_.f_module_name) continue;
    if (sym(c) == Sym::WildcardImport) {
      add_import("*", module, c);
    } else if (sym(c) == Sym::DottedName) {
      const std::string name = strip_spaces(text(c));
      add_import(std::string(facts::simple_name(name)), join_module(module, name), c);
    } else if (sym(c) == Sym::AliasedImport) {
      add_import(std::string(text(field(c, g_.f_alias))),
                 join_module(module, strip_spaces(text(field(c, g_.f_name)))), c);
    }
  }
}

void FileWalker::on_class(TSNode node) {
  facts::ClassFact cls;
  cls.name = std::string(text(field(node, g_.f_name)));
  cls.loc = loc(node);
  TSNode supers = field(node, g_.f_superclasses);
  if (!ts_node_is_null(supers)) {
    for_each_named_child(aux_, supers, [&](TSNode base, TSFieldId) {
      if (sym(base) == Sym::KeywordArgument || sym(base) == Sym::DictionarySplat ||
          sym(base) == Sym::ListSplat)
        return true;
      std::string written = is_dotted(base) ? strip_spaces(text(base)) : fold_text(text(base));
      std::string resolved = is_dotted(base) ? resolve(written) : written;
      cls.bases.push_back({std::move(written), std::move(resolved)});
      return true;
    });
  }
  fill_body_position(node, cls);
  auto state = std::make_unique<ClassState>();
  state->name = cls.name;
  state->is_cache_class = std::any_of(cls.bases.begin(), cls.bases.end(), [&](const facts::BaseClass& b) {
    const std::string_view simple = facts::simple_name(b.resolved);
    return simple == "Cache" || is_cache_simple(simple);
  });
  Frame f;
  f.is_class = true;
  f.node = node;
  f.name = text(field(node, g_.f_name));
  f.class_state = static_cast<int32_t>(classes_.size());
  class_fact_index_.push_back(out_.classes.size());
  out_.classes.push_back(std::move(cls));
  classes_.push_back(std::move(state));
  frames_.push_back(std::move(f));
  open_.back().pops_frame = true;
}

void FileWalker::on_function(TSNode node) {
  Frame f;
  f.node = node;
  f.name = text(field(node, g_.f_name));
  Frame* parent = innermost_frame();
  const bool is_method = parent && parent->is_class;
  if (parent) {
    f.class_state = parent->class_state;
    f.method = is_method ? f.name : parent->method;
    f.is_declaration = is_method ? f.name == vocab_.declaration_method : parent->is_declaration;
  } else {
    f.method = f.name;
  }
  // Parameters, without a method's leading self / cls.
  std::vector<std::string_view> params;
  std::vector<std::string> param_types;
  TSNode plist = field(node, g_.f_parameters);
  if (!ts_node_is_null(plist)) {
    for_each_named_child(aux_, plist, [&](TSNode p, TSFieldId) {
      std::string_view name;
      std::string type;
      if (sym(p) == Sym::TypedParameter || sym(p) == Sym::TypedDefaultParameter)
        type = annotated_class(field(p, g_.f_type));
      switch (sym(p)) {
        case Sym::Identifier:
          name = text(p);
          break;
        case Sym::DefaultParameter:
        case Sym::TypedDefaultParameter:
          name = text(field(p, g_.f_name));
          break;
        case Sym::TypedParameter:
        case Sym::ListSplatPattern:
        case Sym::DictionarySplatPattern: {
          TSNode inner = named_child(p, 0);
          while (!ts_node_is_null(inner) &&
                 (sym(inner) == Sym::ListSplatPattern || sym(inner) == Sym::DictionarySplatPattern))
            inner = named_child(inner, 0);
          if (!ts_node_is_null(inner) && sym(inner) == Sym::Identifier) name = text(inner);
          break;
        }
        default:
          break;
      }
      if (!name.empty()) {
        params.push_back(name);
        param_types.push_back(std::move(type));
      }
      return true;
    });
  }
  if (is_method && !params.empty() && (params.front() == "self" || params.front() == "cls")) {
    params.erase(params.begin());
    param_types.erase(param_types.begin());
  }
  f.params_index = static_cast<int32_t>(params_.size());
  params_.push_back(params);
  if (is_method) classes_[static_cast<std::size_t>(parent->class_state)]->method_nodes.emplace(f.name, node);
  if (parent && !is_method) {  // a nested function: its calls belong to the enclosing method
    f.method_fact = parent->method_fact;
    f.method_in_class = parent->method_in_class;
  }
  if (is_method || !parent) {
    facts::MethodFact m;
    m.name = std::string(f.name);
    m.loc = loc(node);
    for (auto p : params) m.parameters.emplace_back(p);
    m.parameter_types = std::move(param_types);
    std::vector<facts::MethodFact>& list =
        is_method ? out_.classes[class_fact_index_[static_cast<std::size_t>(parent->class_state)]].methods
                  : out_.functions;
    f.method_fact = static_cast<int32_t>(list.size());
    f.method_in_class = is_method;
    list.push_back(std::move(m));
  }
  if (is_method) {
    if (f.is_declaration) {
      ClassState& cls = *classes_[static_cast<std::size_t>(parent->class_state)];
      facts::Declaration d;
      d.owner_class = cls.name;
      d.loc = loc(node);
      cls.active_declaration = cls.declarations.size();
      cls.declarations.push_back(std::move(d));
    }
  }
  frames_.push_back(std::move(f));
  ++function_depth_;
  open_.back().pops_frame = true;
}

// The class a parameter annotation names: `Decoder`, `"Talker"`, `Decoder | None`,
// `Optional[mod.Decoder]`; empty when it names none (builtins, containers, `Any`).
std::string FileWalker::annotated_class(TSNode type) {
  std::vector<TSNode> stack{type};
  std::size_t visited = 0;
  while (!stack.empty() && ++visited < 64) {
    TSNode n = stack.back();
    stack.pop_back();
    if (ts_node_is_null(n)) continue;
    switch (sym(n)) {
      case Sym::Identifier:
      case Sym::Attribute: {
        if (!is_dotted(n)) continue;
        const std::string name = strip_spaces(text(n));
        const std::string_view simple = facts::simple_name(name);
        if (is_uppercase_name(simple) && simple != "Optional" && simple != "Union" && simple != "Any" &&
            simple != "None")
          return resolve(name);
        continue;
      }
      case Sym::String: {
        // A forward reference: `"Talker"`, `"Decoder | None"`, `"Optional[mod.Decoder]"`.
        std::string value;
        if (!decode_string(n, value)) continue;
        std::string_view rest = value;
        while (!rest.empty()) {
          std::size_t begin = 0;
          while (begin < rest.size() && !is_ident_char(rest[begin])) ++begin;
          std::size_t end = begin;
          while (end < rest.size() && (is_ident_char(rest[end]) || rest[end] == '.')) ++end;
          const std::string_view name = rest.substr(begin, end - begin);
          const std::string_view simple = facts::simple_name(name);
          if (simple == "list" || simple == "dict" || simple == "tuple" || simple == "set" ||
              simple == "List" || simple == "Dict" || simple == "Tuple" || simple == "Set" ||
              simple == "Sequence" || simple == "Iterable")
            break;  // a container of them is not one
          if (is_uppercase_name(simple) && simple != "Optional" && simple != "Union" && simple != "Any" &&
              simple != "None")
            return resolve(name);
          rest.remove_prefix(end);
        }
        continue;
      }
      case Sym::Subscript: {
        // `Optional[X]` / `Union[X, None]` name X; any other generic names a container.
        const std::string_view head = facts::simple_name(strip_spaces(text(field(n, g_.f_value))));
        if (head != "Optional" && head != "Union") continue;
        break;
      }
      default:
        // `list[Decoder]` in an annotation is a generic_type: a container of them.
        if (sym(n) == Sym::GenericType) {
          const std::string head = strip_spaces(text(named_child(n, 0)));
          if (facts::simple_name(head) != "Optional" && facts::simple_name(head) != "Union") continue;
        }
        break;
    }
    const std::size_t first = stack.size();
    const bool generic = sym(n) == Sym::GenericType;
    for_each_named_child(sub_, n, [&](TSNode child, TSFieldId fid) {
      const bool head =
          generic ? ts_node_eq(child, named_child(n, 0)) : (sym(n) == Sym::Subscript && fid == g_.f_value);
      if (!head) stack.push_back(child);
      return true;
    });
    std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(first), stack.end());
  }
  return {};
}

void FileWalker::on_construction(TSNode call) {
  std::string target = constructed_class(call);
  if (target.empty()) return;
  facts::Construction c;
  c.owner_class = owner_name();
  c.method = method_name();
  c.target_class = std::move(target);
  c.loc = loc(call);
  c.guards = current_guards();
  if (TSNode fn = field(call, g_.f_function);
      sym(fn) == Sym::Attribute && !is_uppercase_name(last_component(fn)))
    c.factory = std::string(last_component(fn));
  for (auto& a : args_of(call))
    if (a.value.literal != facts::LiteralKind::String) c.args.push_back(std::move(a));
  if (ClassState* cls = owner_state())
    cls->sites.push_back({ClassState::SiteRef::Kind::Construction, out_.constructions.size(), c.method});
  out_.constructions.push_back(std::move(c));
}

void FileWalker::on_forward_candidate(TSNode call, TSNode fn, std::string_view simple) {
  Frame* f = innermost_frame();
  if (!f || f->is_class || f->class_state < 0) return;
  std::string via;
  if (sym(fn) == Sym::Attribute && simple == vocab_.declaration_method) {
    // self.X.<...>.model_local_kv_specs(): the first attribute after self.
    TSNode n = field(fn, g_.f_object);
    TSNode first_attr{};
    while (sym(n) == Sym::Attribute) {
      first_attr = n;
      n = field(n, g_.f_object);
    }
    if (sym(n) == Sym::Identifier && text(n) == "self" && !ts_node_is_null(first_attr))
      via = std::string(text(field(first_attr, g_.f_attribute)));
    else if (sym(n) == Sym::Identifier && ts_node_is_null(first_attr))
      via = local_self_attribute(text(n), ts_node_start_byte(call));
  } else if (resolved_simple(strip_view(fn)) == vocab_.collector) {
    TSNode arg = unwrap_parens(first_positional(call));
    if (!ts_node_is_null(arg) && sym(arg) == Sym::Attribute) {
      TSNode n = arg, first_attr{};
      while (sym(n) == Sym::Attribute) {
        first_attr = n;
        n = field(n, g_.f_object);
      }
      if (sym(n) == Sym::Identifier && text(n) == "self")
        via = std::string(text(field(first_attr, g_.f_attribute)));
    } else if (!ts_node_is_null(arg) && sym(arg) == Sym::Identifier) {
      via = local_self_attribute(text(arg), ts_node_start_byte(call));
    }
  }
  if (via.empty()) return;
  ClassState& cls = *classes_[static_cast<std::size_t>(f->class_state)];
  facts::Forward fw{via, loc(call), current_guards()};
  if (f->is_declaration && cls.active_declaration) {
    cls.declarations[*cls.active_declaration].forwards.push_back(std::move(fw));
  } else {
    cls.helper_forwards[std::string(f->method)].push_back(std::move(fw));
  }
}

// The attribute a local was last bound to before `before` in the enclosing
// function: `gen = self.audio_generator` or `gen = getattr(self, "audio_generator", None)`
// gives "audio_generator"; empty when the local holds anything else.
std::string FileWalker::local_self_attribute(std::string_view name, uint32_t before) {
  Frame* func = function_frame();
  if (!func || name == "self") return {};
  std::string found;
  uint32_t found_at = 0;
  Cursor c(func->node);
  std::vector<TSNode> stack{func->node};
  while (!stack.empty()) {
    TSNode n = stack.back();
    stack.pop_back();
    if (ts_node_start_byte(n) >= before) continue;
    if (sym(n) == Sym::Assignment) {
      TSNode left = field(n, g_.f_left);
      TSNode right = unwrap_parens(field(n, g_.f_right));
      if (sym(left) == Sym::Identifier && text(left) == name && ts_node_start_byte(n) >= found_at) {
        found_at = ts_node_start_byte(n);
        found = self_attribute_of(right);
      }
    }
    const std::size_t first = stack.size();
    for_each_named_child(c, n, [&](TSNode child, TSFieldId) {
      if (sym(child) != Sym::FunctionDef && sym(child) != Sym::ClassDef) stack.push_back(child);
      return true;
    });
    std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(first), stack.end());
  }
  return found;
}

// "x" for `self.x`, `self.x.y`, `getattr(self, "x")`, `getattr(self, "x", None)`; else empty.
std::string FileWalker::self_attribute_of(TSNode value) {
  if (ts_node_is_null(value)) return {};
  if (sym(value) == Sym::Attribute) {
    TSNode n = value, first_attr{};
    while (sym(n) == Sym::Attribute) {
      first_attr = n;
      n = field(n, g_.f_object);
    }
    if (sym(n) == Sym::Identifier && text(n) == "self")
      return std::string(text(field(first_attr, g_.f_attribute)));
    return {};
  }
  if (sym(value) == Sym::Call && text(field(value, g_.f_function)) == "getattr") {
    TSNode args = field(value, g_.f_arguments);
    if (ts_node_is_null(args) || ts_node_named_child_count(args) < 2) return {};
    TSNode object = unwrap_parens(named_child(args, 0));
    TSNode attribute = unwrap_parens(named_child(args, 1));
    if (sym(object) != Sym::Identifier || text(object) != "self") return {};
    const Expression e = make_expr(attribute);
    if (e.literal == facts::LiteralKind::String) return e.literal_value;
  }
  return {};
}

void FileWalker::on_assignment(TSNode node) {
  TSNode left = field(node, g_.f_left);
  TSNode right = field(node, g_.f_right);
  if (ts_node_is_null(left) || ts_node_is_null(right)) return;
  const bool plain = sym(node) == Sym::Assignment;
  const Sym ls = sym(left);
  Frame* f = innermost_frame();
  Frame* func = function_frame();
  const bool right_is_none = sym(unwrap_parens(right)) == Sym::None;
  if (plain && func && ls == Sym::Identifier && sym(right) != Sym::Assignment) {
    func->local_values.emplace_back(text(left), right);
    if (has_raw_kv_text_) func->latest_binding[text(left)] = right;  // raw_kv.cpp reads it
  }
  if (plain && func && ls == Sym::Identifier && !right_is_none && may_be_none(unwrap_parens(right)))
    func->none_locals.emplace_back(text(left), node);  // `past = self.requests.get(rid)`
  if (plain && func && right_is_none) {
    if (ls == Sym::Identifier) func->none_locals.emplace_back(text(left), node);
    if (is_self_attribute(left) && f->method == "__init__" && f->class_state >= 0) {
      auto& attrs = classes_[static_cast<std::size_t>(f->class_state)]->none_attributes;
      attrs.emplace(text(field(left, g_.f_attribute)), loc(node));
    }
  }
  if (plain && ls == Sym::Identifier && func && func->is_declaration && func->method == func->name &&
      func->class_state >= 0 && sym(right) != Sym::Assignment) {
    ClassState& cls = *classes_[static_cast<std::size_t>(func->class_state)];
    if (cls.active_declaration)
      cls.declarations[*cls.active_declaration].local_assignments.push_back(
          {std::string(text(left)), make_expr(right), loc(node)});
  }
  if (plain && ls == Sym::Identifier && !func && sym(right) != Sym::Assignment) {
    facts::Constant c;
    c.owner_class = f && f->is_class ? classes_[static_cast<std::size_t>(f->class_state)]->name : "";
    c.name = std::string(text(left));
    c.value = make_expr(right);
    out_.constants.push_back(std::move(c));
  }
  // `self.<target> = value`, as a fact.
  auto record_attribute = [&](TSNode target, TSNode value) {
    facts::AttributeAssignment a;
    a.owner_class = owner_name();
    a.method = method_name();
    a.attribute = std::string(text(field(target, g_.f_attribute)));
    a.value = make_expr(value);
    a.loc = loc(node);
    if (TSNode type = field(node, g_.f_type); !ts_node_is_null(type))
      a.annotated_class = annotated_class(type);
    out_.attribute_assignments.push_back(std::move(a));
  };
  if (plain && is_self_attribute(left) && f && f->class_state >= 0) {
    on_hop_candidate(left, right);
    if (func && sym(right) != Sym::Assignment) record_attribute(left, right);
  }
  // `self.encoder, self.pooler = encoder, pooler`: each parameter kept on self, as one
  // `self.encoder = encoder` each (what a parameter's class is read back from).
  if (plain && func && f && f->class_state >= 0 && sym(right) == Sym::ExpressionList &&
      ts_node_named_child_count(left) >= 2 &&
      ts_node_named_child_count(left) == ts_node_named_child_count(right)) {
    for (uint32_t i = 0; i < ts_node_named_child_count(left); ++i) {
      TSNode target = named_child(left, i);
      TSNode value = unwrap_parens(named_child(right, i));
      if (is_self_attribute(target) && sym(value) == Sym::Identifier && is_param(text(value)))
        record_attribute(target, value);
    }
  }
  // `decoder._graph_wrapper = self`: the class hands itself to another object.
  if (plain && func && f && f->class_state >= 0 && ls == Sym::Attribute && !is_self_attribute(left)) {
    TSNode object = field(left, g_.f_object);
    TSNode value = unwrap_parens(right);
    if (!ts_node_is_null(object) && is_dotted(object) && text(object) != "self" &&
        sym(value) == Sym::Identifier && text(value) == "self") {
      facts::ReverseAssignment r;
      r.owner_class = owner_name();
      r.method = method_name();
      r.object = strip_spaces(text(object));
      r.attribute = std::string(text(field(left, g_.f_attribute)));
      r.loc = loc(node);
      out_.reverse_assignments.push_back(std::move(r));
    }
  }
}

// The class a call instantiates (`Foo(...)`, `pkg.Foo(...)`, `Foo.from_config(...)`), or empty.
std::string FileWalker::constructed_class(TSNode call) {
  TSNode fn = field(call, g_.f_function);
  if (ts_node_is_null(fn) || !is_dotted(fn)) return {};
  const std::string_view simple = resolved_simple(strip_view(fn));
  if (is_uppercase_name(simple)) return is_cache_simple(simple) ? std::string() : resolve(text(fn));
  if (sym(fn) == Sym::Attribute && !starts_with(simple, "__")) {
    TSNode obj = field(fn, g_.f_object);
    const std::string_view owner = resolved_simple(strip_view(obj));
    if (is_uppercase_name(owner) && !is_cache_simple(owner)) return resolve(text(obj));
  }
  return {};
}

void FileWalker::on_hop_candidate(TSNode left, TSNode right) {
  const std::string owner = owner_name();
  const std::string attribute(text(field(left, g_.f_attribute)));
  // (expression, reached through a container): the value, container elements
  // one level down, ternary branches.
  std::vector<std::pair<TSNode, bool>> todo{{right, false}};
  std::vector<std::pair<TSNode, bool>> calls;
  for (std::size_t i = 0; i < todo.size() && i < 64; ++i) {
    const auto [n, in_container] = std::pair{unwrap_parens(todo[i].first), todo[i].second};
    const Sym s = sym(n);
    auto add_elements = [&](TSNode container) {
      const Sym cs = sym(container);
      if (cs == Sym::List || cs == Sym::Tuple || cs == Sym::Set || cs == Sym::Dictionary) {
        for_each_named_child(aux_, container, [&](TSNode e, TSFieldId) {
          todo.emplace_back(sym(e) == Sym::Pair ? field(e, g_.f_value) : e, true);
          return todo.size() < 64;
        });
      } else if (cs == Sym::ListComprehension || cs == Sym::SetComprehension ||
                 cs == Sym::GeneratorExpression || cs == Sym::DictComprehension) {
        TSNode body = field(container, g_.f_body);
        if (!ts_node_is_null(body))
          todo.emplace_back(sym(body) == Sym::Pair ? field(body, g_.f_value) : body, true);
      }
    };
    if (s == Sym::Call) {
      TSNode fn = field(n, g_.f_function);
      if (!in_container && is_dotted(fn) && is_module_container(resolved_simple(strip_view(fn)))) {
        add_elements(unwrap_parens(first_positional(n)));
        continue;
      }
      calls.emplace_back(n, in_container);
    } else if (s == Sym::ConditionalExpression) {
      todo.emplace_back(named_child(n, 0), in_container);
      todo.emplace_back(named_child(n, 2), in_container);
    } else if (!in_container) {
      add_elements(n);
    }
  }
  std::vector<std::string> seen;
  for (auto [call, in_container] : calls) {
    std::string target = constructed_class(call);
    if (target.empty() || std::find(seen.begin(), seen.end(), target) != seen.end()) continue;
    seen.push_back(target);
    out_.hops.push_back({owner, attribute, std::move(target), loc(call), in_container});
  }
}

// Where a fix adds a method to the class: after the line of the body's last statement, with
// the body's own indentation (a one-line body `class A: pass` gets the class's plus four spaces).
void FileWalker::fill_body_position(TSNode class_node, facts::ClassFact& cls) const {
  const TSNode body = field(class_node, g_.f_body);
  if (ts_node_is_null(body) || ts_node_named_child_count(body) == 0) return;
  const TSNode first = ts_node_named_child(body, 0);
  const TSNode last = ts_node_named_child(body, ts_node_named_child_count(body) - 1);
  const auto line_indent = [&](TSNode n) {
    const uint32_t start = ts_node_start_byte(n);
    const uint32_t column = ts_node_start_point(n).column;
    return std::string(src_.substr(start - std::min(start, column), std::min(start, column)));
  };
  if (ts_node_start_point(first).row == ts_node_start_point(class_node).row)
    cls.body_indent = line_indent(class_node) + "    ";
  else
    cls.body_indent = line_indent(first);
  cls.body_end_byte = after_line_end(ts_node_end_byte(last));
}

// The byte after the newline that ends the line holding `byte` (the end of the file when none).
uint32_t FileWalker::after_line_end(uint32_t byte) const {
  const std::size_t newline = src_.find('\n', byte);
  return static_cast<uint32_t>(newline == std::string_view::npos ? src_.size() : newline + 1);
}

}  // namespace kvlint::python::detail
