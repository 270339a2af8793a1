// K/V kept in memory that is not a LibTorch tensor: raw device pointers a class fills with
// `cudaMalloc(&k_cache_, layers * heads * max_len * head_dim * sizeof(half))`,
// `cudaMallocAsync`, or an allocator wrapper (`k_cache_ = static_cast<half*>(pool_->allocate(n))`),
// and ggml tensors (`k_cache(ggml_new_tensor_3d(ctx, GGML_TYPE_F16, ...))`). What makes such a
// member K/V is the same as for a tensor (kv_members.cpp, forward_kv.cpp): the class allocates and
// keeps it, writes it per step (a kernel launch that is handed it), and its name says K/V; the
// size's factors give its geometry (three or more: layers x heads x positions x head_dim), so a
// workspace or a logits buffer stays what it is.
//
// The memory may also be allocated by another object and handed over for the class to lay out
// (LightSeq's `init_buffer(void* pbuf)`, after its owner cudaMallocs `compute_buffer_bytesize()`):
// the class carves its regions by offsets (`k_cache_ = query_ + batch_dim_`, or
// `self_k_.push_back(curp); curp += layer_size_;` per layer) and keeps the pointers. A region is
// the class's own K/V when it spans every layer (four or more factors, the loop over layers
// included: layers x rows x positions x width, through the members the sizes are initialised
// with), a kernel launch writes it outside the constructor (through the member, a per-step view
// member `cur_k_ = self_k_.data()`, or a local `k_layer = k_cache_ + layer * stride`), and its
// name says K/V. A one-layer region (each layer's q/k/v scratch, reused by the next layer within
// the call) keeps nothing across calls; a pointer stored as handed, with no layout, stays the
// owner's (borrowed).
#include <clang/AST/ParentMapContext.h>

#include <algorithm>
#include <map>
#include <set>

#include "analyzers/cpp/walker.hpp"

