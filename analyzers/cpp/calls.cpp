// Methods and the calls they make: callees rooted at `self` (members, `this->`),
// parameters, free functions and `Class::method`, each once with the guards of
// its first call; a call writes KV when it touches a K/V member (`k_cache_.index_copy_`,
// `torch::cat({past_keys_, k})`, `attention_(x, k_cache_, v_cache_)`), and only reads it
// when it takes a value from it without writing it (`k_cache_.sum()`, `torch::matmul(q, k_cache_)`).
#include <clang/AST/ParentMapContext.h>

#include <algorithm>

#include "analyzers/cpp/walker.hpp"

namespace kvlint::cpp {

using namespace clang;

namespace {

bool names_kv_member(const Context& cx, const std::string& d) {
  if (!d.starts_with("self.")) return false;
  const std::string rest = d.substr(5);
  return is_kv_member(cx, rest.substr(0, rest.find('.')));
}

// LibTorch's in-place convention: `copy_`, `index_put_`, `zero_`, `index_copy_`.
bool in_place(std::string_view method) {
  return method.size() > 1 && method.ends_with('_');
}

bool carries(const Stmt* s) {
  return isa<ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr, ParenExpr, ExprWithCleanups,
             CXXFunctionalCastExpr>(s);
}

// Whether the value `e` computes is written: a view of it written in place
// (`k_cache_.narrow(1, pos, 1).copy_(x)`, `k_cache_.index({...}).zero_()`) or assigned to.
bool value_is_written(const Context& cx, const Expr* e) {
  DynTypedNode node = DynTypedNode::create(*e);
  const Stmt* child = e;
  for (int depth = 0; depth < 16; ++depth) {
    DynTypedNodeList parents = cx.ast.getParents(node);
    if (parents.empty()) return false;
    const Stmt* p = parents[0].get<Stmt>();
    if (!p) return false;
    node = parents[0];
    if (carries(p)) {
      child = p;
      continue;
    }
    if (const auto* member = dyn_cast<MemberExpr>(p)) {
      if (in_place(member->getMemberNameInfo().getAsString())) return true;
      child = p;  // a view taken of it: `.narrow(...)`, then whatever is done with that
      DynTypedNodeList up = cx.ast.getParents(node);
      if (up.empty() || !up[0].get<CXXMemberCallExpr>()) return false;
      node = up[0];
      child = up[0].get<Stmt>();
      continue;
    }
    if (const auto* op = dyn_cast<CXXOperatorCallExpr>(p)) {
      if (op->getNumArgs() >= 1 && op->getArg(0) == child &&
          (op->isAssignmentOp() || op->getOperator() == OO_Subscript)) {
        if (op->isAssignmentOp()) return true;
        child = p;  // `k_cache_[layer]`, then whatever is done with that
        continue;
      }
      return false;
    }
    if (const auto* b = dyn_cast<BinaryOperator>(p)) return b->isAssignmentOp() && b->getLHS() == child;
    return false;
  }
  return false;
}

bool is_tensor(QualType type) {
  const auto* record = type.isNull() ? nullptr : type.getNonReferenceType()->getAsCXXRecordDecl();
  if (!record) return false;
  const std::string name = record->getQualifiedNameAsString();
  return name == "at::Tensor" || name == "at::TensorBase";
}

// `e` reaches K/V the class keeps: a K/V member of one of its stores (`tier->buf_k`, with
// `tier` an element of `tiers_`), not the store's other members (`tier->mask`); else anything
// read through a member that holds K/V.
bool holds_store_kv(const Context& cx, const Expr* e) {
  const FieldDecl* root = self_member(e);
  if (!holds_kv(cx, root)) return false;
  if (const auto* m = dyn_cast<MemberExpr>(strip(e)); m && !isa<CXXThisExpr>(strip(m->getBase())))
    if (const auto* field = dyn_cast<FieldDecl>(m->getMemberDecl()))
      if (is_kv_store(cx.vocabulary, dyn_cast<CXXRecordDecl>(field->getParent())))
        return holds_kv(cx.vocabulary, field);
  return true;
}

KvAccess access_of(const Context& cx, const std::string& callee, const std::string& qualified,
                   const std::vector<const Expr*>& args, const Expr* node, bool tensor_method) {
  // `self.k_cache_.copy_` writes; `self.k_cache_.sum` only reads, unless what it returns is
  // written in place (`k_cache_.narrow(1, pos, 1).copy_(k)`).
  if (const auto dot = callee.rfind('.');
      dot != std::string::npos && names_kv_member(cx, callee.substr(0, dot)))
    return in_place(callee.substr(dot + 1)) || value_is_written(cx, node) ? KvAccess::Writes
                                                                          : KvAccess::Reads;
  // Through a member holding a K/V store: `kv_->keys.narrow(...)`, `kv_cache_[id].update(k, v)`;
  // a tensor's method as above, the model's own store's method may write it.
  if (const auto* member_call = dyn_cast_or_null<CXXMemberCallExpr>(node);
      member_call && holds_kv(cx, self_member(member_call->getImplicitObjectArgument()))) {
    const std::string method = callee.substr(callee.rfind('.') + 1);
    return !tensor_method || in_place(method) || value_is_written(cx, node) ? KvAccess::Writes
                                                                            : KvAccess::Reads;
  }
  // Captured code that allocates K/V (`auto past_k = torch::zeros(...)`): it lives in the graph pool.
  if (const auto* call = dyn_cast_or_null<CallExpr>(node); call && allocates_kv(cx, call))
    return KvAccess::Writes;
  bool found = false;
  for (const Expr* arg : args)
    for_each_stmt(arg, [&](const Stmt* s) {
      if (found) return;
      if (const auto* e = dyn_cast<Expr>(s); e && isa<MemberExpr, CXXDependentScopeMemberExpr>(e))
        found = names_kv_member(cx, dotted(cx, e)) || holds_store_kv(cx, e);
    });
  if (!found) return KvAccess::None;
  // Handed to a LibTorch function that does not write its arguments (`torch::matmul(q, k_cache_)`)
  // or to a method of another tensor (`out.copy_(k_cache_)`): read, unless the result is
  // stored back into a K/V member. Handed to the model's own code: that code may write it.
  // A TorchScript module's forward (`torch::jit::Module::forward`) is the model's code.
  const std::string function_name = qualified.substr(qualified.rfind(':') + 1);
  const bool torch_function = (qualified.starts_with("torch::") || qualified.starts_with("at::")) &&
                              !in_place(function_name) && function_name != "forward" &&
                              function_name != "run_method" && !qualified.starts_with("torch::jit::Method");
  if ((torch_function || tensor_method) && !is_kv_member(cx, stored_member(cx, node))) return KvAccess::Reads;
  return KvAccess::Writes;
}

const Expr* receiver_of(const Expr* callee) {
  callee = callee ? callee->IgnoreParenImpCasts() : nullptr;
  if (const auto* m = dyn_cast_or_null<MemberExpr>(callee)) return m->getBase();
  if (const auto* u = dyn_cast_or_null<UnresolvedMemberExpr>(callee); u && !u->isImplicitAccess())
    return u->getBase();
  return nullptr;
}

}  // namespace

KvAccess kv_access(const Context& cx, const CallExpr* call) {
  const auto* method = dyn_cast<CXXMemberCallExpr>(call);
  const bool tensor_method = method && method->getImplicitObjectArgument() &&
                             is_tensor(method->getImplicitObjectArgument()->getType());
  return access_of(cx, callee_of(cx, call), qualified_callee(cx, call),
                   std::vector<const Expr*>(call->arg_begin(), call->arg_end()), call, tensor_method);
}

KvAccess kv_access(const Context& cx, const RecoveredCall& call, const Expr* node) {
  const Expr* receiver = receiver_of(call.callee);
  return access_of(cx, callee_of(cx, call), qualified_callee(cx, call), call.args, node,
                   receiver && is_tensor(receiver->getType()));
}

bool writes_kv(const Context& cx, const CallExpr* call) {
  // A read of a cache member in captured code still keeps it resident: any use counts.
  return kv_access(cx, call) != KvAccess::None;
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
    const std::optional<RecoveredCall> recovered = call ? std::nullopt : recovered_call(s);
    if (!call && !recovered) return;
    std::string callee = call ? callee_of(cx, call) : callee_of(cx, *recovered);
    if (callee.empty()) return;
    const KvAccess access = call ? kv_access(cx, call) : kv_access(cx, *recovered, cast<Expr>(s));
    const bool kv = access != KvAccess::None;
    auto it = std::find_if(m.calls.begin(), m.calls.end(),
                           [&](const facts::CallFact& c) { return c.callee == callee; });
    std::vector<facts::Guard> guards;
    const bool into_object =
        std::count(callee.begin(), callee.end(), '.') >= 2 || !callee.starts_with("self.");
    if (into_object) guards = guards_of(cx, s, function);
    if (it == m.calls.end()) {
      facts::CallFact c;
      c.callee = std::move(callee);
      c.loc = location_of(cx, s->getSourceRange());
      c.writes_kv = kv;
      c.kv_read_only = access == KvAccess::Reads;
      c.guards = std::move(guards);
      m.calls.push_back(std::move(c));
      return;
    }
    if (kv && !it->writes_kv) {
      it->writes_kv = true;
      it->kv_read_only = access == KvAccess::Reads;
      it->loc = location_of(cx, s->getSourceRange());
    } else if (kv && access == KvAccess::Writes && it->kv_read_only) {
      it->kv_read_only = false;  // a later call to it writes: the write is the evidence
      it->loc = location_of(cx, s->getSourceRange());
    }
    if (guards.empty()) it->guards.clear();
  });
  return m;
}

}  // namespace kvlint::cpp
