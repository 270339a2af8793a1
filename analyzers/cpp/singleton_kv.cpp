// K/V kept in a process-wide singleton's device buffer and used as K/V by free functions
// (DeepSpeed's v1 inference: `InferenceContext::Instance()` cudaMallocs `void* _workspace` and
// returns it from GetWorkSpace(); pt_binding.cpp's ds_softmax_context carves layer `layer_id`'s
// K/V slot out of it, hands it to a launcher that writes the new K and V and to the attention).
// Inside the class the buffer is only a workspace; what makes it K/V is in the functions that
// reach it through the accessor, so this is looked for in each file that does, and reported on
// the class (device_kv.cpp does the same for members of a class that lays a handed buffer out).
//
// A member buffer of class C is K/V when
//   - C is a singleton: a static method returns a reference or pointer to a static local C, and
//     a method of C fills the member itself (cudaMalloc & co: memory C keeps across calls; a
//     pointer C is handed, TrainingContext's SetWorkSpace, stays its caller's);
//   - a function here reads the member through that accessor (`(T*)C::Instance().GetWorkSpace()`,
//     a getter that returns the member) and takes a region of it whose offset spans every layer
//     (a term of four or more factors, one the layer: `layer_id * 2 * batch * max_tokens * hidden`);
//   - that region is written by a kernel launch or read by attention (a callee named so), and
//     read by attention or named as K/V (`kv_cache`, `prev_key`): names support, never decide.
// Other uses of the member in this file that span every layer (a `from_blob` view shaped
// {layers, 2, batch, heads, max_tokens, head_dim}) are listed beside them.
#include <clang/Basic/SourceManager.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "analyzers/cpp/walker.hpp"