namespace kvlint::cpp {

using namespace clang;

const Expr* without_casts(const Expr* e) {
  for (int depth = 0; depth < 8 && e; ++depth) {
    e = strip(e);
    if (const auto* cast = dyn_cast<ExplicitCastExpr>(e)) {
      e = cast->getSubExpr();
      continue;
    }
    return e;
  }
  return e;
}

namespace {

bool contains_ci(std::string_view text, std::string_view word) {
  auto it = std::search(text.begin(), text.end(), word.begin(), word.end(),
                        [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  return it != text.end();
}

// Members initialised with a size (`layer_size_(max_batch * max_step * hidden)`), by name: a
// region sized `layer_size_` has that product's factors.
using SizeProducts = std::map<std::string, const Expr*>;

// The dimensions a size product multiplies; `sizeof(...)` and literals are no dimension, and a
// member in `products` counts as the factors it is initialised with.
std::size_t device_factors(const Expr* size, const SizeProducts& products, int depth) {
  std::size_t factors = 0;
  std::vector<const Expr*> stack{size};
  while (!stack.empty()) {
    const Expr* e = without_casts(stack.back());
    stack.pop_back();
    if (!e) continue;
    const Expr* lhs = nullptr;
    const Expr* rhs = nullptr;
    if (binary_operands(e, BO_Mul, OO_Star, &lhs, &rhs)) {
      stack.push_back(lhs);
      stack.push_back(rhs);
      continue;
    }
    if (isa<UnaryExprOrTypeTraitExpr, IntegerLiteral>(e)) continue;
    if (const auto* p = dyn_cast<ParenExpr>(e)) {
      stack.push_back(p->getSubExpr());
      continue;
    }
    if (const auto* m = dyn_cast<MemberExpr>(e); m && depth < 3)
      if (auto it = products.find(m->getMemberDecl()->getNameAsString()); it != products.end()) {
        factors += device_factors(it->second, products, depth + 1);
        continue;
      }
    ++factors;
  }
  return factors;
}

// A constructor's member initialiser as a single expression: a class template keeps a dependent
// one as `(expr)` (ParenListExpr).
const Expr* initialiser_value(const CXXCtorInitializer* init) {
  const Expr* value = init->getInit();
  if (const auto* list = dyn_cast_or_null<ParenListExpr>(value))
    value = list->getNumExprs() == 1 ? list->getExpr(0) : nullptr;
  return value;
}

// Where a pointer expression points: `cursor` or `cursor + offset` (a pointer the method was
// handed, or a local derived from one), or `carved_member + offset`.
struct CarveBase {
  const VarDecl* cursor = nullptr;
  std::string member;
  const Expr* offset = nullptr;
};

CarveBase carve_base(const Context& cx, const Expr* e, const std::set<const VarDecl*>& cursors,
                     const std::set<std::string>& carved) {
  CarveBase out;
  e = without_casts(e);
  const Expr* lhs = nullptr;
  const Expr* rhs = nullptr;
  if (binary_operands(e, BO_Add, OO_Plus, &lhs, &rhs)) {
    out.offset = rhs;
    e = without_casts(lhs);
  }
  if (const auto* ref = dyn_cast_or_null<DeclRefExpr>(e)) {
    if (const auto* var = dyn_cast<VarDecl>(ref->getDecl()); var && cursors.count(var)) out.cursor = var;
  } else if (e && isa<MemberExpr>(e)) {
    if (std::string member = member_in(dotted(cx, e)); carved.count(member)) out.member = std::move(member);
  }
  return out;
}

// The member of `this` an assignment's target is (`k_cache_`, `this->k_cache_`); empty otherwise.
std::string assigned_member(const Context& cx, const Expr* target) {
  target = without_casts(target);
  return target && isa<MemberExpr>(target) ? member_in(dotted(cx, target)) : std::string();
}

// The factors the enclosing `for (i = 0; i < n; ++i)` loops multiply a statement by.
std::size_t loop_factors(const Context& cx, const Stmt* s, const SizeProducts& products) {
  std::size_t factors = 0;
  DynTypedNode node = DynTypedNode::create(*s);
  for (int depth = 0; depth < 32; ++depth) {
    DynTypedNodeList parents = cx.ast.getParents(node);
    if (parents.empty() || parents[0].get<FunctionDecl>()) break;
    if (const auto* loop = parents[0].get<ForStmt>()) {
      const Expr* lhs = nullptr;
      const Expr* bound = nullptr;
      const Expr* cond = loop->getCond() ? strip(loop->getCond()) : nullptr;
      if (binary_operands(cond, BO_LT, OO_Less, &lhs, &bound) ||
          binary_operands(cond, BO_LE, OO_LessEqual, &lhs, &bound))
        factors += device_factors(bound, products, 0);
    }
    node = parents[0];
  }
  return factors;
}

// The memory a method lays out in a device buffer it is handed, and the launches that write it.
struct Carving {
  std::set<std::string> carved;
  std::map<std::string, std::size_t> region;  // member -> factors of the region it spans
  std::map<std::string, std::string> views;   // `cur_k_ = self_k_.data()`: view -> viewed member
  std::set<std::string> launched;             // members a kernel launch is handed, outside constructors
};

void carve(const Context& cx, const FunctionDecl& function, const SizeProducts& products, Carving& out) {
  std::set<const VarDecl*> cursors;
  for (const ParmVarDecl* parameter : function.parameters())
    if (parameter->getType()->isPointerType()) cursors.insert(parameter);
  if (cursors.empty()) return;
  // A member (or a per-layer slot) given the cursor's current position: its region is the cursor's
  // next advance (`curp += layer_size_`), times the loops the store is in.
  std::map<const VarDecl*, std::pair<std::string, std::size_t>> pending;
  // Only the method that lays a member out says its region (`k_layer = k_cache_ + layer * stride`
  // elsewhere is a view into it).
  std::set<std::string> carved_here;
  auto note_region = [&](const std::string& member, const Expr* size, std::size_t loops) {
    if (carved_here.count(member)) out.region.try_emplace(member, device_factors(size, products, 0) + loops);
  };
  for_each_stmt(function.getBody(), [&](const Stmt* s) {
    if (const auto* decl = dyn_cast<DeclStmt>(s)) {
      for (const Decl* d : decl->decls())
        if (const auto* var = dyn_cast<VarDecl>(d); var && var->getInit()) {
          const CarveBase base = carve_base(cx, var->getInit(), cursors, out.carved);
          if (!base.member.empty() && base.offset) note_region(base.member, base.offset, 0);
          if (base.cursor || !base.member.empty()) cursors.insert(var);
        }
      return;
    }
    const auto* e = dyn_cast<Expr>(s);
    const Expr* lhs = nullptr;
    const Expr* rhs = nullptr;
    if (binary_operands(e, BO_Assign, OO_Equal, &lhs, &rhs)) {
      const CarveBase base = carve_base(cx, rhs, cursors, out.carved);
      if (!base.cursor && base.member.empty()) return;
      if (!base.member.empty() && base.offset) note_region(base.member, base.offset, 0);
      if (const auto* ref = dyn_cast<DeclRefExpr>(without_casts(lhs))) {
        if (const auto* var = dyn_cast<VarDecl>(ref->getDecl())) cursors.insert(var);
        return;
      }
      const std::string member = assigned_member(cx, lhs);
      if (member.empty()) return;
      // A pointer stored as handed (`k_cache_ = k_cache`) is laid out by no one here: the
      // region is known only once the cursor advances past it.
      if (base.cursor && !base.offset) pending[base.cursor] = {member, loop_factors(cx, s, products)};
      out.carved.insert(member);
      carved_here.insert(member);
      return;
    }
    if (binary_operands(e, BO_AddAssign, OO_PlusEqual, &lhs, &rhs)) {
      const auto* ref = dyn_cast<DeclRefExpr>(without_casts(lhs));
      const auto* var = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
      if (auto it = pending.find(var); it != pending.end()) {
        note_region(it->second.first, rhs, it->second.second);
        pending.erase(it);
      }
      return;
    }
    // `self_k_.push_back(curp)`: one slot per layer.
    if (const auto* call = dyn_cast<CallExpr>(s); call && call->getNumArgs() == 1) {
      const std::string callee = callee_of(cx, call);
      if (!callee.ends_with(".push_back") && !callee.ends_with(".emplace_back")) return;
      const std::string member = member_in(callee);
      const CarveBase base = carve_base(cx, call->getArg(0), cursors, out.carved);
      if (member.empty() || !base.cursor || base.offset) return;
      pending[base.cursor] = {member, loop_factors(cx, s, products)};
      out.carved.insert(member);
      carved_here.insert(member);
    }
  });
}

// Views of a member (`cur_k_ = self_k_.data()`, `cur_k_ = self_k_.data() + layers`) and the
// members kernel launches are handed, directly or through a local (`k_layer = k_cache_ + offset`).
void note_device_uses(const Context& cx, const FunctionDecl& function, Carving& out) {
  auto note_members = [&](const Stmt* root) {
    for_each_stmt(root, [&](const Stmt* a) {
      if (isa<MemberExpr>(a)) {
        if (std::string member = member_in(dotted(cx, cast<Expr>(a))); !member.empty())
          out.launched.insert(std::move(member));
      }
    });
  };
  for_each_stmt(function.getBody(), [&](const Stmt* s) {
    const auto* e = dyn_cast<Expr>(s);
    const Expr* lhs = nullptr;
    const Expr* rhs = nullptr;
    if (binary_operands(e, BO_Assign, OO_Equal, &lhs, &rhs)) {
      const std::string view = assigned_member(cx, lhs);
      const Expr* value = without_casts(rhs);
      bool offset = false;
      if (const Expr* l = nullptr, *r = nullptr; binary_operands(value, BO_Add, OO_Plus, &l, &r)) {
        value = without_casts(l);
        offset = true;
      }
      // `base_ + n` is a region of its own (carve), not a view of `base_`.
      std::string viewed;
      if (const auto* call = dyn_cast_or_null<CallExpr>(value)) {
        if (const std::string callee = callee_of(cx, call); callee.ends_with(".data"))
          viewed = member_in(callee);
      } else if (value && isa<MemberExpr>(value) && !offset) {
        viewed = member_in(dotted(cx, value));
      }
      if (!view.empty() && !viewed.empty() && view != viewed) out.views.try_emplace(view, viewed);
      return;
    }
    const auto* call = dyn_cast<CallExpr>(s);
    if (!call || !is_kernel_launch(cx, call)) return;
    for (const Expr* arg : call->arguments()) {
      note_members(arg);
      for_each_stmt(arg, [&](const Stmt* a) {
        const auto* ref = dyn_cast<DeclRefExpr>(a);
        const auto* local = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
        if (local && local->hasLocalStorage() && !isa<ParmVarDecl>(local)) note_members(local->getInit());
      });
    }
  });
}

}  // namespace

std::string device_allocated_member(const Context& cx, const CallExpr* call, const Expr** size) {
  const std::string name = last_component(qualified_callee(cx, call));
  if (name != "cudaMalloc" && name != "cudaMallocAsync" && name != "cudaMallocManaged" &&
      name != "cudaMallocHost" && name != "cudaHostAlloc")
    return {};
  if (call->getNumArgs() < 2) return {};
  const auto* address = dyn_cast_or_null<UnaryOperator>(without_casts(call->getArg(0)));
  if (!address || address->getOpcode() != UO_AddrOf) return {};
  const std::string d = dotted(cx, address->getSubExpr());
  if (!d.starts_with("self.")) return {};
  if (size) *size = call->getArg(1);
  const std::string rest = d.substr(5);
  return rest.substr(0, rest.find('.'));
}

bool is_allocating_wrapper(const Context& cx, const CallExpr* call) {
  const std::string name = last_component(qualified_callee(cx, call));
  const std::string callee = callee_of(cx, call);
  if (name.starts_with("torch") || callee.starts_with("torch.") || callee.starts_with("at.")) return false;
  const std::string method = callee.substr(callee.rfind('.') + 1);
  return contains_ci(method.empty() ? name : method, "alloc");
}

std::size_t size_factors(const Expr* size) {
  return device_factors(size, {}, 0);
}

std::size_t ggml_dims(const Context& cx, const CallExpr* call) {
  const std::string name = last_component(qualified_callee(cx, call));
  if (!name.starts_with("ggml_new_tensor")) return 0;
  // `ggml_new_tensor_3d`: three; `ggml_new_tensor(ctx, type, n_dims, ne)`: unknown, counted as many.
  if (name.size() == std::string_view("ggml_new_tensor_3d").size() && name.ends_with("d"))
    return static_cast<std::size_t>(name[name.size() - 2] - '0');
  return 1000;
}

bool is_kernel_launch(const Context& cx, const CallExpr* call) {
  if (isa<CXXMemberCallExpr, CXXOperatorCallExpr>(call)) return false;
  const std::string launched = last_component(qualified_callee(cx, call));
  if (launched.starts_with("cuda") || launched.starts_with("torch")) return false;
  return isa<CUDAKernelCallExpr>(call) || launched.find("launch") != std::string::npos ||
         launched.find("kernel") != std::string::npos;
}

std::map<std::string, std::size_t> carved_device_kv(const Context& cx,
                                                    const std::vector<const FunctionDecl*>& functions) {
  SizeProducts products;
  for (const FunctionDecl* function : functions)
    if (const auto* ctor = dyn_cast<CXXConstructorDecl>(function))
      for (const CXXCtorInitializer* init : ctor->inits())
        if (init->isWritten() && init->getMember())
          if (const Expr* value = initialiser_value(init))
            products.try_emplace(init->getMember()->getNameAsString(), value);
  Carving carving;
  for (const FunctionDecl* function : functions) {
    if (isa<CXXConstructorDecl>(function) || !function->getBody()) continue;
    carve(cx, *function, products, carving);
    note_device_uses(cx, *function, carving);
  }
  std::set<std::string> written;
  for (const std::string& member : carving.launched) {
    std::string viewed = member;
    for (int hop = 0; hop < 4; ++hop) {
      auto it = carving.views.find(viewed);
      if (it == carving.views.end()) break;
      viewed = it->second;
    }
    written.insert(member);
    written.insert(viewed);
  }
  std::map<std::string, std::size_t> kv;
  for (const auto& [member, factors] : carving.region)
    if (factors >= 4 && carving.carved.count(member) && written.count(member) &&
        name_says_kv(cx.vocabulary, member))
      kv.emplace(member, factors);
  return kv;
}

std::string carved_kv_member(const Context& cx, const Stmt* s) {
  const Expr* lhs = nullptr;
  const Expr* rhs = nullptr;
  if (!binary_operands(dyn_cast<Expr>(s), BO_Assign, OO_Equal, &lhs, &rhs)) return {};
  std::string member = assigned_member(cx, lhs);
  if (member.empty() || !cx.kv_by_use.count(member) || cx.borrowed_members.count(member)) return {};
  const auto* field = dyn_cast<MemberExpr>(without_casts(lhs));
  if (!field || !field->getType()->isPointerType()) return {};
  // The carve itself (`k_cache_ = query_ + batch_dim_`), not an allocation stored there.
  const Expr* value = without_casts(rhs);
  if (const Expr* l = nullptr, *r = nullptr; binary_operands(value, BO_Add, OO_Plus, &l, &r))
    value = without_casts(l);
  return value && isa<DeclRefExpr, MemberExpr>(value) ? member : std::string();
}

}  // namespace kvlint::cpp
