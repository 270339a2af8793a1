// The translation-unit walker: visits the main file's classes, functions and
// constants in source order and dispatches each to the extractors (walker.hpp),
// plus the shared helpers that render source text, locations and dotted names.
#include "analyzers/cpp/walker.hpp"

#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Lex/Lexer.h>

#include <algorithm>
#include <cctype>

namespace kvlint::cpp {

using namespace clang;

void charge(WorkMeter& meter, std::uint64_t steps) {
  meter.steps += steps;
  if (meter.steps > meter.budget) throw WorkBudgetExceeded{};
}

bool in_main_file(const Context& cx, SourceLocation at) {
  const SourceManager& sm = cx.ast.getSourceManager();
  return at.isValid() && sm.isWrittenInMainFile(sm.getExpansionLoc(at));
}

facts::Location location_of(const Context& cx, SourceRange range) {
  const SourceManager& sm = cx.ast.getSourceManager();
  facts::Location loc;
  loc.file = cx.file;
  const SourceLocation begin = sm.getExpansionLoc(range.getBegin());
  SourceLocation end = sm.getExpansionLoc(range.getEnd());
  end = Lexer::getLocForEndOfToken(end, 0, sm, cx.ast.getLangOpts());
  if (begin.isInvalid()) return loc;
  loc.line = sm.getExpansionLineNumber(begin);
  loc.column = sm.getExpansionColumnNumber(begin);
  if (end.isValid()) {
    loc.end_line = sm.getExpansionLineNumber(end);
    loc.end_column = sm.getExpansionColumnNumber(end);
  } else {
    loc.end_line = loc.line;
    loc.end_column = loc.column;
  }
  return loc;
}

std::string text_of(const Context& cx, SourceRange range) {
  const SourceManager& sm = cx.ast.getSourceManager();
  const CharSourceRange chars = CharSourceRange::getTokenRange(sm.getExpansionRange(range).getAsRange());
  const StringRef raw = Lexer::getSourceText(chars, sm, cx.ast.getLangOpts());
  if (cx.work) charge(*cx.work, 1 + std::min<std::size_t>(raw.size(), facts::kMaxTextBytes));
  std::string out;
  bool space = false;
  for (char c : raw) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
    if (out.size() >= facts::kMaxTextBytes) break;
  }
  return out;
}

unsigned offset_of(const Context& cx, SourceLocation at) {
  const SourceManager& sm = cx.ast.getSourceManager();
  return sm.getFileOffset(sm.getExpansionLoc(at));
}

// `a op b` as a builtin operator, or as an overloaded or type-dependent one (a class template's
// `_DataType*` arithmetic is a CXXOperatorCallExpr when operator overloads are in scope).
bool binary_operands(const Expr* e, BinaryOperatorKind builtin, OverloadedOperatorKind overloaded,
                     const Expr** lhs, const Expr** rhs) {
  if (const auto* b = dyn_cast_or_null<BinaryOperator>(e); b && b->getOpcode() == builtin) {
    *lhs = b->getLHS();
    *rhs = b->getRHS();
    return true;
  }
  if (const auto* op = dyn_cast_or_null<CXXOperatorCallExpr>(e);
      op && op->getOperator() == overloaded && op->getNumArgs() == 2) {
    *lhs = op->getArg(0);
    *rhs = op->getArg(1);
    return true;
  }
  return false;
}

const Expr* strip(const Expr* expr) {
  while (expr) {
    const Expr* next = expr->IgnoreParenImpCasts();
    if (const auto* e = dyn_cast<ExprWithCleanups>(next))
      next = e->getSubExpr();
    else if (const auto* m = dyn_cast<MaterializeTemporaryExpr>(next))
      next = m->getSubExpr();
    else if (const auto* b = dyn_cast<CXXBindTemporaryExpr>(next))
      next = b->getSubExpr();
    else if (const auto* c = dyn_cast<CXXConstructExpr>(next);
             c && c->getNumArgs() == 1 && c->getConstructor() &&
             (c->getConstructor()->isCopyOrMoveConstructor() ||
              c->getConstructor()->isConvertingConstructor(false)) &&
             !isa<CXXTemporaryObjectExpr>(c))
      next = c->getArg(0);
    else if (const auto* f = dyn_cast<CXXFunctionalCastExpr>(next))
      next = f->getSubExpr();
    if (next == expr) return expr;
    expr = next;
  }
  return expr;
}

