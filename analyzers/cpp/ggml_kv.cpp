// Where a ggml K/V tensor's memory lives, and who else writes it (chatglm.cpp, qwen.cpp, whisper.cpp).
// A ggml tensor factory's first argument is the context the tensor's memory comes from
// (`ggml_new_tensor_3d(mctx->ctx_kv.get(), ...)`): the member holding that context, where this file
// creates it (`ctx_kv(make_unique_ggml_context(size, ...))`, `ctx_.ctx_kv = ggml_init(...)`) and
// allocates its backend buffer (`buf_kv = ggml_backend_alloc_ctx_tensors(ctx_kv.get(), backend)`)
// are the same K/V's arena, and a copy into a view of the kept tensor from another class's method
// (`ggml_cpy(ctx, x, ggml_view_3d(ctx, layers[i].attention.k_cache, ...))`) writes the same K/V.
// Both are evidence on the K/V's cache site (CacheSite::evidence), not sites of their own: what the
// code does with the context decides, not its name. A context that holds no K/V tensor (weights,
// compute) gives nothing.
#include <clang/Lex/Lexer.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "analyzers/cpp/walker.hpp"

namespace kvlint::cpp {

using namespace clang;

namespace {

// The member of a class that holds a ggml context, as a factory or buffer allocation is handed it:
// `mctx->ctx_kv.get()`, `ctx_.ctx_kv`, `cache.ctx`; null otherwise. `base` is the object it is read
// from (`mctx`, `ctx_`, `cache`).
const FieldDecl* ggml_context_member(const Expr* arg, const Expr** base = nullptr) {
  arg = strip(arg);
  if (const auto* get = dyn_cast_or_null<CXXMemberCallExpr>(arg);
      get && get->getMethodDecl() && get->getMethodDecl()->getName() == "get")
    arg = strip(get->getImplicitObjectArgument());
  const auto* member = dyn_cast_or_null<MemberExpr>(arg);
  const auto* field = member ? dyn_cast<FieldDecl>(member->getMemberDecl()) : nullptr;
  if (!field || field->getType().getAsString().find("ggml_context") == std::string::npos) return nullptr;
  if (base) *base = member->getBase();
  return field;
}

// An object that dies with the function (`ModelContext mctx;` in a method that loads a prefix):
// what it holds is not the kept K/V's context, though its members are the same fields.
bool local_object(const Expr* base) {
  const auto* ref = dyn_cast_or_null<DeclRefExpr>(strip(base));
  const auto* var = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
  return var && !isa<ParmVarDecl>(var) && var->hasLocalStorage() && !var->getType()->isPointerType() &&
         !var->getType()->isReferenceType();
}

// An expression as written, comments left out (a size split over lines with a comment on one) and
// whitespace folded.
std::string ggml_size_text(const Context& cx, const Expr* expr) {
  const std::string raw = text_of(cx, expr->getSourceRange());
  if (raw.find("//") == std::string::npos && raw.find("/*") == std::string::npos) return raw;
  const SourceManager& sm = cx.ast.getSourceManager();
  const std::string_view source = Lexer::getSourceText(
      CharSourceRange::getTokenRange(sm.getExpansionRange(expr->getSourceRange()).getAsRange()), sm,
      cx.ast.getLangOpts());
  std::string out;
  bool space = false;
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source.substr(i).starts_with("//")) {
      i = std::min(source.find('\n', i), source.size());
      space = !out.empty();
      continue;
    }
    if (source.substr(i).starts_with("/*")) {
      i = std::min(source.find("*/", i + 2), source.size()) + 1;
      space = !out.empty();
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(source[i]))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += source[i];
    if (out.size() >= facts::kMaxTextBytes) break;
  }
  return out;
}

std::string ggml_callee(const Context& cx, const CallExpr* call) {
  return last_component(qualified_callee(cx, call));
}

// The member a kept ggml tensor is read through (`k_cache`, `attn.k_cache`,
// `layers[i].attention.k_cache` in a template, where Clang knows only the name).
bool reads_member(const Expr* e, const FieldDecl* field) {
  e = strip(e);
  if (const auto* m = dyn_cast_or_null<MemberExpr>(e)) return m->getMemberDecl() == field;
  if (const auto* d = dyn_cast_or_null<CXXDependentScopeMemberExpr>(e))
    return d->getMember().getAsString() == field->getName();
  return false;
}

// What one function does to the K/V's context and tensors, for one K/V member.
class GgmlKvEvidence {
 public:
  GgmlKvEvidence(const Context& cx, const FieldDecl& kv, const FieldDecl* arena)
      : cx_(cx), kv_(kv), arena_(arena) {}

