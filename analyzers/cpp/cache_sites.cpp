// Cache sites: instances of cache-vocabulary classes (C++ ports named
// `DynamicCache`, `StaticCache`, ...) and attention K/V tensors: members, buffers
// (`register_buffer("k_cache", ...)`) and container elements whose names match the
// K/V pattern, allocated with `torch::zeros/empty/full/ones`; K/V containers that grow
// in a step method (`push_back`, `emplace_back`, `torch::cat` into the member); and
// containers keyed by a request id (`caches_[request_id] = ...`, `try_emplace`).
#include <clang/AST/ParentMapContext.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Lex/Lexer.h>

#include <algorithm>

#include "analyzers/cpp/walker.hpp"

namespace kvlint::cpp {

using namespace clang;

namespace {

bool is_cache_class_name(const Context& cx, std::string_view name) {
  const auto& classes = cx.vocabulary.cache_classes;
  return std::find(classes.begin(), classes.end(), name) != classes.end();
}

bool is_tensor_allocator(const Context& cx, const std::string& name) {
  if (name.starts_with("ggml_new_tensor")) return true;  // ggml's tensors (chatglm.cpp, whisper.cpp)
  if (is_ort_tensor_factory(name)) return true;          // ONNX Runtime's values (sherpa-onnx)
  if (!name.starts_with("torch::") && !name.starts_with("at::")) return false;
  const auto& allocators = cx.vocabulary.cpp.tensor_allocators;
  return std::find(allocators.begin(), allocators.end(), last_component(name)) != allocators.end();
}

bool is_tensor_allocation(const Context& cx, const CallExpr* call) {
  return is_tensor_allocator(cx, qualified_callee(cx, call));
}

// A method call, also one whose arguments did not compile (its type is then dependent and
// it is a plain CallExpr on a member: `register_buffer("v_cache", <recovered zeros>)`).
bool is_method_call(const CallExpr* call) {
  if (isa<CXXMemberCallExpr>(call)) return true;
  const Expr* callee = call->getCallee() ? call->getCallee()->IgnoreParenImpCasts() : nullptr;
  return callee && isa<MemberExpr, UnresolvedMemberExpr, CXXDependentScopeMemberExpr>(callee);
}

// Where a value ends up: climbs past the nodes that only carry it.
struct Destination {
  facts::Retention retention = facts::Retention::Local;
  std::string retained_as;
  const Expr* key = nullptr;
  std::string member;  // the member (first attribute after self) it is stored in
  bool kv = false;     // what it is stored in holds K/V (see holds_kv)
  // Stored into a K/V store a function is handed by reference (`whisper_kv_cache& cache;
  // cache.k = ggml_new_tensor_1d(...)`): the store's class keeps it, not the function's.
  const CXXRecordDecl* store = nullptr;
};

// `att_cache_ = std::move(torch::zeros(...))`.
bool is_std_move(const Stmt* s) {
  const auto* call = dyn_cast<CallExpr>(s);
  const FunctionDecl* f = call && call->getNumArgs() == 1 ? call->getDirectCallee() : nullptr;
  return f && f->getQualifiedNameAsString() == "std::move";
}

// The member a value written to `target` lands in holds K/V: the member written
// (`kv_cache_[id].key_cache`, `kv_->keys`), else the container or member of `this` reached.
bool stores_kv(const Context& cx, const Expr* target, const std::string& dotted_target) {
  target = strip(target);
  // A member of `this` that only holds what it was handed (the engine's pool) is not the class's.
  const FieldDecl* root = self_member(target);
  if (root && cx.borrowed_members.count(root->getNameAsString())) return false;
  if (const auto* m = dyn_cast<MemberExpr>(target))
    if (const auto* field = dyn_cast<FieldDecl>(m->getMemberDecl())) return holds_kv(cx, field);
  if (root) return holds_kv(cx, root);
  // Degraded mode may leave the member unresolved: its spelling (or its use) decides.
  const std::string last = dotted_target.substr(dotted_target.rfind('.') + 1);
  return !last.empty() && is_kv_member(cx, last);
}

// The key of the container element `target` is, or is a member of: `kv_cache_[id]`,
// `kv_cache_[id].key_cache`, `kv_cache_.at(id).key_cache`; null otherwise.
const Expr* element_key(const Expr* target) {
  for (const Expr* e = strip(target); e; e = strip(e)) {
    if (const auto* op = dyn_cast<CXXOperatorCallExpr>(e)) {
      if (op->getOperator() == OO_Subscript && op->getNumArgs() == 2) return op->getArg(1);
      if (op->getOperator() == OO_Arrow && op->getNumArgs() >= 1) {
        e = op->getArg(0);
        continue;
      }
      return nullptr;
    }
    if (const auto* sub = dyn_cast<ArraySubscriptExpr>(e)) return sub->getIdx();
    if (const auto* call = dyn_cast<CXXMemberCallExpr>(e)) {
      const CXXMethodDecl* method = call->getMethodDecl();
      if (method && method->getIdentifier() && method->getName() == "at" && call->getNumArgs() == 1)
        return call->getArg(0);
      return nullptr;
    }
    if (const auto* m = dyn_cast<MemberExpr>(e)) {
      e = m->getBase();
      continue;
    }
    return nullptr;
  }
  return nullptr;
}

// A member whose type is a map (`std::unordered_map<std::string, LayerKV>`), through pointers.
bool is_map_member(const FieldDecl* field) {
  if (!field) return false;
  QualType type = field->getType().getNonReferenceType();
  while (type->isPointerType()) type = type->getPointeeType();
  const CXXRecordDecl* record = type->getAsCXXRecordDecl();
  if (!record)
    if (const auto* spec = type->getAs<TemplateSpecializationType>())
      if (const auto* t = spec->getTemplateName().getAsTemplateDecl())
        record = dyn_cast_or_null<CXXRecordDecl>(t->getTemplatedDecl());
  if (!record || !record->getIdentifier()) return false;
  const std::string name = record->getName().lower();
  return name.find("map") != std::string::npos || name.find("dict") != std::string::npos;
}

// A stored value's type as declared: a class by its simple name (`Tensor`, `LayerKV`),
// anything else as written (`int8_t*`); "Tensor" when it is not known (a dependent type).
std::string stored_type(const Context& cx, QualType type) {
  if (type.isNull() || type->isDependentType()) return "Tensor";
  type = type.getNonReferenceType();
  if (const CXXRecordDecl* record = type->getAsCXXRecordDecl(); record && record->getIdentifier())
    return record->getName().str();
  PrintingPolicy policy(cx.ast.getLangOpts());
  policy.SuppressTagKeyword = true;
  std::string text = type.getUnqualifiedType().getAsString(policy);
  for (std::size_t at = text.find(" *"); at != std::string::npos; at = text.find(" *", at)) text.erase(at, 1);
  return text;
}

// A pointer's type as written (`_DataType*` in a class template, where stored_type says "Tensor").
std::string type_as_written(const Context& cx, QualType type) {
  if (type.isNull() || !type->isDependentType()) return stored_type(cx, type);
  PrintingPolicy policy(cx.ast.getLangOpts());
  policy.SuppressScope = true;
  std::string text = type.getUnqualifiedType().getAsString(policy);
  for (std::size_t at = text.find(" *"); at != std::string::npos; at = text.find(" *", at)) text.erase(at, 1);
  return text;
}

// What a container holds, as its declaration spells it (`std::vector<int8_t*>`: `int8_t*`; a
// map's mapped type).
std::string element_type(const Context& cx, QualType container, bool keyed) {
  container = container.getNonReferenceType();
  if (container->isPointerType()) container = container->getPointeeType();
  const unsigned index = keyed ? 1 : 0;
  QualType element;
  if (const auto* spec = container->getAs<TemplateSpecializationType>()) {
    if (spec->getNumArgs() > index && spec->getArg(index).getKind() == TemplateArgument::Type)
      element = spec->getArg(index).getAsType();
  } else if (const auto* record =
                 dyn_cast_or_null<ClassTemplateSpecializationDecl>(container->getAsCXXRecordDecl())) {
    const TemplateArgumentList& args = record->getTemplateArgs();
    if (args.size() > index && args[index].getKind() == TemplateArgument::Type)
      element = args[index].getAsType();
  }
  // `std::vector<_DataType*>` in a class template: the pointer as written, not "Tensor".
  if (!element.isNull() && element->isPointerType()) return type_as_written(cx, element);
  return stored_type(cx, element);
}

bool is_container_insert(std::string_view method) {
  return method == "push_back" || method == "emplace_back" || method == "push_front" || method == "emplace" ||
         method == "try_emplace" || method == "insert" || method == "insert_or_assign";
}

bool is_keyed_insert(std::string_view method) {
  return method == "emplace" || method == "try_emplace" || method == "insert" || method == "insert_or_assign";
}

DynTypedNode carrier_parent(const Context& cx, DynTypedNode node, DynTypedNode& child) {
  for (int depth = 0; depth < 32; ++depth) {
    DynTypedNodeList parents = cx.ast.getParents(node);
    if (parents.empty()) return {};
    DynTypedNode parent = parents[0];
    const Stmt* s = parent.get<Stmt>();
    if (s && (isa<ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr, ExprWithCleanups,
                  ParenExpr, CXXFunctionalCastExpr, ExplicitCastExpr, ConditionalOperator>(s) ||
              (isa<CXXConstructExpr>(s) && cast<CXXConstructExpr>(s)->getNumArgs() == 1) || is_std_move(s))) {
      child = parent;
      node = parent;
      continue;
    }
    child = node;
    return parent;
  }
  return {};
}

// The local a member access starts from: `tier` in `tier->buf_k`, `tier.buf_k`.
const VarDecl* root_local(const Expr* e) {
  for (int depth = 0; depth < 16 && e; ++depth) {
    e = strip(e);
    if (const auto* m = dyn_cast<MemberExpr>(e)) {
      e = m->getBase();
    } else if (const auto* op = dyn_cast<CXXOperatorCallExpr>(e); op && op->getNumArgs() >= 1) {
      e = op->getArg(0);
    } else if (const auto* ref = dyn_cast<DeclRefExpr>(e)) {
      const auto* var = dyn_cast<VarDecl>(ref->getDecl());
      return var && var->hasLocalStorage() && !isa<ParmVarDecl>(var) ? var : nullptr;
    } else {
      return nullptr;
    }
  }
  return nullptr;
}

// `cache.k` where `cache` is a parameter referring to a K/V store (a class that is no module and
// keeps K/V members, `struct whisper_kv_cache { ggml_tensor *k, *v; }`): kept in that store.
bool store_member_through_parameter(const Context& cx, const Expr* target, Destination& out) {
  const auto* m = dyn_cast<MemberExpr>(strip(target));
  const auto* field = m ? dyn_cast<FieldDecl>(m->getMemberDecl()) : nullptr;
  const auto* ref = m ? dyn_cast<DeclRefExpr>(strip(m->getBase())) : nullptr;
  const auto* parameter = ref ? dyn_cast<ParmVarDecl>(ref->getDecl()) : nullptr;
  if (!field || !parameter) return false;
  const QualType type = parameter->getType();
  if (!type->isReferenceType() && !type->isPointerType()) return false;
  const auto* store = dyn_cast<CXXRecordDecl>(field->getParent());
  if (!store || !is_kv_store(cx.vocabulary, store) || !holds_kv(cx.vocabulary, field)) return false;
  out.retention = facts::Retention::SelfAttribute;
  out.member = field->getNameAsString();
  out.retained_as = "self." + out.member;
  out.kv = true;
  out.store = store;
  return true;
}

// Locals a function moves into a member container (`tiers_.push_back(std::move(tier))`,
// `tiers_.emplace_back(std::move(tier))`).
void note_moved_into(Context& cx, const FunctionDecl& function) {
  cx.moved_into.clear();
  for_each_stmt(function.getBody(), [&](const Stmt* s) {
    const auto* call = dyn_cast<CXXMemberCallExpr>(s);
    const CXXMethodDecl* method = call ? call->getMethodDecl() : nullptr;
    if (!method || !method->getIdentifier() || !is_container_insert(method->getName())) return;
    const FieldDecl* container = self_member(call->getImplicitObjectArgument());
    if (!container) return;
    for (const Expr* arg : call->arguments()) {
      const Expr* value = strip(arg);
      if (const auto* move = dyn_cast<CallExpr>(value); move && is_std_move(move))
        value = strip(move->getArg(0));
      const auto* ref = dyn_cast<DeclRefExpr>(value);
      const auto* var = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
      if (var && var->hasLocalStorage() && !isa<ParmVarDecl>(var)) cx.moved_into[var] = container;
    }
  });
}

std::string member_of(const std::string& d) {
  if (!d.starts_with("self.")) return {};
  const std::string rest = d.substr(5);
  return rest.substr(0, rest.find('.'));
}

Destination destination_of(const Context& cx, const Stmt* value) {
  Destination out;
  DynTypedNode child = DynTypedNode::create(*value);
  DynTypedNode parent = carrier_parent(cx, child, child);
  const Stmt* child_stmt = child.get<Stmt>();
  auto store = [&](const Expr* target) {
    target = strip(target);
    // `kv_cache_[id] = ...`, `kv_cache_[id].key_cache = ...`: an element of a container kept per key.
    const Expr* key = element_key(target);
    const std::string d = dotted(cx, target);
    out.member = member_of(d);
    if (out.member.empty()) {
      // Through a local bound to an element of a member container (`Tier& tier =
      // *tiers_.back(); tier.buf_k = torch::zeros(...)`): kept in that container.
      const FieldDecl* kept = self_member(target);
      if (!kept)
        if (const VarDecl* local = root_local(target))
          if (auto it = cx.moved_into.find(local); it != cx.moved_into.end()) kept = it->second;
      bool in_container = false;
      if (kept) held_class(kept->getType(), &in_container);
      if (!kept && store_member_through_parameter(cx, target, out)) return;
      if (!kept || !in_container) {
        out.retained_as = d;
        return;
      }
      out.member = kept->getNameAsString();
      out.retention = facts::Retention::SelfContainer;
      out.retained_as = "self." + out.member;
      out.kv = stores_kv(cx, target, d);
      return;
    }
    out.retention = key ? facts::Retention::SelfContainer : facts::Retention::SelfAttribute;
    // Kept per key in the container (`kv_cache_`), also when a member of the element is written.
    out.retained_as = key ? "self." + out.member : d;
    out.key = key;
    out.kv = stores_kv(cx, target, d);
  };
  if (const auto* init = parent.get<CXXCtorInitializer>()) {
    if (init->getMember()) {
      out.retention = facts::Retention::SelfAttribute;
      out.member = init->getMember()->getNameAsString();
      out.retained_as = "self." + out.member;
      out.kv = holds_kv(cx, init->getMember());
    }
    return out;
  }
  if (const auto* field = parent.get<FieldDecl>()) {
    out.retention = facts::Retention::SelfAttribute;
    out.member = field->getNameAsString();
    out.retained_as = "self." + out.member;
    out.kv = holds_kv(cx, field);
    return out;
  }
  if (const auto* var = parent.get<VarDecl>()) {
    out.retained_as = var->getNameAsString();
    return out;
  }
  const Stmt* p = parent.get<Stmt>();
  if (!p) return out;
  if (const Expr* target = nullptr, *value = nullptr;
      binary_operands(dyn_cast<Expr>(p), BO_Assign, OO_Equal, &target, &value) && value == child_stmt) {
    store(target);
  } else if (isa<ReturnStmt>(p)) {
    out.retention = facts::Retention::Returned;
  } else if (const auto* member_call = dyn_cast<CallExpr>(p); member_call && is_method_call(member_call)) {
    const std::string callee = callee_of(cx, member_call);
    const std::string method = callee.substr(callee.rfind('.') + 1);
    const std::string receiver =
        callee.find('.') == std::string::npos ? std::string() : callee.substr(0, callee.rfind('.'));
    if (method == "register_buffer" && member_call->getNumArgs() >= 1) {
      // `register_buffer("k_cache", torch::zeros(...))`: the buffer's name, or the member it is kept in.
      Destination kept = destination_of(cx, member_call);
      if (!kept.member.empty()) return kept;
      // The name as a literal, also through the real headers' `std::string` parameter.
      const StringLiteral* name = nullptr;
      for_each_stmt(member_call->getArg(0), [&](const Stmt* s) {
        if (!name) name = dyn_cast<StringLiteral>(s);
      });
      if (name) {
        out.retention = facts::Retention::SelfAttribute;
        out.member = name->getString().str();
        out.retained_as = "self." + out.member;
        out.kv = is_kv_member(cx, out.member);
      }
      return out;
    }
    const std::string member = member_of(receiver);
    if (!member.empty() && is_container_insert(method)) {
      out.retention = facts::Retention::SelfContainer;
      out.member = member;
      out.retained_as = receiver;
      // A call Clang could not resolve (dependent, recovered) has no object argument: the name decides.
      const auto* resolved = dyn_cast<CXXMemberCallExpr>(member_call);
      out.kv = resolved ? stores_kv(cx, resolved->getImplicitObjectArgument(), receiver)
                        : is_kv_member(cx, member);
      if (is_keyed_insert(method) && member_call->getNumArgs() >= 2 && member_call->getArg(0) != child_stmt)
        out.key = member_call->getArg(0);
      return out;
    }
    out.retention = facts::Retention::PassedToCall;
  } else if (isa<CallExpr>(p)) {
    out.retention = facts::Retention::PassedToCall;
  }
  return out;
}

facts::CacheSite make_site(Context& cx, const FunctionDecl* function, const Stmt* at, std::string cache_class,
                           std::string written, const Destination& where) {
  facts::CacheSite site;
  site.cache_class = std::move(cache_class);
  site.written = std::move(written);
  if (site.cache_class == "Tensor") site.tensor_library = tensor_library_of(site.written);
  const CXXRecordDecl* owner = function ? owner_of(function) : nullptr;
  site.owner_class = owner ? owner->getNameAsString() : std::string();
  site.method = function ? method_name(function) : std::string();
  if (at) site.loc = location_of(cx, at->getSourceRange());
  if (where.store) site.owner_class = where.store->getNameAsString();
  site.retention = where.retention;
  site.retained_as = where.retained_as;
  if (where.key) site.container_key = expression_of(cx, where.key);
  if (function && at) {
    site.guards = guards_of(cx, at, *function);
    site.inside_graph_capture = inside_capture(cx, *function, at);
  }
  return site;
}

void add_arguments(const Context& cx, const CallExpr* call, const FunctionDecl* callee,
                   facts::CacheSite& site) {
  for (unsigned i = 0; i < call->getNumArgs(); ++i) {
    facts::Argument a;
    a.position = i;
    if (callee && i < callee->getNumParams()) a.keyword = callee->getParamDecl(i)->getNameAsString();
    a.value = expression_of(cx, call->getArg(i));
    site.args.push_back(std::move(a));
  }
}

void add_arguments(const Context& cx, const CXXConstructExpr* construct, facts::CacheSite& site) {
  const CXXConstructorDecl* ctor = construct->getConstructor();
  for (unsigned i = 0; i < construct->getNumArgs(); ++i) {
    if (isa<CXXDefaultArgExpr>(construct->getArg(i))) continue;
    facts::Argument a;
    a.position = i;
    if (ctor && i < ctor->getNumParams()) a.keyword = ctor->getParamDecl(i)->getNameAsString();
    a.value = expression_of(cx, construct->getArg(i));
    site.args.push_back(std::move(a));
  }
}

// A cache-class instance built at `s`, with the class's simple name.
const CXXRecordDecl* cache_class_built(const Context& cx, const Stmt* s,
                                       const CXXConstructExpr** construct_out) {
  const CXXRecordDecl* built = nullptr;
  if (const auto* construct = dyn_cast<CXXConstructExpr>(s)) {
    if (construct->getConstructor() && construct->getConstructor()->isCopyOrMoveConstructor()) return nullptr;
    built = construct->getType()->getAsCXXRecordDecl();
    *construct_out = construct;
  } else if (const auto* call = dyn_cast<CallExpr>(s)) {
    const FunctionDecl* f = call->getDirectCallee();
    if (!f) return nullptr;
    const std::string name = f->getQualifiedNameAsString();
    if (name != "std::make_shared" && name != "std::make_unique") return nullptr;
    built = held_class(call->getType());
  } else if (const auto* created = dyn_cast<CXXNewExpr>(s)) {
    built = created->getAllocatedType()->getAsCXXRecordDecl();
  }
  if (!built || !built->getIdentifier() || !is_cache_class_name(cx, built->getName())) return nullptr;
  return built;
}

// Degraded mode (and a file with errors) can drop a statement Clang could not type:
// `auto k = x.unsqueeze(2);` with `unsqueeze` unknown makes `k` invalid, and
// `past_keys_ = torch::cat({past_keys_, k}, 2);` is then missing from the AST. The assignments of
// a tensor allocation or concatenation to a K/V member are read from the tokens of such a body,
// so both modes see the same growth (sites the AST gave are not repeated).
void recover_dropped_assignments(Context& cx, const FunctionDecl& function) {
  if (!cx.ast.getDiagnostics().hasErrorOccurred()) return;
  const CXXRecordDecl* owner = owner_of(&function);
  const Stmt* body = function.getBody();
  if (!owner || !owner->getDefinition() || !body) return;
  const SourceManager& sm = cx.ast.getSourceManager();
  const SourceLocation begin = sm.getExpansionLoc(body->getBeginLoc());
  const SourceLocation end = sm.getExpansionLoc(body->getEndLoc());
  if (!sm.isWrittenInMainFile(begin) || sm.getFileID(begin) != sm.getFileID(end)) return;
  const FileID file = sm.getFileID(begin);
  const StringRef buffer = sm.getBufferData(file);
  const unsigned end_offset = sm.getFileOffset(end);
  Lexer lexer(sm.getLocForStartOfFile(file), cx.ast.getLangOpts(), buffer.begin(),
              buffer.begin() + sm.getFileOffset(begin), buffer.end());
  std::vector<Token> tokens;
  for (Token t;;) {
    const bool at_end = lexer.LexFromRawLexer(t);
    if (t.is(tok::eof) || sm.getFileOffset(t.getLocation()) > end_offset) break;
    tokens.push_back(t);
    if (at_end) break;
  }
  auto identifier = [&](std::size_t i) -> std::string {
    return i < tokens.size() && tokens[i].is(tok::raw_identifier) ? tokens[i].getRawIdentifier().str()
                                                                  : std::string();
  };
  const auto& allocators = cx.vocabulary.cpp.tensor_allocators;
  for (std::size_t i = 1; i + 5 < tokens.size(); ++i) {
    // [this ->] member = (torch|at) :: name (
    const std::string member = identifier(i);
    if (member.empty() || !tokens[i + 1].is(tok::equal)) continue;
    const Token& before = tokens[i - 1];
    const bool through_this = before.is(tok::arrow) && i >= 2 && identifier(i - 2) == "this";
    if (!through_this && !before.isOneOf(tok::semi, tok::l_brace, tok::r_brace, tok::r_paren)) continue;
    const std::string ns = identifier(i + 2);
    const std::string name = identifier(i + 4);
    if ((ns != "torch" && ns != "at") || !tokens[i + 3].is(tok::coloncolon) ||
        !tokens[i + 5].is(tok::l_paren))
      continue;
    if (name != "cat" && std::find(allocators.begin(), allocators.end(), name) == allocators.end()) continue;
    if (!is_kv_member(cx, member, owner)) continue;
    const std::string retained = "self." + member;
    const facts::Location loc =
        location_of(cx, SourceRange(tokens[i + 2].getLocation(), tokens[i + 5].getLocation()));
    const std::string method = method_name(&function);
    const bool seen =
        std::any_of(cx.out.cache_sites.begin(), cx.out.cache_sites.end(), [&](const facts::CacheSite& c) {
          return c.method == method && c.owner_class == owner->getNameAsString() && c.loc.line == loc.line &&
                 c.retained_as == retained;
        });
    if (seen) continue;
    facts::CacheSite site;
    site.cache_class = "Tensor";
    site.written = ns + "::" + name;
    site.owner_class = owner->getNameAsString();
    site.method = method;
    site.loc = loc;
    site.retention = facts::Retention::SelfAttribute;
    site.retained_as = retained;
    const unsigned at = sm.getFileOffset(tokens[i + 2].getLocation());
    site.inside_graph_capture = std::any_of(
        cx.captures.begin(), cx.captures.end(),
        [&](const CaptureRegion& r) { return r.function == &function && at > r.begin && at < r.end; });
    cx.out.cache_sites.push_back(std::move(site));
  }
}

// Raw device memory kept as K/V: `cudaMalloc(&k_cache_, bytes)`, or a wrapper's result stored in
// a K/V member (`k_cache_ = (half*)pool_->allocate(bytes)`); the member's type is the site's class.
template <typename DestinationOf>
bool device_allocation_site(Context& cx, const FunctionDecl& function, const CallExpr* call,
                            const DestinationOf& destination) {
  const CXXRecordDecl* owner = owner_of(&function);
  Destination where;
  if (std::string member = device_allocated_member(cx, call, nullptr); !member.empty()) {
    where.retention = facts::Retention::SelfAttribute;
    where.member = member;
    where.retained_as = "self." + member;
    where.kv = is_kv_member(cx, member, owner);
  } else if (is_allocating_wrapper(cx, call)) {
    where = destination(call);
  } else {
    return false;
  }
  if (where.member.empty() || !where.kv) return true;
  std::string kept = "void*";
  if (owner && owner->getDefinition())
    for (const FieldDecl* field : owner->getDefinition()->fields())
      if (field->getName() == where.member) kept = stored_type(cx, field->getType());
  facts::CacheSite site = make_site(cx, &function, call, kept, qualified_callee(cx, call), where);
  add_arguments(cx, call, call->getDirectCallee(), site);
  cx.out.cache_sites.push_back(std::move(site));
  return true;
}

// The tensor allocation `callee` stores into a K/V store it is handed as parameter `index`
// (`static bool whisper_kv_cache_init(whisper_kv_cache& cache, ...) { cache.k =
// ggml_new_tensor_1d(...); }`); null otherwise.
const CallExpr* store_filled_through(const Context& cx, const FunctionDecl* callee, unsigned index) {
  if (!callee || !callee->hasBody() || index >= callee->getNumParams()) return nullptr;
  const ParmVarDecl* parameter = callee->getParamDecl(index);
  const QualType type = parameter->getType();
  if (!type->isReferenceType() && !type->isPointerType()) return nullptr;
  const CXXRecordDecl* store = type->getPointeeCXXRecordDecl();
  if (!store || !is_kv_store(cx.vocabulary, store)) return nullptr;
  const CallExpr* found = nullptr;
  for_each_stmt(callee->getBody(), [&](const Stmt* s) {
    const auto* assign = dyn_cast<BinaryOperator>(s);
    if (found || !assign || assign->getOpcode() != BO_Assign) return;
    const auto* m = dyn_cast<MemberExpr>(strip(assign->getLHS()));
    const auto* ref = m ? dyn_cast<DeclRefExpr>(strip(m->getBase())) : nullptr;
    if (!ref || ref->getDecl() != parameter) return;
    for_each_stmt(assign->getRHS(), [&](const Stmt* r) {
      if (const auto* call = dyn_cast<CallExpr>(r); call && !found && is_tensor_allocation(cx, call))
        found = call;
    });
  });
  return found;
}

// A K/V store a struct keeps by value, filled by a function it is handed to
// (`whisper_kv_cache_init(state->kv_cross, ...)` with `whisper_kv_cache kv_cross;` in
// `whisper_state`): the struct keeps that instance. One site per instance, so that each store
// the struct keeps (kv_self, kv_cross, kv_pad) is reported where it is filled, beside the
// filling function's own allocations (on the store class).
void extract_store_instances(Context& cx, const FunctionDecl& function) {
  for_each_stmt(function.getBody(), [&](const Stmt* s) {
    // Also a call that did not compile in degraded mode (an argument on an undeclared macro).
    const auto* call = dyn_cast<CallExpr>(s);
    const FunctionDecl* callee = call && !isa<CXXMemberCallExpr>(call) ? call->getDirectCallee() : nullptr;
    std::vector<const Expr*> args;
    if (callee) {
      args.assign(call->arg_begin(), call->arg_end());
    } else if (const std::optional<RecoveredCall> recovered = recovered_call(s)) {
      if (const auto* ref = dyn_cast<DeclRefExpr>(recovered->callee->IgnoreParenImpCasts()))
        callee = dyn_cast<FunctionDecl>(ref->getDecl());
      else if (const auto* lookup = dyn_cast<UnresolvedLookupExpr>(recovered->callee->IgnoreParenImpCasts());
               lookup && lookup->getNumDecls() == 1)
        callee = dyn_cast<FunctionDecl>(*lookup->decls_begin());
      args = recovered->args;
    }
    if (!callee) return;
    if (const FunctionDecl* definition = callee->getDefinition()) callee = definition;
    for (unsigned i = 0; i < args.size(); ++i) {
      const auto* m = dyn_cast<MemberExpr>(strip(args[i]));
      const auto* field = m ? dyn_cast<FieldDecl>(m->getMemberDecl()) : nullptr;
      const auto* keeper = field ? dyn_cast<CXXRecordDecl>(field->getParent()) : nullptr;
      if (!keeper || !keeper->getIdentifier() || field->getType()->isReferenceType() ||
          field->getType()->isPointerType())
        continue;
      const CallExpr* allocation = store_filled_through(cx, callee, i);
      if (!allocation) continue;
      Destination where;
      where.retention = facts::Retention::SelfAttribute;
      where.member = field->getNameAsString();
      where.retained_as = "self." + where.member;
      where.kv = true;
      facts::CacheSite site =
          make_site(cx, &function, s, stored_type(cx, field->getType()), callee->getNameAsString(), where);
      site.owner_class = keeper->getNameAsString();
      site.stores_existing = true;
      site.tensor_library = tensor_library_of(qualified_callee(cx, allocation));
      cx.out.cache_sites.push_back(std::move(site));
    }
  });
}

}  // namespace

bool allocates_kv(const Context& cx, const CallExpr* call) {
  if (!is_tensor_allocation(cx, call)) return false;
  const Destination where = destination_of(cx, call);
  if (!where.member.empty()) return where.kv;
  return where.retention == facts::Retention::Local && is_kv_name(cx.vocabulary, where.retained_as);
}

void extract_member_caches(Context& cx, const CXXRecordDecl& record) {
  for (const FieldDecl* field : record.fields()) {
    const std::string name = field->getNameAsString();
    const CXXRecordDecl* type = field->getType()->getAsCXXRecordDecl();
    // A cache held by value is allocated with the object.
    if (type && type->getIdentifier() && is_cache_class_name(cx, type->getName())) {
      Destination where;
      where.retention = facts::Retention::SelfAttribute;
      where.retained_as = "self." + name;
      facts::CacheSite site = make_site(cx, nullptr, nullptr, type->getNameAsString(),
                                        text_of(cx, field->getTypeSpecStartLoc()), where);
      site.owner_class = record.getNameAsString();
      site.loc = location_of(cx, field->getSourceRange());
      if (const auto* init = dyn_cast_or_null<CXXConstructExpr>(
              field->getInClassInitializer() ? strip(field->getInClassInitializer()) : nullptr))
        add_arguments(cx, init, site);
      cx.out.cache_sites.push_back(std::move(site));
      continue;
    }
    // `torch::Tensor k_cache_ = torch::zeros(...);`
    if (const Expr* init = field->getInClassInitializer(); init && holds_kv(cx, field)) {
      if (const auto* call = dyn_cast<CallExpr>(strip(init)); call && is_tensor_allocation(cx, call)) {
        Destination where;
        where.retention = facts::Retention::SelfAttribute;
        where.retained_as = "self." + name;
        facts::CacheSite site = make_site(cx, nullptr, call, "Tensor", qualified_callee(cx, call), where);
        site.owner_class = record.getNameAsString();
        site.method = "__init__";
        add_arguments(cx, call, call->getDirectCallee(), site);
        cx.out.cache_sites.push_back(std::move(site));
      }
    }
  }
}

void extract_cache_sites(Context& cx, const FunctionDecl& function) {
  const bool constructor = isa<CXXConstructorDecl>(&function);
  note_moved_into(cx, function);
  // A member initializer's value is stored in its member; Clang's parent map does not lead
  // from the value to the initializer, so that destination is given.
  const Expr* initializer_value = nullptr;
  const ConditionalOperator* initializer_choice = nullptr;  // `k_cache(use_cache ? alloc(...) : nullptr)`
  Destination initializer_member;
  auto destination = [&](const Stmt* s) {
    const bool initializer =
        s == initializer_value || (initializer_choice && (s == strip(initializer_choice->getTrueExpr()) ||
                                                          s == strip(initializer_choice->getFalseExpr())));
    return initializer ? initializer_member : destination_of(cx, s);
  };
  // `kv_cache_[id] = std::move(stream)`, `kv_cache_[id].key_cache = k`: a map of K/V gains an
  // entry per key (an allocation stored that way is its own site).
  auto keyed_growth = [&](const Stmt* s) -> bool {
    const Expr* lhs = nullptr;
    const Expr* rhs = nullptr;
    if (!binary_operands(dyn_cast_or_null<Expr>(s), BO_Assign, OO_Equal, &lhs, &rhs)) return false;
    const Expr* key = element_key(lhs);
    const FieldDecl* container = self_member(lhs);
    if (!key || !is_map_member(container)) return false;
    const std::string d = dotted(cx, lhs);
    if (!stores_kv(cx, lhs, d)) return false;
    bool allocates = false;
    for_each_stmt(rhs, [&](const Stmt* a) {
      const CXXConstructExpr* ignored = nullptr;
      if (cache_class_built(cx, a, &ignored)) allocates = true;
      if (const auto* inner = dyn_cast<CallExpr>(a);
          inner && (is_tensor_allocation(cx, inner) || last_component(qualified_callee(cx, inner)) == "cat"))
        allocates = true;
    });
    if (allocates) return false;
    Destination where;
    where.retention = facts::Retention::SelfContainer;
    where.member = container->getNameAsString();
    where.retained_as = "self." + where.member;
    where.key = key;
    where.kv = true;
    facts::CacheSite site = make_site(cx, &function, s, stored_type(cx, lhs->getType()), "operator[]", where);
    site.stores_existing = true;
    cx.out.cache_sites.push_back(std::move(site));
    return true;
  };
  auto scan = [&](const Stmt* root) {
    for_each_stmt(root, [&](const Stmt* s) {
      if (!constructor && keyed_growth(s)) return;
      const CXXConstructExpr* construct = nullptr;
      if (const CXXRecordDecl* built = cache_class_built(cx, s, &construct)) {
        facts::CacheSite site =
            make_site(cx, &function, s, built->getNameAsString(),
                      text_of(cx, s->getSourceRange()).substr(0, text_of(cx, s->getSourceRange()).find('(')),
                      destination(s));
        if (construct)
          add_arguments(cx, construct, site);
        else if (const auto* call = dyn_cast<CallExpr>(s))
          add_arguments(cx, call, nullptr, site);
        cx.out.cache_sites.push_back(std::move(site));
        return;
      }
      if (const std::optional<RecoveredCall> recovered = recovered_call(s);
          recovered && is_tensor_allocator(cx, qualified_callee(cx, *recovered))) {
        // An allocation that did not compile against the real headers: still the member's allocation.
        Destination where = destination(s);
        if (where.member.empty() || !where.kv) return;
        facts::CacheSite site =
            make_site(cx, &function, s, "Tensor", qualified_callee(cx, *recovered), where);
        for (unsigned i = 0; i < recovered->args.size(); ++i) {
          facts::Argument a;
          a.position = i;
          a.value = expression_of(cx, recovered->args[i]);
          site.args.push_back(std::move(a));
        }
        cx.out.cache_sites.push_back(std::move(site));
        return;
      }
      // `k_cache_ = query_ + batch_dim_`: a region of a handed device buffer kept as K/V.
      if (std::string member = carved_kv_member(cx, s); !member.empty()) {
        Destination where;
        where.retention = facts::Retention::SelfAttribute;
        where.member = member;
        where.retained_as = "self." + member;
        where.kv = true;
        std::string kept = "void*";
        if (const CXXRecordDecl* owner = owner_of(&function); owner && owner->getDefinition())
          for (const FieldDecl* field : owner->getDefinition()->fields())
            if (field->getName() == member) kept = type_as_written(cx, field->getType());
        facts::CacheSite site = make_site(cx, &function, s, kept, "pointer arithmetic", where);
        site.stores_existing = true;  // memory its owner allocated, laid out here
        cx.out.cache_sites.push_back(std::move(site));
        return;
      }
      const auto* call = dyn_cast<CallExpr>(s);
      if (!call) return;
      if (is_tensor_allocation(cx, call)) {
        Destination where = destination(call);
        if (where.member.empty() || !where.kv) return;
        facts::CacheSite site = make_site(cx, &function, call, "Tensor", qualified_callee(cx, call), where);
        add_arguments(cx, call, call->getDirectCallee(), site);
        cx.out.cache_sites.push_back(std::move(site));
        return;
      }
      if (device_allocation_site(cx, function, call, destination)) return;
      if (constructor) return;
      // Growth in a step method: the container gains an element per step (or per request).
      const std::string callee = callee_of(cx, call);
      const auto dot = callee.rfind('.');
      if (dot == std::string::npos) return;
      const std::string method = callee.substr(dot + 1);
      const std::string member = member_of(callee.substr(0, dot));
      // An allocation handed to it (`try_emplace(id, torch::zeros(...))`) is that allocation's site already.
      bool allocates = false;
      for (const Expr* arg : call->arguments())
        for_each_stmt(arg, [&](const Stmt* a) {
          if (const auto* inner = dyn_cast<CallExpr>(a); inner && is_tensor_allocation(cx, inner))
            allocates = true;
        });
      const auto* member_call = dyn_cast<CXXMemberCallExpr>(call);
      const bool holds =
          !member.empty() &&
          (member_call ? stores_kv(cx, member_call->getImplicitObjectArgument(), callee.substr(0, dot))
                       : is_kv_member(cx, member));
      if (!allocates && holds && is_container_insert(method) && method != "push_front" &&
          method != "insert") {
        Destination where;
        where.retention = facts::Retention::SelfContainer;
        where.member = member;
        where.retained_as = callee.substr(0, dot);
        where.kv = true;
        if (is_keyed_insert(method) && call->getNumArgs() >= 1) where.key = call->getArg(0);
        std::string element = "Tensor";
        if (member_call) {
          element =
              element_type(cx, member_call->getImplicitObjectArgument()->getType(), is_keyed_insert(method));
        } else if (const CXXRecordDecl* owner = owner_of(&function); owner && owner->getDefinition()) {
          // A dependent call (a class template's `std::vector<_DataType*>`): the member's declared type.
          for (const FieldDecl* field : owner->getDefinition()->fields())
            if (field->getName() == member)
              element = element_type(cx, field->getType(), is_keyed_insert(method));
        }
        facts::CacheSite site = make_site(cx, &function, call, element, method, where);
        site.stores_existing = true;
        cx.out.cache_sites.push_back(std::move(site));
        return;
      }
      // `past_keys_ = torch::cat({past_keys_, k}, 2)`.
      if (last_component(qualified_callee(cx, call)) == "cat") {
        Destination where = destination_of(cx, call);
        if (!where.member.empty() && where.kv)
          cx.out.cache_sites.push_back(
              make_site(cx, &function, call, "Tensor", qualified_callee(cx, call), where));
      }
    });
  };
  scan(function.getBody());
  if (const auto* ctor = dyn_cast<CXXConstructorDecl>(&function))
    for (const CXXCtorInitializer* init : ctor->inits()) {
      if (!init->isWritten() || !init->getInit()) continue;
      initializer_value = strip(init->getInit());
      initializer_choice = dyn_cast<ConditionalOperator>(initializer_value);
      initializer_member = Destination{};
      if (init->getMember()) {
        initializer_member.retention = facts::Retention::SelfAttribute;
        initializer_member.member = init->getMember()->getNameAsString();
        initializer_member.retained_as = "self." + initializer_member.member;
        initializer_member.kv = holds_kv(cx, init->getMember());
      }
      scan(init->getInit());
      initializer_value = nullptr;
      initializer_choice = nullptr;
    }
  recover_dropped_assignments(cx, function);
  extract_store_instances(cx, function);
  extract_forward_kv_sites(cx, function);
}

}  // namespace kvlint::cpp
