// Who builds, calls or hands over a class. Takes a class, method or function; gives its
// constructions, the calls into it through a held object (invocations_of), the callers of a
// module-level function, the methods of a class that reach a method through `self`, and the
// project-wide lists of code, reverse assignments and module constants the rules scan.
// Invariant: each query records in the Demand the names a deferred file would need to mention
// to change its answer (a call named `forward`/`__call__` may be anywhere: it wants everything).
#include <algorithm>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "analyzers/facts/project.hpp"
#include "analyzers/facts/project_index.hpp"

namespace kvlint::facts {

using project_detail::split_dotted;

std::vector<Built> Project::constructions_of(ClassRef cls) const {
  if (!cls) return {};
  if (demand_) {
    demand_->class_named(cls.cls->name);
    demand_->built(cls.cls->name);
  }
  auto it = index_->constructions.find(cls.cls);
  return it == index_->constructions.end() ? std::vector<Built>{} : it->second;
}

std::vector<Invocation> Project::invocations_of(ClassRef cls, std::string_view method) const {
  std::vector<Invocation> out;
  if (!cls) return out;
  if (demand_) {
    demand_->class_named(cls.cls->name);
    demand_->mentioned(method);
  }
  auto is_target = [&](ClassRef type) {
    if (!type) return false;
    if (type == cls) return true;
    auto bases = ancestors(type);
    return std::find(bases.begin(), bases.end(), cls) != bases.end();
  };
  std::call_once(index_->method_calls_built, [&] {
    auto add = [&](CodeRef caller) {
      for (const auto& call : caller.method->calls)
        if (const auto dot = call.callee.rfind('.'); dot != std::string::npos)
          index_->method_calls[std::string_view(call.callee).substr(dot + 1)].emplace_back(caller, &call);
    };
    for (ClassRef c : classes_)
      for (const CodeRef& m : methods_of(c)) add(m);
    for (const auto& file : files_)
      for (const auto& f : file.functions) add(CodeRef{&file, {}, &f});
  });
  auto it = index_->method_calls.find(method);
  if (it == index_->method_calls.end()) return out;
  for (const auto& [caller, call] : it->second) {
    const auto parts = split_dotted(call->callee);
    if (parts.front() == "cls") continue;
    if (parts.front() == "self" && parts.size() == 2) continue;  // the class calling itself
    if (caller.cls == cls && parts.front() == "self") continue;
    if (is_target(receiver_class(caller, parts))) out.push_back(Invocation{caller, call});
  }
  return out;
}

std::vector<Invocation> Project::function_callers(CodeRef function) const {
  std::vector<Invocation> out;
  if (!function || function.cls) return out;
  if (demand_) demand_->mentioned(function.method->name);
  auto it = index_->function_calls.find(function.method->name);
  if (it == index_->function_calls.end()) return out;
  for (const auto& [caller, call] : it->second)
    if (find_function(*caller.file, call->callee) == function) out.push_back(Invocation{caller, call});
  return out;
}

std::vector<std::string> Project::self_callers(ClassRef cls, std::string_view method) const {
  std::vector<std::string> out{std::string(method)};
  if (!cls) return out;
  std::vector<ClassRef> chain{cls};
  for (ClassRef a : ancestors(cls)) chain.push_back(a);
  for (bool grew = true; grew;) {
    grew = false;
    for (ClassRef c : chain)
      for (const CodeRef& code : methods_of(c)) {
        const MethodFact& m = *code.method;
        if (std::find(out.begin(), out.end(), m.name) != out.end()) continue;
        const bool calls_one = std::any_of(m.calls.begin(), m.calls.end(), [&](const CallFact& call) {
          const auto parts = split_dotted(call.callee);
          return parts.size() == 2 && parts.front() == "self" &&
                 std::find(out.begin(), out.end(), parts.back()) != out.end();
        });
        if (calls_one) {
          out.push_back(m.name);
          grew = true;
        }
      }
  }
  return out;
}

std::vector<CodeRef> Project::code_calling(const std::vector<std::string>& methods) const {
  if (demand_)
    for (const std::string& m : methods) {
      if (m == "forward" || m == "__call__")
        demand_->everything();
      else
        demand_->mentioned(m);
    }
  std::vector<CodeRef> out;
  for (ClassRef c : classes_)
    for (const CodeRef& m : methods_of(c)) out.push_back(m);
  for (const auto& file : files_)
    for (const auto& f : file.functions) out.push_back(CodeRef{&file, {}, &f});
  return out;
}

std::vector<std::pair<const FileFacts*, const ReverseAssignment*>> Project::reverse_assignments_of(
    std::string_view attribute) const {
  if (demand_) demand_->handed_self(attribute);
  std::vector<std::pair<const FileFacts*, const ReverseAssignment*>> out;
  for (const auto& file : files_)
    for (const auto& r : file.reverse_assignments)
      if (r.attribute == attribute) out.emplace_back(&file, &r);
  return out;
}

std::vector<std::pair<const FileFacts*, const Constant*>> Project::module_constants(
    std::string_view name) const {
  if (demand_) demand_->constant_named(name);
  std::vector<std::pair<const FileFacts*, const Constant*>> out;
  for (const auto& file : files_)
    for (const auto& c : file.constants)
      if (c.owner_class.empty() && c.name == name) out.emplace_back(&file, &c);
  return out;
}

}  // namespace kvlint::facts