  void scan(const FunctionDecl& function, std::vector<facts::KvEvidence>& out) const {
    const CXXRecordDecl* owner = owner_of(&function);
    const std::string owner_name = owner ? owner->getNameAsString() : std::string();
    const std::string method = method_name(&function);
    if (arena_)
      if (const auto* ctor = dyn_cast<CXXConstructorDecl>(&function))
        for (const CXXCtorInitializer* init : ctor->inits())
          if (init->isWritten() && init->getMember() == arena_ && init->getInit())
            created(function, owner_name, method, init->getSourceRange(), init->getInit(), out);
    bool written = false;
    const std::set<const VarDecl*> views =
        owner != kv_.getParent() ? kv_views(function) : std::set<const VarDecl*>{};
    for_each_stmt(function.getBody(), [&](const Stmt* s) {
      const Expr* lhs = nullptr;
      const Expr* rhs = nullptr;
      if (arena_ && binary_operands(dyn_cast_or_null<Expr>(s), BO_Assign, OO_Equal, &lhs, &rhs)) {
        const auto* target = dyn_cast<MemberExpr>(strip(lhs));
        if (target && target->getMemberDecl() == arena_ && !local_object(target->getBase()))
          created(function, owner_name, method, s->getSourceRange(), rhs, out);
        else if (target)
          buffer(owner_name, method, *target, s, rhs, out);
      }
      const auto* call = dyn_cast<CallExpr>(s);
      if (!written && call && owner != kv_.getParent() && writes_kv(*call, views)) {
        written = true;
        facts::KvEvidence e;
        e.kind = facts::KvEvidence::Kind::WrittenByOther;
        e.loc = location_of(cx_, call->getSourceRange());
        e.owner_class = owner_name;
        e.member = kv_.getNameAsString();
        e.method = method;
        e.by = "`ggml_cpy` into a view";
        out.push_back(std::move(e));
      }
    });
  }

 private:
  // `ctx_kv(make_unique_ggml_context(size, ...))`, `ctx_.ctx_kv = ggml_init(params)`: the first call
  // the value makes (not `nullptr`, not a move from elsewhere), with its size.
  void created(const FunctionDecl& function, const std::string& owner, const std::string& method,
               SourceRange at, const Expr* value, std::vector<facts::KvEvidence>& out) const {
    const CallExpr* maker = nullptr;
    for_each_stmt(value, [&](const Stmt* s) {
      const auto* call = dyn_cast<CallExpr>(s);
      if (!maker && call && !isa<CXXMemberCallExpr, CXXOperatorCallExpr>(call) &&
          !ggml_callee(cx_, call).empty() && !qualified_callee(cx_, call).starts_with("std::"))
        maker = call;
    });
    if (!maker) return;
    facts::KvEvidence e;
    e.kind = facts::KvEvidence::Kind::ArenaCreated;
    e.loc = location_of(cx_, at);
    e.owner_class = owner;
    e.member = arena_->getNameAsString();
    e.method = method;
    e.by = ggml_callee(cx_, maker);
    if (maker->getNumArgs() > 0) e.detail = ggml_size_text(cx_, maker->getArg(0));
    out.push_back(std::move(e));
    // `const size_t ctx_kv_size = 2 * layers * ...; ... make_unique_ggml_context(ctx_kv_size + MB, ...)`.
    if (maker->getNumArgs() == 0) return;
    for_each_stmt(maker->getArg(0), [&](const Stmt* s) {
      const auto* ref = dyn_cast<DeclRefExpr>(s);
      const auto* var = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
      if (!var || isa<ParmVarDecl>(var) || !var->hasLocalStorage() || !var->getInit() ||
          var->getParentFunctionOrMethod() != &function || !in_main_file(cx_, var->getLocation()))
        return;
      facts::KvEvidence sized;
      sized.kind = facts::KvEvidence::Kind::ArenaSized;
      sized.loc = location_of(cx_, var->getSourceRange());
      sized.owner_class = owner;
      sized.member = var->getNameAsString();
      sized.method = method;
      sized.detail = ggml_size_text(cx_, var->getInit());
      out.push_back(std::move(sized));
    });
  }

  // `mctx->buf_kv = unique_ggml_backend_buffer_t(ggml_backend_alloc_ctx_tensors(mctx->ctx_kv.get(), ...))`:
  // a buffer kept in a member, allocated for the context's tensors.
  void buffer(const std::string& owner, const std::string& method, const MemberExpr& target, const Stmt* at,
              const Expr* value, std::vector<facts::KvEvidence>& out) const {
    if (local_object(target.getBase())) return;
    bool allocates = false;
    for_each_stmt(value, [&](const Stmt* s) {
      const auto* call = dyn_cast<CallExpr>(s);
      const Expr* base = nullptr;
      if (call && call->getNumArgs() > 0 &&
          ggml_callee(cx_, call).find("alloc_ctx_tensors") != std::string::npos &&
          ggml_context_member(call->getArg(0), &base) == arena_ && !local_object(base))
        allocates = true;
    });
    if (!allocates) return;
    facts::KvEvidence e;
    e.kind = facts::KvEvidence::Kind::ArenaBuffer;
    e.loc = location_of(cx_, at->getSourceRange());
    e.owner_class = owner;
    e.member = target.getMemberDecl()->getNameAsString();
    e.method = method;
    e.by = "ggml_backend_alloc_ctx_tensors";
    out.push_back(std::move(e));
  }