namespace kvlint::cpp {

using namespace clang;

namespace {

// The class whose process-wide instance `accessor` returns: a static method returning a
// reference or pointer to its class, whose body keeps a static local of that class.
const CXXRecordDecl* singleton_class(const FunctionDecl* accessor) {
  const auto* method = dyn_cast_or_null<CXXMethodDecl>(accessor);
  if (!method || !method->isStatic()) return nullptr;
  const CXXRecordDecl* record = method->getParent();
  const QualType returned = method->getReturnType();
  if (!returned->isReferenceType() && !returned->isPointerType()) return nullptr;
  if (returned->getPointeeCXXRecordDecl() == nullptr ||
      returned->getPointeeCXXRecordDecl()->getCanonicalDecl() != record->getCanonicalDecl())
    return nullptr;
  const FunctionDecl* definition = nullptr;
  if (!method->hasBody(definition) || !definition) return nullptr;
  bool keeps_instance = false;
  for_each_stmt(definition->getBody(), [&](const Stmt* s) {
    if (const auto* decl = dyn_cast<DeclStmt>(s))
      for (const Decl* d : decl->decls())
        if (const auto* var = dyn_cast<VarDecl>(d); var && var->isStaticLocal())
          if (const CXXRecordDecl* type = var->getType()->getAsCXXRecordDecl();
              type && type->getCanonicalDecl() == record->getCanonicalDecl())
            keeps_instance = true;
  });
  return keeps_instance ? record : nullptr;
}

// The singleton an object expression is: `C::Instance()`, or a local bound to it
// (`auto& context = C::Instance();`).
const CXXRecordDecl* singleton_object(const Expr* object) {
  object = without_casts(object);
  if (const auto* ref = dyn_cast_or_null<DeclRefExpr>(object))
    if (const auto* local = dyn_cast<VarDecl>(ref->getDecl());
        local && local->hasLocalStorage() && local->getInit())
      object = without_casts(local->getInit());
  if (const auto* unary = dyn_cast_or_null<UnaryOperator>(object); unary && unary->getOpcode() == UO_Deref)
    object = without_casts(unary->getSubExpr());
  const auto* call = dyn_cast_or_null<CallExpr>(object);
  return call ? singleton_class(call->getDirectCallee()) : nullptr;
}

// The member a getter returns (`void* GetWorkSpace() { return _workspace; }`).
const FieldDecl* returned_member(const CXXMethodDecl* getter) {
  const FunctionDecl* definition = nullptr;
  if (!getter || getter->isStatic() || !getter->hasBody(definition) || !definition) return nullptr;
  const auto* body = dyn_cast_or_null<CompoundStmt>(definition->getBody());
  if (!body || body->size() != 1) return nullptr;
  const auto* ret = dyn_cast<ReturnStmt>(body->body_front());
  const auto* member = ret ? dyn_cast_or_null<MemberExpr>(without_casts(ret->getRetValue())) : nullptr;
  if (!member || !isa<CXXThisExpr>(without_casts(member->getBase()))) return nullptr;
  return dyn_cast<FieldDecl>(member->getMemberDecl());
}

// `C::Instance().GetWorkSpace()`: the singleton's member it returns; null otherwise.
const FieldDecl* singleton_member(const Expr* e) {
  const auto* call = dyn_cast_or_null<CXXMemberCallExpr>(without_casts(e));
  if (!call) return nullptr;
  const CXXRecordDecl* singleton = singleton_object(call->getImplicitObjectArgument());
  const FieldDecl* member = returned_member(call->getMethodDecl());
  if (!singleton || !member || member->getParent()->getCanonicalDecl() != singleton->getCanonicalDecl())
    return nullptr;
  return member;
}

// The first call in the class's own methods that allocates `member` (`cudaMalloc(&_workspace, n)`).
const CallExpr* own_allocation(const Context& cx, const FieldDecl* member, const FunctionDecl** in) {
  const auto* record = dyn_cast<CXXRecordDecl>(member->getParent());
  if (!record) return nullptr;
  const std::string name = member->getNameAsString();
  for (const CXXMethodDecl* method : record->methods()) {
    const FunctionDecl* definition = nullptr;
    if (!method->hasBody(definition) || !definition) continue;
    const CallExpr* found = nullptr;
    for_each_stmt(definition->getBody(), [&](const Stmt* s) {
      if (const auto* call = dyn_cast<CallExpr>(s);
          call && !found && device_allocated_member(cx, call, nullptr) == name)
        found = call;
    });
    if (found) {
      *in = definition;
      return found;
    }
  }
  return nullptr;
}

// The summands of `e` (`a * b + c * d`: both products), through a local it names (`offset`).
void summands(const Expr* e, std::vector<const Expr*>& out, int depth) {
  e = without_casts(e);
  if (!e || depth > 4) return;
  if (const auto* paren = dyn_cast<ParenExpr>(e)) return summands(paren->getSubExpr(), out, depth);
  const Expr* lhs = nullptr;
  const Expr* rhs = nullptr;
  if (binary_operands(e, BO_Add, OO_Plus, &lhs, &rhs)) {
    summands(lhs, out, depth);
    summands(rhs, out, depth);
    return;
  }
  if (const auto* ref = dyn_cast<DeclRefExpr>(e))
    if (const auto* local = dyn_cast<VarDecl>(ref->getDecl());
        local && local->hasLocalStorage() && !isa<ParmVarDecl>(local) && local->getInit())
      return summands(local->getInit(), out, depth + 1);
  out.push_back(e);
}

// Whether an expression names the layers (`layer_id`, `num_layers`, `GetNumLayers()`).
bool names_layers(const Context& cx, const Expr* e) {
  for (std::string name : expression_of(cx, e).names) {
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    if (name.find("layer") != std::string::npos) return true;
  }
  return false;
}

// An offset with a term of four or more factors, one of them the layer: it steps over whole
// layers of rows x positions x width (`layer_id * 2 * batch * max_tokens * hidden`), where one
// layer's scratch (`head_size * batch * heads * seq_len`) does not.
bool spans_every_layer(const Context& cx, const Expr* offset) {
  std::vector<const Expr*> terms;
  summands(offset, terms, 0);
  return std::any_of(terms.begin(), terms.end(),
                     [&](const Expr* t) { return size_factors(t) >= 4 && names_layers(cx, t); });
}

// A shape written as a braced list of four or more dimensions, one of them named for the layers
// (`{num_layers, 2, batch, heads, max_tokens, head_dim}`).
bool shape_spans_every_layer(const Context& cx, const Expr* shape) {
  const auto* list = dyn_cast_or_null<InitListExpr>(without_casts(shape));
  if (!list || list->getNumInits() < 4) return false;
  return std::any_of(list->inits().begin(), list->inits().end(),
                     [&](const Expr* dim) { return names_layers(cx, dim); });
}

struct SingletonUse {
  facts::RawKvAccess access;
  std::string callee;
  bool named = false;  // a K/V name on the region or view
};

struct MemberUses {
  const FieldDecl* member = nullptr;
  std::vector<SingletonUse> uses;
  facts::Location first_here;  // where this file first reaches it
  bool kv = false;
};

// Uses of singleton members in one function: its locals holding `C::Instance().GetWorkSpace()`,
// regions `workspace + offset` spanning every layer (and locals holding one), and the calls that
// are handed such a region.
class FunctionScan {
 public:
  FunctionScan(const Context& cx, const FunctionDecl& function, std::map<const FieldDecl*, MemberUses>& out)
      : cx_(cx), function_(function), out_(out) {}

