// Which members of the main file's classes hold attention K/V. By name (the vocabulary's
// `k_cache`, `past_keys`, `att_cache`, `buf_k`, ...) and by what the code does with them:
// a tensor the class allocates with three or more dimensions and then, in a method other
// than the constructor, writes at a position that changes per step
// (`state_.narrow(2, pos, 1).copy_(k)`, `state_.index_put_({Slice(), step_}, v)`,
// `state_.index_copy_(2, positions, k)`) or grows by concatenating onto itself
// (`state_ = torch::cat({state_, k}, 2)`). Not K/V whatever its name: a member the class
// only stores from a parameter and never allocates, or one of reference or pointer type
// (the engine's paged K/V pool, handed in), and the vocabulary's look-alikes (rotary
// tables, convolution states).
#include <clang/AST/ParentMapContext.h>

#include <algorithm>
#include <map>
#include <set>

#include "analyzers/cpp/walker.hpp"

namespace kvlint::cpp {

using namespace clang;

namespace {

bool is_carrier(const Stmt* s) {
  if (isa<ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr, ParenExpr, ExprWithCleanups,
          CXXFunctionalCastExpr, ExplicitCastExpr, ConditionalOperator>(s))
    return true;
  if (const auto* c = dyn_cast<CXXConstructExpr>(s)) return c->getNumArgs() == 1;
  if (const auto* call = dyn_cast<CallExpr>(s); call && call->getNumArgs() == 1)
    if (const FunctionDecl* f = call->getDirectCallee()) return f->getQualifiedNameAsString() == "std::move";
  return false;
}

// A position that changes per step: the expression reads a variable, a parameter or a
// member (`pos`, `step_`, `cache_position`); not a literal, a constant (`kMaxLen`) nor
// torch::indexing's None / Ellipsis (constants too).
bool names_a_position(const Expr* e) {
  bool found = false;
  for_each_stmt(e, [&](const Stmt* s) {
    if (found) return;
    if (const auto* ref = dyn_cast<DeclRefExpr>(s)) {
      const auto* var = dyn_cast<VarDecl>(ref->getDecl());
      found = var && !var->isConstexpr() && !(var->hasGlobalStorage() && var->getType().isConstQualified());
    } else if (const auto* member = dyn_cast<MemberExpr>(s)) {
      found = isa<FieldDecl>(member->getMemberDecl());
    } else {
      found = isa<CXXDependentScopeMemberExpr>(s);
    }
  });
  return found;
}

const CXXMemberCallExpr* as_method_call(const Expr* e, std::string* method) {
  const auto* call = dyn_cast_or_null<CXXMemberCallExpr>(strip(e));
  if (!call || !call->getMethodDecl()) return nullptr;
  *method = call->getMethodDecl()->getNameAsString();
  return call;
}

// `self.k_cache_[layer].narrow(2, pos, 1)` -> "k_cache_", with whether a view on the way
// (or the in-place call itself, `positional` on entry) takes a per-step position.
std::string written_member(const Context& cx, const Expr* object, bool& positional) {
  for (int depth = 0; depth < 12 && object; ++depth) {
    object = strip(object);
    std::string method;
    if (const CXXMemberCallExpr* view = as_method_call(object, &method)) {
      if (method != "narrow" && method != "slice" && method != "select" && method != "index" &&
          method != "view" && method != "transpose" && method != "permute" && method != "reshape")
        return {};
      if ((method == "narrow" || method == "slice" || method == "select") && view->getNumArgs() >= 2 &&
          names_a_position(view->getArg(1)))
        positional = true;
      if (method == "index" && view->getNumArgs() >= 1 && names_a_position(view->getArg(0)))
        positional = true;
      object = view->getImplicitObjectArgument();
      continue;
    }
    if (const auto* op = dyn_cast<CXXOperatorCallExpr>(object); op && op->getOperator() == OO_Subscript) {
      object = op->getArg(0);  // a layer of a per-layer container: `k_cache_[layer]`
      continue;
    }
    return member_in(dotted(cx, object));
  }
  return {};
}

// The dimensions of an allocation's braced size list (`torch::zeros({L, B, H, S, D})`); a
// large number when the sizes are not written as a list (a shape vector).
std::size_t allocated_dims(const Expr* sizes) {
  if (!sizes) return 0;
  std::size_t dims = 1000;
  bool found = false;
  for_each_stmt(sizes, [&](const Stmt* s) {
    if (const auto* list = dyn_cast<InitListExpr>(s); list && !found) {
      dims = list->getNumInits();
      found = true;
    }
  });
  return dims;
}

bool is_allocation(const Context& cx, const std::string& name) {
  if (name.starts_with("ggml_new_tensor") || is_ort_tensor_factory(name)) return true;
  if (!name.starts_with("torch::") && !name.starts_with("at::")) return false;
  const std::string last = name.substr(name.rfind(':') + 1);
  const auto& allocators = cx.vocabulary.cpp.tensor_allocators;
  return std::find(allocators.begin(), allocators.end(), last) != allocators.end();
}

// A value that may be a tensor: not a number, a literal, nor a position (a type Clang knows
// to be arithmetic); an unresolved (dependent) value may be.
bool writes_a_tensor(const Expr* value) {
  if (!value) return false;
  const Expr* e = strip(value);
  if (isa<IntegerLiteral, FloatingLiteral, CXXBoolLiteralExpr>(e)) return false;
  if (const auto* u = dyn_cast<UnaryOperator>(e);
      u && isa<IntegerLiteral, FloatingLiteral>(strip(u->getSubExpr())))
    return false;
  const QualType type = e->getType();
  return type.isNull() || type->isDependentType() || !type->isArithmeticType();
}

bool is_parameter(const Expr* e) {
  const auto* ref = dyn_cast_or_null<DeclRefExpr>(strip(e));
  return ref && isa<ParmVarDecl>(ref->getDecl());
}

struct Uses {
  std::map<std::string, std::size_t> allocated;  // member -> most dimensions allocated with
  std::set<std::string> stepped;                 // written at a position / appended, outside the constructor
  std::set<std::string> from_parameter;          // stored from a parameter
  std::set<std::string> borrowed;                // of reference or pointer type
  std::set<std::string> kernel_written;          // handed to a kernel launch outside the constructor
};

// An in-place write (`copy_`, `index_put_`, ...) on `object` with `args`: positional when the
// write or a view on the way takes a per-step position.
void note_write(const Context& cx, const std::string& method, const Expr* object,
                const std::vector<const Expr*>& args, Uses& uses) {
  if (method.size() < 2 || !method.ends_with('_') || !object) return;
  // Only a write of a tensor puts K/V there: `fill_(0)`, `zero_()`, `index_put_(idx, 0.0)` or
  // `index_put_(idx, step)` write constants and positions (a mask, position ids sized by the
  // cache length are written per step too).
  const Expr* value = nullptr;
  bool positional = false;
  if ((method == "index_copy_" || method == "index_add_") && args.size() >= 3) {
    positional = names_a_position(args[1]);
    value = args[2];
  } else if (method == "index_put_" && args.size() >= 2) {
    positional = names_a_position(args[0]);
    value = args[1];
  } else if ((method == "copy_" || method == "masked_scatter_") && !args.empty()) {
    value = args.back();
  } else if (method == "scatter_" && args.size() >= 3) {
    value = args[2];
  }
  if (!writes_a_tensor(value)) return;
  const std::string member = written_member(cx, object, positional);
  if (positional && !member.empty()) uses.stepped.insert(member);
}

void scan(const Context& cx, const FunctionDecl& function, const Stmt* root, Uses& uses) {
  const bool constructor = isa<CXXConstructorDecl>(&function);
  auto allocated = [&](const Expr* value, const Expr* sizes) {
    const std::string member = stored_member(cx, value);
    if (!member.empty()) uses.allocated[member] = std::max(uses.allocated[member], allocated_dims(sizes));
  };
  for_each_stmt(root, [&](const Stmt* s) {
    if (const std::optional<RecoveredCall> recovered = recovered_call(s)) {
      // A call that did not compile: an allocation, or an in-place write on a member.
      if (is_allocation(cx, qualified_callee(cx, *recovered))) {
        allocated(cast<Expr>(s), recovered->args.empty() ? nullptr : recovered->args.front());
      } else if (!constructor) {
        const Expr* callee = recovered->callee->IgnoreParenImpCasts();
        const Expr* object = nullptr;
        if (const auto* m = dyn_cast<MemberExpr>(callee))
          object = m->getBase();
        else if (const auto* u = dyn_cast<UnresolvedMemberExpr>(callee); u && !u->isImplicitAccess())
          object = u->getBase();
        const std::string name = callee_of(cx, *recovered);
        note_write(cx, name.substr(name.rfind('.') + 1), object, recovered->args, uses);
      }
      return;
    }
    const auto* call = dyn_cast<CallExpr>(s);
    if (!call) return;
    if (const std::size_t dims = foreign_tensor_dims(cx, call)) {
      if (const std::string member = stored_member(cx, call); !member.empty())
        uses.allocated[member] = std::max(uses.allocated[member], dims);
      return;
    }
    if (is_allocation(cx, qualified_callee(cx, call))) {
      allocated(call, call->getNumArgs() ? call->getArg(0) : nullptr);
      return;
    }
    // Raw device memory: `cudaMalloc(&k_cache_, layers * heads * len * head_dim * sizeof(half))`,
    // or a wrapper's result kept (`k_cache_ = (half*)pool_->allocate(bytes)`).
    {
      const Expr* size = nullptr;
      std::string member = device_allocated_member(cx, call, &size);
      std::size_t factors = size ? size_factors(size) : 0;
      if (member.empty() && is_allocating_wrapper(cx, call)) {
        member = stored_member(cx, call);
        for (const Expr* arg : call->arguments()) factors = std::max(factors, size_factors(arg));
      }
      if (!member.empty()) {
        uses.allocated[member] = std::max(uses.allocated[member], factors);
        return;
      }
    }
    // Handed to a kernel launch or to a launcher (`launch_append_kv(k_cache_ + offset, k, ...)`: degraded
    // mode reads `.cu` files as C++, where `<<<...>>>` does not parse, so host code's launcher calls
    // are what is seen); not the runtime's copies and frees, nor another object's method.
    if (!constructor && is_kernel_launch(cx, call)) {
      for (const Expr* arg : call->arguments())
        for_each_stmt(arg, [&](const Stmt* a) {
          if (const auto* m = dyn_cast<MemberExpr>(a))
            if (std::string member = member_in(dotted(cx, m)); !member.empty())
              uses.kernel_written.insert(member);
        });
      return;
    }
    if (const auto* assign = dyn_cast<CXXOperatorCallExpr>(call);
        assign && assign->getOperator() == OO_Equal && assign->getNumArgs() == 2 &&
        is_parameter(assign->getArg(1))) {
      const std::string member = member_in(dotted(cx, assign->getArg(0)));
      if (!member.empty()) uses.from_parameter.insert(member);
      return;
    }
    if (constructor) return;
    if (const std::string q = qualified_callee(cx, call);
        (q.starts_with("torch::") || q.starts_with("at::")) && q.ends_with("::cat")) {
      // `state_ = torch::cat({state_, k}, 2)`: appended per step.
      const std::string member = stored_member(cx, call);
      if (member.empty() || call->getNumArgs() == 0) return;
      const std::vector<std::string> names = expression_of(cx, call->getArg(0)).names;
      if (std::any_of(names.begin(), names.end(),
                      [&](const std::string& n) { return member_in(n) == member; }))
        uses.stepped.insert(member);
      return;
    }
    std::string method;
    if (const CXXMemberCallExpr* write = as_method_call(call, &method))
      note_write(cx, method, write->getImplicitObjectArgument(),
                 std::vector<const Expr*>(write->arg_begin(), write->arg_end()), uses);
  });
}

}  // namespace

std::string stored_member(const Context& cx, const Expr* value) {
  DynTypedNode node = DynTypedNode::create(*value);
  const Stmt* child = value;
  for (int depth = 0; depth < 16; ++depth) {
    DynTypedNodeList parents = cx.ast.getParents(node);
    if (parents.empty()) return {};
    if (const auto* init = parents[0].get<CXXCtorInitializer>())
      return init->getMember() ? init->getMember()->getNameAsString() : std::string();
    const Stmt* p = parents[0].get<Stmt>();
    if (!p) return {};
    node = parents[0];
    if (is_carrier(p)) {
      child = p;
      continue;
    }
    if (const Expr* target = nullptr, *value = nullptr;
        binary_operands(dyn_cast<Expr>(p), BO_Assign, OO_Equal, &target, &value))
      return value == child ? member_in(dotted(cx, target)) : std::string();
    // `k_cache_ = register_buffer("k_cache", torch::zeros(...))`: where the buffer is kept.
    if (const auto* buffer = dyn_cast<CallExpr>(p);
        buffer && callee_of(cx, buffer).ends_with("register_buffer")) {
      child = p;
      continue;
    }
    return {};
  }
  return {};
}

void find_kv_members(Context& cx, const std::vector<const FunctionDecl*>& functions) {
  Uses uses;
  std::set<const CXXRecordDecl*> records;
  for (const FunctionDecl* function : functions) {
    if (const CXXRecordDecl* owner = owner_of(function)) records.insert(owner);
    scan(cx, *function, function->getBody(), uses);
    if (const auto* ctor = dyn_cast<CXXConstructorDecl>(function))
      for (const CXXCtorInitializer* init : ctor->inits()) {
        if (!init->isWritten() || !init->getInit() || !init->getMember()) continue;
        // `k_cache(use_cache ? ggml_new_tensor_3d(ctx, GGML_TYPE_F16, d, s, h) : nullptr)`.
        const Expr* value = strip(init->getInit());
        const auto* choice = dyn_cast<ConditionalOperator>(value);
        for (const Expr* v : {value, choice ? strip(choice->getTrueExpr()) : nullptr,
                              choice ? strip(choice->getFalseExpr()) : nullptr})
          if (const auto* call = dyn_cast_or_null<CallExpr>(v))
            if (const std::size_t dims = foreign_tensor_dims(cx, call)) {
              const std::string member = init->getMember()->getNameAsString();
              uses.allocated[member] = std::max(uses.allocated[member], dims);
            }
        if (const auto* construct = dyn_cast<CXXConstructExpr>(strip(init->getInit()));
            (construct && construct->getNumArgs() == 1 && is_parameter(construct->getArg(0))) ||
            is_parameter(init->getInit()))
          uses.from_parameter.insert(init->getMember()->getNameAsString());
        scan(cx, *function, init->getInit(), uses);
      }
  }
  // Regions of a handed device buffer the class lays out itself and keeps as K/V (device_kv.cpp).
  for (const auto& [member, factors] : carved_device_kv(cx, functions)) {
    uses.allocated[member] = std::max(uses.allocated[member], factors);
    cx.kv_by_use.insert(member);
  }
  // A pointer the class allocates itself (cudaMalloc, ggml_new_tensor_3d) is its own memory.
  for (const CXXRecordDecl* record : records)
    for (const FieldDecl* field : record->fields())
      if (field->getType()->isReferenceType() ||
          (field->getType()->isPointerType() && !uses.allocated.count(field->getNameAsString())))
        uses.borrowed.insert(field->getNameAsString());
  for (const std::string& member : uses.from_parameter)
    if (!uses.allocated.count(member)) uses.borrowed.insert(member);
  for (const std::string& member : uses.stepped)
    if (auto it = uses.allocated.find(member);
        it != uses.allocated.end() && it->second >= 3 && !name_says_not_kv(cx.vocabulary, member))
      cx.kv_by_use.insert(member);
  // Raw device memory sized by three or more dimensions and written by a kernel each step,
  // under a name that says K/V.
  for (const std::string& member : uses.kernel_written)
    if (auto it = uses.allocated.find(member); it != uses.allocated.end() && it->second >= 3 &&
                                               !uses.borrowed.count(member) &&
                                               name_says_kv(cx.vocabulary, member))
      cx.kv_by_use.insert(member);
  // An attention cache the class allocates with three or more dimensions (`attn_cache_ =
  // Ort::Value::CreateTensor<float>(allocator_, shape.data(), 4)`): keys and values by definition,
  // a convolution cache beside it not (name_says_not_kv).
  for (const auto& [member, dims] : uses.allocated)
    if (dims >= 3 && !uses.borrowed.count(member) && name_says_attention_cache(member) &&
        !name_says_not_kv(cx.vocabulary, member))
      cx.kv_by_use.insert(member);
  cx.borrowed_members = std::move(uses.borrowed);
  find_forward_kv(cx, functions, uses.allocated);
}

bool is_kv_member(const Context& cx, std::string_view member, const CXXRecordDecl* owner) {
  const std::string name(member);
  if (cx.borrowed_members.count(name)) return false;
  return kv_member(cx.vocabulary, owner, name) || cx.kv_by_use.count(name) > 0;
}

bool holds_kv(const Context& cx, const FieldDecl* field) {
  if (!field) return false;
  const std::string name = field->getNameAsString();
  if (cx.borrowed_members.count(name)) return false;
  return holds_kv(cx.vocabulary, field) || cx.kv_by_use.count(name) > 0;
}

}  // namespace kvlint::cpp
