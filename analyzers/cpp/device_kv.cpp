// K/V kept in memory that is not a LibTorch tensor: raw device pointers a class fills with
// `cudaMalloc(&k_cache_, layers * heads * max_len * head_dim * sizeof(half))`,
// `cudaMallocAsync`, or an allocator wrapper (`k_cache_ = static_cast<half*>(pool_->allocate(n))`),
// and ggml tensors (`k_cache(ggml_new_tensor_3d(ctx, GGML_TYPE_F16, ...))`). What makes such a
// member K/V is the same as for a tensor (kv_members.cpp, forward_kv.cpp): the class allocates and
// keeps it, writes it per step (a kernel launch that is handed it), and its name says K/V; the
// size's factors give its geometry (three or more: layers x heads x positions x head_dim), so a
// workspace or a logits buffer stays what it is.
#include <algorithm>

#include "analyzers/cpp/walker.hpp"

namespace kvlint::cpp {

using namespace clang;

namespace {

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

bool contains_ci(std::string_view text, std::string_view word) {
  auto it = std::search(text.begin(), text.end(), word.begin(), word.end(),
                        [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  return it != text.end();
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
  std::size_t factors = 0;
  // A product's leaves: `sizeof(...)` and literals are no dimension.
  std::vector<const Expr*> stack{size};
  while (!stack.empty()) {
    const Expr* e = without_casts(stack.back());
    stack.pop_back();
    if (!e) continue;
    if (const auto* b = dyn_cast<BinaryOperator>(e); b && b->getOpcode() == BO_Mul) {
      stack.push_back(b->getLHS());
      stack.push_back(b->getRHS());
      continue;
    }
    if (isa<UnaryExprOrTypeTraitExpr, IntegerLiteral>(e)) continue;
    if (const auto* p = dyn_cast<ParenExpr>(e)) {
      stack.push_back(p->getSubExpr());
      continue;
    }
    ++factors;
  }
  return factors;
}

std::size_t ggml_dims(const Context& cx, const CallExpr* call) {
  const std::string name = last_component(qualified_callee(cx, call));
  if (!name.starts_with("ggml_new_tensor")) return 0;
  // `ggml_new_tensor_3d`: three; `ggml_new_tensor(ctx, type, n_dims, ne)`: unknown, counted as many.
  if (name.size() == std::string_view("ggml_new_tensor_3d").size() && name.ends_with("d"))
    return static_cast<std::size_t>(name[name.size() - 2] - '0');
  return 1000;
}

}  // namespace kvlint::cpp