namespace {

// Longer dotted names than any a rule matches are not names (`a.b.c...` of thousands of links).
constexpr std::size_t kMaxDottedLinks = 64;

std::string with_dots(std::string text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == ':' && i + 1 < text.size() && text[i + 1] == ':') {
      if (!out.empty()) out += '.';
      ++i;
    } else if (!std::isspace(static_cast<unsigned char>(text[i]))) {
      out += text[i];
    }
  }
  return out;
}

bool is_identifier_path(std::string_view text) {
  if (text.empty()) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  });
}

void collect_names(const Context& cx, const Expr* root, std::vector<std::string>& names) {
  for_each_stmt(root, [&](const Stmt* s) {
    if (cx.work) charge(*cx.work, 1 + names.size());
    const auto* e = dyn_cast<Expr>(s);
    if (!e) return;
    if (!isa<DeclRefExpr, MemberExpr, CXXDependentScopeMemberExpr, UnresolvedMemberExpr,
             DependentScopeDeclRefExpr, UnresolvedLookupExpr>(e))
      return;
    std::string d = dotted(cx, e);
    if (d.empty() || std::find(names.begin(), names.end(), d) != names.end()) return;
    // Keep the longest path only: `self.cfg.max_model_len` covers `self.cfg`.
    for (auto& n : names)
      if (d.starts_with(n + ".")) {
        n = d;
        return;
      }
    for (const auto& n : names)
      if (n.starts_with(d + ".")) return;
    names.push_back(std::move(d));
  });
}

}  // namespace

std::string member_in(const std::string& dotted_path) {
  if (!dotted_path.starts_with("self.")) return {};
  const std::string rest = dotted_path.substr(5);
  return rest.substr(0, rest.find('.'));
}

// Iterative and bounded: a chain `s.a.a.a...` of any length costs at most kMaxDottedLinks
// steps and one string (recursing per link, and copying the growing name at each, made a
// 20,000-link chain take minutes).
std::string dotted(const Context& cx, const Expr* expr) {
  std::vector<std::string> members;  // the outermost link first
  std::string root;
  for (std::size_t links = 0;; ++links) {
    if (links > kMaxDottedLinks) return {};  // longer than any name a rule matches
    if (cx.work) charge(*cx.work, 1);
    expr = strip(expr);
    if (!expr) return {};
    if (isa<CXXThisExpr>(expr)) {
      root = "self";
      break;
    }
    if (const auto* m = dyn_cast<MemberExpr>(expr)) {
      members.push_back(m->getMemberNameInfo().getAsString());
      expr = m->getBase();
      continue;
    }
    if (const auto* m = dyn_cast<CXXDependentScopeMemberExpr>(expr)) {
      members.push_back(m->getMember().getAsString());
      if (m->isImplicitAccess()) {
        root = "self";
        break;
      }
      expr = m->getBase();
      continue;
    }
    if (const auto* m = dyn_cast<UnresolvedMemberExpr>(expr)) {
      members.push_back(m->getMemberName().getAsString());
      if (m->isImplicitAccess()) {
        root = "self";
        break;
      }
      expr = m->getBase();
      continue;
    }
    if (const auto* op = dyn_cast<CXXOperatorCallExpr>(expr)) {
      // `holder_->x` and `*ptr_`: the object the operator reaches through; `graphs_[bs]`: an
      // element of the container, named by the container.
      if ((op->getOperator() == OO_Arrow || op->getOperator() == OO_Star ||
           op->getOperator() == OO_Subscript) &&
          op->getNumArgs() >= 1) {
        expr = op->getArg(0);
        continue;
      }
      return {};
    }
    if (const auto* sub = dyn_cast<ArraySubscriptExpr>(expr)) {
      expr = sub->getBase();
      continue;
    }
    if (const auto* call = dyn_cast<CXXMemberCallExpr>(expr)) {
      // `graphs_.back()`, `layers_.at(i)`, `holder_.get()`: an element (or the object) of what it is called
      // on.
      const CXXMethodDecl* method = call->getMethodDecl();
      const std::string name = method && method->getIdentifier() ? method->getName().str() : std::string();
      if (name != "back" && name != "front" && name != "at" && name != "get" && name != "value") return {};
      expr = call->getImplicitObjectArgument();
      continue;
    }
    if (const auto* u = dyn_cast<UnaryOperator>(expr)) {
      if (u->getOpcode() != UO_Deref) return {};
      expr = u->getSubExpr();
      continue;
    }
    if (isa<DeclRefExpr, DependentScopeDeclRefExpr, UnresolvedLookupExpr>(expr)) {
      root = with_dots(text_of(cx, expr->getSourceRange()));
      if (!is_identifier_path(root)) return {};
      break;
    }
    return {};
  }
  for (auto it = members.rbegin(); it != members.rend(); ++it) {
    root += '.';
    root += *it;
  }
  return root;
}

