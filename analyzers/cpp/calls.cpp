// Methods and the calls they make: callees rooted at `self` (members, `this->`),
// parameters, free functions and `Class::method`, each once with the guards of
// its first call; a call writes KV when it touches a K/V member (`k_cache_.index_copy_`,
// `torch::cat({past_keys_, k})`, `attention_(x, k_cache_, v_cache_)`).
#include <algorithm>

#include "analyzers/cpp/walker.hpp"

namespace kvlint::cpp {

using namespace clang;

namespace {

bool names_kv_member(const Context& cx, const std::string& d) {
  if (!d.starts_with("self.")) return false;
  const std::string rest = d.substr(5);
  return is_kv_name(cx.vocabulary, rest.substr(0, rest.find('.')));
}

}  // namespace

bool writes_kv(const Context& cx, const CallExpr* call) {
  const std::string callee = callee_of(cx, call);
  // `self.k_cache_.copy_` writes; `self.k_cache_.size` only reads, but a read of a cache
  // member in captured code still keeps it resident: any use counts.
  if (const auto dot = callee.rfind('.'); dot != std::string::npos && names_kv_member(cx, callee.substr(0, dot)))
    return true;
  // Through a member holding a K/V store: `kv_->keys.narrow(...)`, `kv_cache_[id].update(k, v)`.
  if (const auto* member_call = dyn_cast<CXXMemberCallExpr>(call);
      member_call && holds_kv(cx.vocabulary, self_member(member_call->getImplicitObjectArgument())))
    return true;
  // Captured code that allocates K/V (`auto past_k = torch::zeros(...)`): it lives in the graph pool.
  if (allocates_kv(cx, call)) return true;
  bool found = false;
  for (const Expr* arg : call->arguments())
    for_each_stmt(arg, [&](const Stmt* s) {
      if (found) return;
      if (const auto* e = dyn_cast<Expr>(s); e && isa<MemberExpr, CXXDependentScopeMemberExpr>(e))
        found = names_kv_member(cx, dotted(cx, e)) || holds_kv(cx.vocabulary, self_member(e));
    });
  return found;
}

facts::MethodFact method_fact(Context& cx, const FunctionDecl& function) {
  facts::MethodFact m;
  m.name = method_name(&function);
  m.loc = location_of(cx, function.getLocation());
  for (const ParmVarDecl* p : function.parameters()) {
    m.parameters.push_back(p->getNameAsString());
    const CXXRecordDecl* held = held_class(p->getType());
    m.parameter_types.push_back(held && !is_library_class(held) ? held->getNameAsString() : std::string());
  }
  for_each_stmt(function.getBody(), [&](const Stmt* s) {
    const auto* call = dyn_cast<CallExpr>(s);
    if (!call) return;
    std::string callee = callee_of(cx, call);
    if (callee.empty()) return;
    const bool kv = writes_kv(cx, call);
    auto it = std::find_if(m.calls.begin(), m.calls.end(), [&](const facts::CallFact& c) { return c.callee == callee; });
    std::vector<facts::Guard> guards;
    const bool into_object = std::count(callee.begin(), callee.end(), '.') >= 2 || !callee.starts_with("self.");
    if (into_object) guards = guards_of(cx, s, function);
    if (it == m.calls.end()) {
      facts::CallFact c;
      c.callee = std::move(callee);
      c.loc = location_of(cx, call->getSourceRange());
      c.writes_kv = kv;
      c.guards = std::move(guards);
      m.calls.push_back(std::move(c));
      return;
    }
    if (kv && !it->writes_kv) {
      it->writes_kv = true;
      it->loc = location_of(cx, call->getSourceRange());
    }
    if (guards.empty()) it->guards.clear();
  });
  return m;
}

}  // namespace kvlint::cpp