  // `ggml_view_3d(ctx, layers[i].attention.k_cache, ...)`: a view of the kept tensor.
  bool views_kv(const Expr* e) const {
    const auto* view = dyn_cast_or_null<CallExpr>(strip(e));
    return view && ggml_callee(cx_, view).starts_with("ggml_view") && view->getNumArgs() > 1 &&
           reads_member(view->getArg(1), &kv_);
  }

  // The locals of a function that hold a view of the kept tensor: initialised with one, or assigned
  // one in a branch (`struct ggml_tensor* k; if (...) k = ggml_view_1d(ctx, kv_self.k, ...); else ...`).
  std::set<const VarDecl*> kv_views(const FunctionDecl& function) const {
    std::set<const VarDecl*> out;
    for_each_stmt(function.getBody(), [&](const Stmt* s) {
      const Expr* lhs = nullptr;
      const Expr* rhs = nullptr;
      if (const auto* decl = dyn_cast<DeclStmt>(s)) {
        for (const Decl* d : decl->decls())
          if (const auto* var = dyn_cast<VarDecl>(d); var && var->getInit() && views_kv(var->getInit()))
            out.insert(var);
      } else if (binary_operands(dyn_cast_or_null<Expr>(s), BO_Assign, OO_Equal, &lhs, &rhs) &&
                 views_kv(rhs)) {
        if (const auto* ref = dyn_cast<DeclRefExpr>(strip(lhs)))
          if (const auto* var = dyn_cast<VarDecl>(ref->getDecl()); var && var->hasLocalStorage())
            out.insert(var);
      }
    });
    return out;
  }

  // `ggml_cpy(ctx, x, view)` where the view (inline, or a local holding one) is of the kept tensor:
  // a write into it.
  bool writes_kv(const CallExpr& call, const std::set<const VarDecl*>& views) const {
    if (ggml_callee(cx_, &call) != "ggml_cpy" || call.getNumArgs() < 3) return false;
    const Expr* destination = strip(call.getArg(2));
    if (const auto* ref = dyn_cast_or_null<DeclRefExpr>(destination))
      return views.contains(dyn_cast<VarDecl>(ref->getDecl()));
    return views_kv(destination);
  }

  const Context& cx_;
  const FieldDecl& kv_;
  const FieldDecl* arena_;
};

}  // namespace

void find_ggml_kv_evidence(Context& cx, const std::vector<const FunctionDecl*>& functions) {
  // Only a file with a ggml K/V site pays for the passes below.
  if (std::none_of(cx.out.cache_sites.begin(), cx.out.cache_sites.end(),
                   [](const facts::CacheSite& s) { return s.tensor_library == facts::TensorLibrary::Ggml; }))
    return;
  // Each ggml K/V tensor a member keeps: the factory call (a site's location) and the member.
  std::vector<std::pair<const CallExpr*, const FieldDecl*>> kept;
  auto factories_into = [&](const Stmt* value, const FieldDecl* member) {
    for_each_stmt(value, [&](const Stmt* s) {
      if (const auto* call = dyn_cast<CallExpr>(s); call && ggml_dims(cx, call) > 0)
        kept.emplace_back(call, member);
    });
  };
  for (const FunctionDecl* function : functions) {
    if (const auto* ctor = dyn_cast<CXXConstructorDecl>(function))
      for (const CXXCtorInitializer* init : ctor->inits())
        if (init->isWritten() && init->getMember()) factories_into(init->getInit(), init->getMember());
    for_each_stmt(function->getBody(), [&](const Stmt* s) {
      const Expr* lhs = nullptr;
      const Expr* rhs = nullptr;
      if (!binary_operands(dyn_cast_or_null<Expr>(s), BO_Assign, OO_Equal, &lhs, &rhs)) return;
      if (const auto* m = dyn_cast<MemberExpr>(strip(lhs)))
        if (const auto* field = dyn_cast<FieldDecl>(m->getMemberDecl())) factories_into(rhs, field);
    });
  }
  for (const auto& [call, member] : kept) {
    const facts::Location at = location_of(cx, call->getSourceRange());
    auto site =
        std::find_if(cx.out.cache_sites.begin(), cx.out.cache_sites.end(), [&](const facts::CacheSite& s) {
          return s.loc == at && s.tensor_library == facts::TensorLibrary::Ggml && s.evidence.empty();
        });
    if (site == cx.out.cache_sites.end()) continue;
    const Expr* base = nullptr;
    const FieldDecl* arena = call->getNumArgs() > 0 ? ggml_context_member(call->getArg(0), &base) : nullptr;
    if (arena && local_object(base)) arena = nullptr;
    if (arena && in_main_file(cx, arena->getLocation())) {
      facts::KvEvidence e;
      e.kind = facts::KvEvidence::Kind::ArenaMember;
      e.loc = location_of(cx, arena->getSourceRange());
      e.owner_class = arena->getParent()->getNameAsString();
      e.member = arena->getNameAsString();
      site->evidence.push_back(std::move(e));
    }
    const GgmlKvEvidence evidence(cx, *member, arena);
    for (const FunctionDecl* function : functions) evidence.scan(*function, site->evidence);
  }
}

}  // namespace kvlint::cpp