std::string callee_of(const Context& cx, const CallExpr* call) {
  if (const auto* op = dyn_cast<CXXOperatorCallExpr>(call)) {
    // `decoder_(x)`: a held module called directly.
    if (op->getOperator() == OO_Call && op->getNumArgs() >= 1) return dotted(cx, op->getArg(0));
    return {};
  }
  const Expr* callee = strip(call->getCallee());
  std::string d = dotted(cx, callee);
  if (!d.empty()) return d;
  // Degraded mode: an unresolved callee is still spelled (`torch::zeros`, `graph.capture_begin`).
  std::string text = with_dots(text_of(cx, callee->getSourceRange()));
  std::replace(text.begin(), text.end(), '>', '.');
  text.erase(std::remove(text.begin(), text.end(), '-'), text.end());
  if (const auto angle = text.find('<'); angle != std::string::npos) text.erase(angle);
  return is_identifier_path(text) ? text : std::string();
}

std::string qualified_callee(const Context& cx, const CallExpr* call) {
  if (const FunctionDecl* f = call->getDirectCallee()) return f->getQualifiedNameAsString();
  std::string text = text_of(cx, strip(call->getCallee())->getSourceRange());
  if (const auto angle = text.find('<'); angle != std::string::npos) text.erase(angle);
  return text;
}

std::optional<RecoveredCall> recovered_call(const Stmt* s) {
  const auto* recovery = dyn_cast_or_null<RecoveryExpr>(s);
  if (!recovery || recovery->subExpressions().empty()) return std::nullopt;
  const Expr* callee = recovery->subExpressions().front();
  if (!callee || !isa<DeclRefExpr, UnresolvedLookupExpr, DependentScopeDeclRefExpr, MemberExpr,
                      UnresolvedMemberExpr, CXXDependentScopeMemberExpr>(callee->IgnoreParenImpCasts()))
    return std::nullopt;
  RecoveredCall call;
  call.callee = callee;
  for (const Expr* arg : recovery->subExpressions().drop_front()) call.args.push_back(arg);
  return call;
}

std::string callee_of(const Context& cx, const RecoveredCall& call) {
  std::string d = dotted(cx, call.callee);
  if (!d.empty()) return d;
  std::string text = with_dots(text_of(cx, call.callee->getSourceRange()));
  if (const auto angle = text.find('<'); angle != std::string::npos) text.erase(angle);
  return is_identifier_path(text) ? text : std::string();
}