  void run() {
    for_each_stmt(function_.getBody(), [&](const Stmt* s) {
      if (const auto* decl = dyn_cast<DeclStmt>(s)) {
        for (const Decl* d : decl->decls())
          if (const auto* var = dyn_cast<VarDecl>(d); var && var->getInit()) note_local(*var);
        return;
      }
      if (const auto* call = dyn_cast<CallExpr>(s)) note_call(*call);
    });
  }

 private:
  // The member a pointer expression points into and whether its offset spans every layer.
  const FieldDecl* region_of(const Expr* e, bool* spanning) const {
    e = without_casts(e);
    std::vector<const Expr*> offsets;
    const Expr* lhs = nullptr;
    const Expr* rhs = nullptr;
    for (int depth = 0; depth < 8 && binary_operands(e, BO_Add, OO_Plus, &lhs, &rhs); ++depth) {
      offsets.push_back(rhs);
      e = without_casts(lhs);
    }
    const FieldDecl* member = nullptr;
    bool spans = false;
    if (const auto* ref = dyn_cast_or_null<DeclRefExpr>(e)) {
      const auto* local = dyn_cast<VarDecl>(ref->getDecl());
      if (auto it = workspaces_.find(local); it != workspaces_.end()) member = it->second;
      if (auto it = regions_.find(local); it != regions_.end()) {
        member = it->second;
        spans = true;
      }
    } else {
      member = singleton_member(e);
    }
    if (!member) return nullptr;
    spans = spans || std::any_of(offsets.begin(), offsets.end(),
                                 [&](const Expr* offset) { return spans_every_layer(cx_, offset); });
    *spanning = spans;
    return member;
  }

  void note_local(const VarDecl& var) {
    if (!var.hasLocalStorage()) return;
    if (const FieldDecl* member = singleton_member(var.getInit())) {
      workspaces_[&var] = member;
      reached(member, var.getInit());
      return;
    }
    bool spanning = false;
    if (const FieldDecl* member = region_of(var.getInit(), &spanning); member && spanning) {
      regions_[&var] = member;
      if (name_says_kv(cx_.vocabulary, var.getName())) named_.insert(member);
      return;
    }
    // `auto prev_key = torch::from_blob(workspace + offset, {...}, options)`: a view of the region.
    const auto* call = dyn_cast<CallExpr>(without_casts(var.getInit()));
    if (!call || call->getNumArgs() < 2 || last_component(qualified_callee(cx_, call)) != "from_blob") return;
    const FieldDecl* member = region_of(call->getArg(0), &spanning);
    if (!member || !(spanning || shape_spans_every_layer(cx_, call->getArg(1)))) return;
    const bool named = name_says_kv(cx_.vocabulary, var.getName());
    add(member, facts::RawKvAccess::Kind::Pass, call,
        "a `from_blob` view `" + var.getNameAsString() + "` spanning every layer", named);
  }

  void note_call(const CallExpr& call) {
    const std::string callee = last_component(qualified_callee(cx_, &call));
    const bool launch = is_kernel_launch(cx_, &call);
    std::string lower = callee;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    const bool attention = lower.find("attention") != std::string::npos;
    if (!launch && !attention) return;
    for (const Expr* arg : call.arguments()) {
      bool spanning = false;
      const FieldDecl* member = region_of(arg, &spanning);
      if (!member || !spanning) continue;
      if (launch)
        add(member, facts::RawKvAccess::Kind::Write, &call, "a launch of `" + callee + "`",
            named_.count(member) > 0);
      else
        add(member, facts::RawKvAccess::Kind::Read, &call, callee, named_.count(member) > 0);
      return;
    }
  }

  void reached(const FieldDecl* member, const Expr* at) {
    // The class's own methods use it as its workspace (device_kv.cpp judges those).
    if (const CXXRecordDecl* owner = owner_of(&function_);
        owner && owner->getCanonicalDecl() == member->getParent()->getCanonicalDecl())
      return;
    MemberUses& uses = out_[member];
    uses.member = member;
    if (uses.first_here.line == 0) uses.first_here = location_of(cx_, at->getSourceRange());
  }

  // Each function's first write, read and hand-on (RawKv::accesses).
  void add(const FieldDecl* member, facts::RawKvAccess::Kind kind, const CallExpr* call, std::string by,
           bool named) {
    reached(member, call);
    auto found = out_.find(member);
    if (found == out_.end()) return;
    MemberUses& uses = found->second;
    const std::string method = method_name(&function_);
    for (const SingletonUse& u : uses.uses)
      if (u.access.kind == kind && u.access.method == method) return;
    SingletonUse use;
    use.access.kind = kind;
    use.access.method = method;
    use.access.loc = location_of(cx_, call->getSourceRange());
    use.access.by = std::move(by);
    use.callee = last_component(qualified_callee(cx_, call));
    use.named = named;
    uses.uses.push_back(std::move(use));
  }

