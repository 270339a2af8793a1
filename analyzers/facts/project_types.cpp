// What a name in code refers to. Takes a method or function and a name in it (an attribute,
// a parameter, a dotted receiver, a callee); gives the project class the value has
// (attribute_class, parameter_class, receiver_class) or the code a call reaches (resolve_call,
// find_method, find_function, code_at).
// Invariant: type resolution through callers' attributes and parameters stops at kMaxTypeDepth,
// so a cycle of hand-overs ends; an annotation wins over what callers pass.
#include <string>
#include <vector>

#include "analyzers/facts/project.hpp"
#include "analyzers/facts/project_index.hpp"

namespace kvlint::facts {

using project_detail::is_uppercase;
using project_detail::kMaxTypeDepth;
using project_detail::module_matches;
using project_detail::parameter_index;
using project_detail::split_dotted;

CodeRef Project::find_method(ClassRef cls, std::string_view name) const {
  if (!cls) return {};
  auto look = [&](ClassRef c) -> CodeRef {
    for (const CodeRef& m : methods_of(c))
      if (m.method->name == name) return m;
    return {};
  };
  if (CodeRef here = look(cls)) return here;
  for (ClassRef a : ancestors(cls))
    if (CodeRef there = look(a)) return there;
  return {};
}

CodeRef Project::code_at(const FileFacts& file, std::string_view owner_class, std::string_view method) const {
  if (owner_class.empty()) {
    for (const auto& f : file.functions)
      if (f.name == method) return CodeRef{&file, {}, &f};
    return {};
  }
  ClassRef cls = class_of(file, owner_class);
  if (!cls) return {};
  // The method as defined in `file` first: a method's sites are facts of the file defining it.
  std::vector<CodeRef> methods = methods_of(cls);
  for (const CodeRef& m : methods)
    if (m.method->name == method && m.file == &file) return m;
  for (const CodeRef& m : methods)
    if (m.method->name == method) return m;
  return {};
}

CodeRef Project::find_function(const FileFacts& from, std::string_view name) const {
  if (demand_) demand_->function_named(name);
  for (const auto& f : from.functions)
    if (f.name == name) return CodeRef{&from, {}, &f};
  for (const auto& import : from.imports) {
    if (import.local_name != name) continue;
    const std::string_view target = import.target;
    const std::string_view simple = simple_name(target);
    std::string_view prefix = target.substr(0, target.size() - simple.size());
    if (prefix.ends_with('.')) prefix.remove_suffix(1);
    for (const auto& file : files_) {
      if (!module_matches(file.module_name, prefix)) continue;
      for (const auto& f : file.functions)
        if (f.name == simple) return CodeRef{&file, {}, &f};
    }
  }
  return {};
}

ClassRef Project::attribute_class(ClassRef cls, std::string_view attribute) const {
  return attribute_class_at(cls, attribute, 0);
}

ClassRef Project::attribute_class_at(ClassRef cls, std::string_view attribute, int depth) const {
  if (!cls || depth > kMaxTypeDepth) return {};
  std::vector<ClassRef> chain{cls};
  for (ClassRef a : ancestors(cls)) chain.push_back(a);
  for (ClassRef c : chain) {
    auto it = index_->hops_from.find(c.cls);
    if (it == index_->hops_from.end()) continue;
    for (const OwnershipHop* hop : it->second)
      if (hop->attribute == attribute && !hop->in_container)
        if (ClassRef target = find_class(hop->target_class, c.file)) return target;
  }
  // `decoder._graph_wrapper = self` in the class that hands itself over.
  if (demand_) demand_->handed_self(attribute);
  for (ClassRef c : chain) {
    auto it = index_->reverse_hops_from.find(c.cls);
    if (it == index_->reverse_hops_from.end()) continue;
    for (const OwnershipHop* hop : it->second)
      if (hop->attribute == attribute)
        if (ClassRef target = find_class(hop->target_class, c.file)) return target;
  }
  // `self.stream: DACStreamState | None = None`: the class its annotation names.
  for (ClassRef c : chain) {
    auto it = index_->attribute_assignments.find(c.cls);
    if (it == index_->attribute_assignments.end()) continue;
    for (const AttributeAssignment* a : it->second)
      if (a->attribute == attribute && !a->annotated_class.empty())
        if (ClassRef target = find_class(a->annotated_class, c.file)) return target;
  }
  // `self.decoder = decoder`: the class the parameter receives.
  for (ClassRef c : chain) {
    auto it = index_->attribute_assignments.find(c.cls);
    if (it == index_->attribute_assignments.end()) continue;
    for (const AttributeAssignment* a : it->second) {
      if (a->attribute != attribute || a->value.literal != LiteralKind::None) continue;
      if (a->value.names.size() != 1 || a->value.names.front() != a->value.text) continue;
      CodeRef code = code_at(*c.file, c.cls->name, a->method);
      if (!code || !parameter_index(*code.method, a->value.text)) continue;
      if (ClassRef target = parameter_class_at(code, a->value.text, depth + 1)) return target;
    }
  }
  return {};
}

ClassRef Project::parameter_class(CodeRef code, std::string_view parameter) const {
  return parameter_class_at(code, parameter, 0);
}

ClassRef Project::parameter_class_at(CodeRef code, std::string_view parameter, int depth) const {
  if (!code || depth > kMaxTypeDepth) return {};
  const auto index = parameter_index(*code.method, parameter);
  if (!index) return {};
  if (*index < code.method->parameter_types.size() && !code.method->parameter_types[*index].empty())
    if (ClassRef annotated = find_class(code.method->parameter_types[*index], code.file)) return annotated;
  if (!code.cls) return function_parameter_class(code, *index, parameter, depth);
  // What the in-project callers pass: `Cls(decoder=self.decoder)`, `Graph.capture(self, ...)`.
  const bool is_init = code.method->name == "__init__";
  for (const Built& b : constructions_of(code.cls)) {
    const Construction& c = *b.construction;
    if (is_init ? !c.factory.empty() : c.factory != code.method->name) continue;
    const Argument* passed = nullptr;
    for (const auto& a : c.args)
      if (a.keyword == parameter || (a.keyword.empty() && a.position == *index)) passed = &a;
    if (!passed) continue;
    const std::string& text = passed->value.text;
    if (text == "self" && b.by) return b.by;
    if (text.starts_with("self.") && text.find('.', 5) == std::string::npos && b.by)
      if (ClassRef held = attribute_class_at(b.by, std::string_view(text).substr(5), depth + 1)) return held;
    if (CodeRef caller = code_at(*b.file, c.owner_class, c.method))
      if (ClassRef forwarded = parameter_class_at(caller, text, depth + 1)) return forwarded;
  }
  return {};
}

// A module-level function's parameter: what its in-project callers pass
// (`capture_decode_step(self, bs)` from class T gives T for `model`).
ClassRef Project::function_parameter_class(CodeRef code, std::size_t index, std::string_view parameter,
                                           int depth) const {
  if (demand_) demand_->mentioned(code.method->name);
  auto it = index_->function_calls.find(code.method->name);
  if (it == index_->function_calls.end()) return {};
  for (const auto& [caller, call] : it->second) {
    if (!(find_function(*caller.file, call->callee) == code)) continue;
    const Argument* passed = nullptr;
    for (const auto& a : call->args)
      if (a.keyword == parameter || (a.keyword.empty() && a.position == index)) passed = &a;
    if (!passed) continue;
    const std::string& text = passed->value.text;
    if (text == "self" && caller.cls) return caller.cls;
    if (text.starts_with("self.") && text.find('.', 5) == std::string::npos && caller.cls)
      if (ClassRef held = attribute_class_at(caller.cls, std::string_view(text).substr(5), depth + 1))
        return held;
    if (ClassRef forwarded = parameter_class_at(caller, text, depth + 1)) return forwarded;
  }
  return {};
}

ClassRef Project::receiver_class(CodeRef from, const std::vector<std::string_view>& parts) const {
  if (parts.size() < 2 || !from) return {};
  const std::string_view root = parts.front();
  ClassRef type;
  if (root == "self" || root == "cls")
    type = from.cls;
  else if (parameter_index(*from.method, root))
    type = parameter_class(from, root);
  else if (is_uppercase(root))
    type = find_class(root, from.file);
  for (std::size_t i = 1; type && i + 1 < parts.size(); ++i) type = attribute_class(type, parts[i]);
  return type;
}

std::vector<CodeRef> Project::resolve_call(CodeRef from, std::string_view callee) const {
  if (!from) return {};
  const auto parts = split_dotted(callee);
  auto called = [&](ClassRef module) -> std::vector<CodeRef> {
    for (const char* entry : {"forward", "__call__"})
      if (CodeRef m = find_method(module, entry)) return {m};
    return {};
  };
  if (parts.size() == 1) {
    if (parameter_index(*from.method, callee)) return called(parameter_class(from, callee));
    if (CodeRef f = find_function(*from.file, callee)) return {f};
    return {};
  }
  ClassRef type = receiver_class(from, parts);
  if (!type) return {};
  if (CodeRef m = find_method(type, parts.back())) return {m};
  if (parts.front() == "cls" || is_uppercase(parts.front())) return {};
  return called(attribute_class(type, parts.back()));
}

}  // namespace kvlint::facts