std::string qualified_callee(const Context& cx, const RecoveredCall& call) {
  if (const auto* ref = dyn_cast<DeclRefExpr>(call.callee->IgnoreParenImpCasts()))
    if (const auto* f = dyn_cast<FunctionDecl>(ref->getDecl())) return f->getQualifiedNameAsString();
  std::string text = text_of(cx, call.callee->getSourceRange());
  if (const auto angle = text.find('<'); angle != std::string::npos) text.erase(angle);
  return text;
}

facts::Expression expression_of(const Context& cx, const Expr* expr) {
  facts::Expression out;
  if (!expr) return out;
  out.text = text_of(cx, expr->getSourceRange());
  out.loc = location_of(cx, expr->getSourceRange());
  const Expr* e = strip(expr);
  std::string sign;
  if (const auto* u = dyn_cast<UnaryOperator>(e);
      u && (u->getOpcode() == UO_Minus || u->getOpcode() == UO_Plus)) {
    const Expr* inner = u->getSubExpr()->IgnoreParenImpCasts();
    if (isa<IntegerLiteral, FloatingLiteral>(inner)) {
      sign = u->getOpcode() == UO_Minus ? "-" : "";
      e = inner;
    }
  }
  if (const auto* i = dyn_cast<IntegerLiteral>(e)) {
    out.literal = facts::LiteralKind::Int;
    out.literal_value = sign + llvm::toString(i->getValue(), 10, false);
  } else if (isa<FloatingLiteral>(e)) {
    out.literal = facts::LiteralKind::Float;
    out.literal_value = sign + text_of(cx, e->getSourceRange());
  } else if (const auto* s = dyn_cast<StringLiteral>(e); s && sign.empty()) {
    out.literal = facts::LiteralKind::String;
    out.literal_value = s->getCharByteWidth() == 1 ? s->getString().str() : out.text;
  } else if (const auto* b = dyn_cast<CXXBoolLiteralExpr>(e); b && sign.empty()) {
    out.literal = facts::LiteralKind::Bool;
    out.literal_value = b->getValue() ? "True" : "False";
  } else if (isa<CXXNullPtrLiteralExpr>(e) && sign.empty()) {
    out.literal = facts::LiteralKind::NoneValue;
    out.literal_value = "None";
  }
  collect_names(cx, expr, out.names);
  return out;
}

const CXXRecordDecl* owner_of(const FunctionDecl* function) {
  const auto* method = dyn_cast_or_null<CXXMethodDecl>(function);
  if (!method) return nullptr;
  const CXXRecordDecl* record = method->getParent();
  return record && !record->isLambda() ? record : nullptr;
}

std::string last_component(std::string_view qualified) {
  const auto colon = qualified.rfind("::");
  return std::string(colon == std::string_view::npos ? qualified : qualified.substr(colon + 2));
}

std::string method_name(const FunctionDecl* function) {
  if (isa<CXXConstructorDecl>(function)) return "__init__";
  return function->getNameAsString();
}

bool is_library_class(const CXXRecordDecl* record) {
  if (!record) return true;
  const std::string name = record->getQualifiedNameAsString();
  for (const char* prefix : {"std::", "torch::", "at::", "c10::", "__gnu_cxx::", "kvlint::"})
    if (name.starts_with(prefix)) return true;
  return false;
}