  const Context& cx_;
  const FunctionDecl& function_;
  std::map<const FieldDecl*, MemberUses>& out_;
  std::map<const VarDecl*, const FieldDecl*> workspaces_;
  std::map<const VarDecl*, const FieldDecl*> regions_;
  std::set<const FieldDecl*> named_;  // a region local named as K/V (`kv_cache`)
};

// `at` in the project file that holds it, by the path the report shows (relative to where the
// analysed file is shown); empty when it lies outside that tree.
facts::Location location_in_project(const Context& cx, SourceRange range) {
  facts::Location loc = location_of(cx, range);
  const SourceManager& sm = cx.ast.getSourceManager();
  const SourceLocation at = sm.getExpansionLoc(range.getBegin());
  const FileEntry* file = sm.getFileEntryForID(sm.getFileID(at));
  const FileEntry* main = sm.getFileEntryForID(sm.getMainFileID());
  if (!file || !main || sm.isInSystemHeader(at)) return {};
  namespace fs = std::filesystem;
  const fs::path header = fs::path(file->getName().str()).lexically_normal();
  const fs::path analysed = fs::path(main->getName().str()).lexically_normal();
  if (!header.is_absolute() || !analysed.is_absolute()) return {};
  const fs::path relative = header.lexically_relative(analysed.parent_path());
  const fs::path shown = (fs::path(cx.file.str()).parent_path() / relative).lexically_normal();
  if (relative.empty() || shown.empty() || (shown.is_relative() && *shown.begin() == "..")) return {};
  loc.file = shown.generic_string();
  return loc;
}

}  // namespace

void extract_singleton_kv(Context& cx, const std::vector<const FunctionDecl*>& functions) {
  std::map<const FieldDecl*, MemberUses> found;
  for (const FunctionDecl* function : functions) FunctionScan(cx, *function, found).run();
  for (auto& [member, uses] : found) {
    const bool written = std::any_of(uses.uses.begin(), uses.uses.end(), [](const SingletonUse& u) {
      return u.access.kind == facts::RawKvAccess::Kind::Write;
    });
    const bool read = std::any_of(uses.uses.begin(), uses.uses.end(), [](const SingletonUse& u) {
      return u.access.kind == facts::RawKvAccess::Kind::Read;
    });
    const bool named =
        std::any_of(uses.uses.begin(), uses.uses.end(), [](const SingletonUse& u) { return u.named; });
    if (!(written || read) || !(read || named)) continue;
    const FunctionDecl* allocator = nullptr;
    const CallExpr* allocation = own_allocation(cx, member, &allocator);
    if (!allocation) continue;  // handed to the class: its caller's memory
    const auto* record = cast<CXXRecordDecl>(member->getParent());
    facts::Location at = location_in_project(cx, allocation->getSourceRange());
    if (at.file.empty() || at.line == 0) continue;
    // The class is defined in a header: an out-of-line entry here joins this file's site to it.
    const std::string qualified = qualified_name(*record);
    if (std::none_of(cx.out.classes.begin(), cx.out.classes.end(),
                     [&](const facts::ClassFact& c) { return c.qualified_name == qualified; })) {
      facts::ClassFact cls;
      cls.name = record->getNameAsString();
      cls.qualified_name = qualified;
      cls.out_of_line = true;
      cls.loc = uses.first_here;
      cx.out.classes.push_back(std::move(cls));
    }
    facts::CacheSite site;
    site.cache_class = member->getType().getAsString();
    site.written = last_component(qualified_callee(cx, allocation));
    site.owner_class = record->getNameAsString();
    site.method = method_name(allocator);
    site.loc = at;
    site.retention = facts::Retention::SelfAttribute;
    site.retained_as = "self." + member->getNameAsString();
    facts::RawKv raw;
    raw.members = {member->getNameAsString()};
    raw.named_as_kv = named;
    std::sort(uses.uses.begin(), uses.uses.end(), [](const SingletonUse& a, const SingletonUse& b) {
      return a.access.loc.line < b.access.loc.line;
    });
    for (const SingletonUse& u : uses.uses) {
      if (u.access.kind == facts::RawKvAccess::Kind::Write && !raw.written_at) {
        raw.written_at = u.access.loc;
        raw.written_by = "handed to `" + u.callee + "` in `" + u.access.method + "` (" + cx.file.str() + ")";
      } else if (u.access.kind == facts::RawKvAccess::Kind::Read && !raw.read_at) {
        raw.read_at = u.access.loc;
        raw.read_by = u.callee;
      }
      raw.accesses.push_back(u.access);
    }
    site.raw_kv = std::move(raw);
    cx.out.cache_sites.push_back(std::move(site));
  }
}

}  // namespace kvlint::cpp
