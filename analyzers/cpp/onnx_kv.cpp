// ONNX Runtime values as K/V (sherpa-onnx and other ONNX Runtime C++ runtimes): an `Ort::Value`
// made by `Ort::Value::CreateTensor<float>(allocator, shape.data(), shape.size())` is a tensor
// allocation like `torch::zeros`, its dimensions read from the shape it is given, and
// `sess_->Run(...)` is a forward call whose outputs a class may keep and feed back (forward_kv.cpp).
// What makes such a value K/V is the same as for a LibTorch tensor: the class allocates or keeps
// it across calls and it is written or fed back as K/V, the name being supporting evidence only.
#include "analyzers/cpp/walker.hpp"

namespace kvlint::cpp {

using namespace clang;

namespace {

// The elements of the shape an `Ort::Value::CreateTensor` is handed: the `shape_len` argument
// as a literal (`&shape, 1`), or the size of the array or braced list behind `shape.size()`.
std::size_t ort_shape_length(const Expr* length) {
  length = strip(length);
  if (const auto* literal = dyn_cast<IntegerLiteral>(length))
    return static_cast<std::size_t>(literal->getValue().getLimitedValue(1000));
  const auto* size = dyn_cast<CXXMemberCallExpr>(length);
  const auto* ref = size ? dyn_cast<DeclRefExpr>(strip(size->getImplicitObjectArgument())) : nullptr;
  const auto* var = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
  if (!var) return 1000;
  // `std::array<int64_t, 4> shape{...}`: the array's extent.
  if (const auto* spec =
          dyn_cast_or_null<ClassTemplateSpecializationDecl>(var->getType()->getAsCXXRecordDecl());
      spec && spec->getName() == "array" && spec->getTemplateArgs().size() == 2 &&
      spec->getTemplateArgs()[1].getKind() == TemplateArgument::Integral)
    return static_cast<std::size_t>(spec->getTemplateArgs()[1].getAsIntegral().getLimitedValue(1000));
  // `std::vector<int64_t> shape = {layers, 1, heads, len, head_dim}`.
  std::size_t dims = 1000;
  bool found = false;
  for_each_stmt(var->getInit(), [&](const Stmt* s) {
    if (const auto* list = dyn_cast<InitListExpr>(s); list && !found) {
      dims = list->getNumInits();
      found = true;
    }
  });
  return dims;
}

}  // namespace

bool is_ort_tensor_factory(std::string_view qualified) {
  return qualified == "Ort::Value::CreateTensor";
}

std::size_t ort_dims(const Context& cx, const CallExpr* call) {
  if (!is_ort_tensor_factory(qualified_callee(cx, call))) return 0;
  const FunctionDecl* callee = call->getDirectCallee();
  if (!callee) return 1000;
  for (unsigned i = 0; i < callee->getNumParams() && i < call->getNumArgs(); ++i)
    if (callee->getParamDecl(i)->getName() == "shape_len") return ort_shape_length(call->getArg(i));
  return 1000;
}

std::size_t foreign_tensor_dims(const Context& cx, const CallExpr* call) {
  if (const std::size_t dims = ggml_dims(cx, call)) return dims;
  return ort_dims(cx, call);
}

bool is_session_run(const Context& cx, const CallExpr* call) {
  const auto* member_call = dyn_cast<CXXMemberCallExpr>(call);
  const CXXMethodDecl* method = member_call ? member_call->getMethodDecl() : nullptr;
  return method && method->getQualifiedNameAsString() == "Ort::Session::Run" &&
         !method->getReturnType()->isVoidType() && !qualified_callee(cx, call).empty();
}

facts::TensorLibrary tensor_library_of(std::string_view written) {
  if (written.starts_with("ggml_")) return facts::TensorLibrary::Ggml;
  if (written.starts_with("Ort::")) return facts::TensorLibrary::OnnxRuntime;
  return facts::TensorLibrary::LibTorch;
}

}  // namespace kvlint::cpp