const CXXRecordDecl* held_class(QualType type, bool* in_container) {
  for (int depth = 0; depth < 8 && !type.isNull(); ++depth) {
    type = type.getNonReferenceType();
    if (type->isPointerType()) {
      type = type->getPointeeType();
      continue;
    }
    const auto* record = type->getAsCXXRecordDecl();
    if (!record) {
      // An unresolved template specialization (degraded mode) names its template.
      if (const auto* spec = type->getAs<TemplateSpecializationType>())
        if (const auto* t = spec->getTemplateName().getAsTemplateDecl())
          record = dyn_cast_or_null<CXXRecordDecl>(t->getTemplatedDecl());
      if (!record) return nullptr;
    }
    const auto* spec = dyn_cast<ClassTemplateSpecializationDecl>(record);
    const std::string name = record->getQualifiedNameAsString();
    auto first_argument = [&]() -> QualType {
      if (!spec || spec->getTemplateArgs().size() == 0) return {};
      const TemplateArgument& a = spec->getTemplateArgs()[0];
      return a.getKind() == TemplateArgument::Type ? a.getAsType() : QualType();
    };
    auto second_argument = [&]() -> QualType {
      if (!spec || spec->getTemplateArgs().size() < 2) return {};
      const TemplateArgument& a = spec->getTemplateArgs()[1];
      return a.getKind() == TemplateArgument::Type ? a.getAsType() : QualType();
    };
    if (name == "std::shared_ptr" || name == "std::unique_ptr" || name == "std::optional" ||
        name == "torch::nn::ModuleHolder" || name == "c10::optional") {
      type = first_argument();
      continue;
    }
    if (name == "std::vector" || name == "std::deque" || name == "std::list" || name == "std::array") {
      if (in_container) *in_container = true;
      type = first_argument();
      continue;
    }
    if (name == "std::map" || name == "std::unordered_map") {
      if (in_container) *in_container = true;
      type = second_argument();
      continue;
    }
    // A TORCH_MODULE holder: `class Decoder : public torch::nn::ModuleHolder<DecoderImpl>`.
    if (record->hasDefinition())
      for (const auto& base : record->getDefinition()->bases()) {
        const auto* b = base.getType()->getAsCXXRecordDecl();
        if (b && b->getQualifiedNameAsString() == "torch::nn::ModuleHolder") {
          type = base.getType();
          record = nullptr;
          break;
        }
      }
    if (!record) continue;
    return record;
  }
  return nullptr;
}

const FieldDecl* self_member(const Expr* expr) {
  for (int depth = 0; depth < 16 && expr; ++depth) {
    expr = strip(expr);
    if (const auto* m = dyn_cast<MemberExpr>(expr)) {
      if (isa<CXXThisExpr>(strip(m->getBase()))) return dyn_cast<FieldDecl>(m->getMemberDecl());
      expr = m->getBase();
    } else if (const auto* op = dyn_cast<CXXOperatorCallExpr>(expr)) {
      if (op->getNumArgs() < 1) return nullptr;
      expr = op->getArg(0);
    } else if (const auto* sub = dyn_cast<ArraySubscriptExpr>(expr)) {
      expr = sub->getBase();
    } else if (const auto* call = dyn_cast<CXXMemberCallExpr>(expr)) {
      expr = call->getImplicitObjectArgument();
    } else if (const auto* u = dyn_cast<UnaryOperator>(expr); u && u->getOpcode() == UO_Deref) {
      expr = u->getSubExpr();
    } else if (const VarDecl* alias = local_alias(expr)) {
      expr = alias->getInit();
    } else {
      return nullptr;
    }
  }
  return nullptr;
}

const VarDecl* local_alias(const Expr* expr) {
  const auto* ref = dyn_cast_or_null<DeclRefExpr>(expr ? strip(expr) : nullptr);
  const auto* var = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
  if (!var || !var->hasLocalStorage() || isa<ParmVarDecl>(var) || !var->getInit()) return nullptr;
  // A reference or pointer names the element it was bound to (`Tier& tier = *tiers_.back()`,
  // `auto* t = tiers_[i].get()`); a range-for's own variables (`__range1`, `__begin1`) lead from
  // `for (auto& tier : tiers_)` to the container. A copy of a struct is another object.
  const QualType type = var->getType();
  return type->isReferenceType() || type->isPointerType() || var->isImplicit() ? var : nullptr;
}

namespace {

// `m_kCache_` -> "mkcache"-free form: trailing `_` and a leading `m_` dropped, lower case.
std::string normalized_member(std::string_view name) {
  std::string n(name);
  while (!n.empty() && n.back() == '_') n.pop_back();
  if (n.starts_with("m_")) n = n.substr(2);
  std::transform(n.begin(), n.end(), n.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return n;
}

bool is_module_class(const CXXRecordDecl* record) {
  if (!record || !record->hasDefinition()) return false;
  for (const auto& base : record->getDefinition()->bases()) {
    const QualType type = base.getType();
    std::string name;
    if (const auto* b = type->getAsCXXRecordDecl())
      name = b->getQualifiedNameAsString();
    else if (const auto* spec = type->getAs<TemplateSpecializationType>())
      if (const auto* t = spec->getTemplateName().getAsTemplateDecl()) name = t->getQualifiedNameAsString();
    if (name.starts_with("torch::nn::")) return true;
    if (const auto* b = type->getAsCXXRecordDecl(); b && b != record && is_module_class(b)) return true;
  }
  return false;
}

// The K/V pair of a store's members: `keys`/`values`, `k`/`v`, `key`/`value`.
bool kv_pair_member(const CXXRecordDecl& record, std::string_view member) {
  static constexpr std::pair<std::string_view, std::string_view> kPairs[] = {
      {"keys", "values"}, {"key", "value"}, {"k", "v"}};
  const std::string name = normalized_member(member);
  for (const auto& [k, v] : kPairs) {
    if (name != k && name != v) continue;
    const std::string_view partner = name == k ? v : k;
    for (const FieldDecl* field : record.fields())
      if (normalized_member(field->getName()) == partner) return true;
  }
  return false;
}

}  // namespace

bool is_kv_store(const facts::Vocabulary& vocabulary, const CXXRecordDecl* record) {
  if (!record || !record->hasDefinition() || is_library_class(record)) return false;
  record = record->getDefinition();
  if (is_module_class(record)) return false;
  for (const FieldDecl* field : record->fields())
    if (is_kv_name(vocabulary, field->getName()) || kv_pair_member(*record, field->getName())) return true;
  return false;
}

bool holds_kv(const facts::Vocabulary& vocabulary, const FieldDecl* field) {
  if (!field) return false;
  if (is_kv_name(vocabulary, field->getName())) return true;
  if (const auto* owner = dyn_cast<CXXRecordDecl>(field->getParent());
      owner && !is_module_class(owner) && kv_pair_member(*owner, field->getName()))
    return true;
  // Owned only: a reference or raw pointer to a store (an engine's paged pool handed in) is
  // someone else's memory.
  const QualType type = field->getType();
  if (type->isReferenceType() || type->isPointerType()) return false;
  return is_kv_store(vocabulary, held_class(type));
}

bool kv_member(const facts::Vocabulary& vocabulary, const CXXRecordDecl* owner, std::string_view member) {
  if (is_kv_name(vocabulary, member)) return true;
  if (!owner || !owner->hasDefinition()) return false;
  for (const FieldDecl* field : owner->getDefinition()->fields())
    if (std::string_view(field->getName()) == member) return holds_kv(vocabulary, field);
  return false;
}

std::string qualified_name(const CXXRecordDecl& record) {
  return with_dots(record.getQualifiedNameAsString());
}

bool is_not_kv_name(const facts::Vocabulary& vocabulary, std::string_view name) {
  const std::string n = normalized_member(name);
  return std::any_of(vocabulary.cpp.not_kv_tensor_names.begin(), vocabulary.cpp.not_kv_tensor_names.end(),
                     [&](const std::string& bad) { return n.find(bad) != std::string::npos; });
}

bool is_kv_name(const facts::Vocabulary& vocabulary, std::string_view name) {
  if (is_not_kv_name(vocabulary, name)) return false;
  const std::string n = normalized_member(name);
  for (const auto& kv : vocabulary.cpp.kv_tensor_names) {
    if (n == kv || n == kv + "s") return true;
    if (n.size() > kv.size() && n.ends_with(kv) && n[n.size() - kv.size() - 1] == '_') return true;
  }
  return false;
}

namespace {

class Visitor : public RecursiveASTVisitor<Visitor> {
 public:
  explicit Visitor(Context& cx) : cx_(cx) {}
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool shouldVisitImplicitCode() const { return false; }

  bool VisitCXXRecordDecl(CXXRecordDecl* record) {
    note_progress(*record);
    if (!record->isThisDeclarationADefinition() || record->isLambda() || record->isImplicit() ||
        record->getIdentifier() == nullptr || !in_main_file(cx_, record->getLocation()) ||
        record->getLocation().isMacroID())
      return true;
    extract_class(cx_, *record);
    extract_member_caches(cx_, *record);
    return true;
  }

  bool VisitVarDecl(VarDecl* var) {
    note_progress(*var);
    if (isa<ParmVarDecl>(var) || !in_main_file(cx_, var->getLocation())) return true;
    if (var->isFileVarDecl() || var->isStaticDataMember()) extract_constant(cx_, *var);
    return true;
  }

  bool VisitFunctionDecl(FunctionDecl* function) {
    note_progress(*function);
    if (!function->doesThisDeclarationHaveABody() || !in_main_file(cx_, function->getLocation()) ||
        function->isImplicit())
      return true;
    if (const auto* method = dyn_cast<CXXMethodDecl>(function); method && method->getParent()->isLambda())
      return true;
    const CXXRecordDecl* owner = owner_of(function);
    facts::MethodFact fact = method_fact(cx_, *function);
    if (owner) {
      // A method of a class defined in this file, or one defined out of line for a class
      // defined in a header (`Decoder::Decoder(...)` in dec.cpp): the header's class gets an
      // out-of-line entry here, which Project joins to the header's facts.
      const std::string qualified = qualified_name(*owner);
      auto it = std::find_if(cx_.out.classes.begin(), cx_.out.classes.end(),
                             [&](const facts::ClassFact& c) { return c.qualified_name == qualified; });
      if (it == cx_.out.classes.end() && !is_library_class(owner)) {
        const CXXRecordDecl& definition = owner->getDefinition() ? *owner->getDefinition() : *owner;
        cx_.out.classes.push_back(out_of_line_class(cx_, definition, *function));
        it = std::prev(cx_.out.classes.end());
      }
      if (it != cx_.out.classes.end()) it->methods.push_back(std::move(fact));
    } else {
      cx_.out.functions.push_back(std::move(fact));
    }
    extract_captures(cx_, *function);
    extract_cache_sites(cx_, *function);
    extract_constructions(cx_, *function);
    extract_attribute_assignments(cx_, *function);
    if (const auto* method = dyn_cast<CXXMethodDecl>(function);
        method && owner && method->getNameAsString() == cx_.vocabulary.declaration_method)
      extract_declaration(cx_, *method);
    return true;
  }

  // Each declaration visited is a step, and where a cut-off walk stood.
  void note_progress(const Decl& decl) {
    if (!cx_.work) return;
    cx_.work->last = decl.getLocation();
    charge(*cx_.work, 1);
  }

 private:
  Context& cx_;
};

// The functions with a body the walk extracts from, for the passes that look at all of them first.
class Functions : public RecursiveASTVisitor<Functions> {
 public:
  explicit Functions(const Context& cx) : cx_(cx) {}
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool shouldVisitImplicitCode() const { return false; }
  bool VisitFunctionDecl(FunctionDecl* function) {
    if (function->doesThisDeclarationHaveABody() && in_main_file(cx_, function->getLocation()) &&
        !function->isImplicit())
      if (const auto* method = dyn_cast<CXXMethodDecl>(function); !method || !method->getParent()->isLambda())
        found.push_back(function);
    return true;
  }
  std::vector<const FunctionDecl*> found;

 private:
  const Context& cx_;
};

}  // namespace

void walk_translation_unit(Context& cx) {
  Functions functions(cx);
  functions.TraverseDecl(cx.ast.getTranslationUnitDecl());
  find_kv_members(cx, functions.found);
  Visitor visitor(cx);
  visitor.TraverseDecl(cx.ast.getTranslationUnitDecl());
  extract_singleton_kv(cx, functions.found);
  find_ggml_kv_evidence(cx, functions.found);
}

}  // namespace kvlint::cpp
