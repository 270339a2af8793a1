// Cache sites: instances of cache-vocabulary classes (C++ ports named
// `DynamicCache`, `StaticCache`, ...) and attention K/V tensors: members, buffers
// (`register_buffer("k_cache", ...)`) and container elements whose names match the
// K/V pattern, allocated with `torch::zeros/empty/full/ones`; K/V containers that grow
// in a step method (`push_back`, `emplace_back`, `torch::cat` into the member); and
// containers keyed by a request id (`caches_[request_id] = ...`, `try_emplace`).
#include <clang/AST/ParentMapContext.h>

#include <algorithm>

#include "analyzers/cpp/walker.hpp"

namespace kvlint::cpp {

using namespace clang;

namespace {

bool is_cache_class_name(const Context& cx, std::string_view name) {
  const auto& classes = cx.vocabulary.cache_classes;
  return std::find(classes.begin(), classes.end(), name) != classes.end();
}

std::string last_component(std::string_view qualified) {
  const auto colon = qualified.rfind("::");
  return std::string(colon == std::string_view::npos ? qualified : qualified.substr(colon + 2));
}

bool is_tensor_allocator(const Context& cx, const std::string& name) {
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
};

// `att_cache_ = std::move(torch::zeros(...))`.
bool is_std_move(const Stmt* s) {
  const auto* call = dyn_cast<CallExpr>(s);
  const FunctionDecl* f = call && call->getNumArgs() == 1 ? call->getDirectCallee() : nullptr;
  return f && f->getQualifiedNameAsString() == "std::move";
}

DynTypedNode carrier_parent(const Context& cx, DynTypedNode node, DynTypedNode& child) {
  for (int depth = 0; depth < 32; ++depth) {
    DynTypedNodeList parents = cx.ast.getParents(node);
    if (parents.empty()) return {};
    DynTypedNode parent = parents[0];
    const Stmt* s = parent.get<Stmt>();
    if (s && (isa<ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr, ExprWithCleanups,
                  ParenExpr, CXXFunctionalCastExpr>(s) ||
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
    const Expr* key = nullptr;
    if (const auto* op = dyn_cast<CXXOperatorCallExpr>(target); op && op->getOperator() == OO_Subscript) {
      key = op->getArg(1);
      target = op->getArg(0);
    } else if (const auto* sub = dyn_cast<ArraySubscriptExpr>(target)) {
      key = sub->getIdx();
      target = sub->getBase();
    }
    const std::string d = dotted(cx, target);
    out.member = member_of(d);
    if (out.member.empty()) {
      out.retained_as = d;
      return;
    }
    out.retention = key ? facts::Retention::SelfContainer : facts::Retention::SelfAttribute;
    out.retained_as = d;
    out.key = key;
  };
  if (const auto* init = parent.get<CXXCtorInitializer>()) {
    if (init->getMember()) {
      out.retention = facts::Retention::SelfAttribute;
      out.member = init->getMember()->getNameAsString();
      out.retained_as = "self." + out.member;
    }
    return out;
  }
  if (const auto* field = parent.get<FieldDecl>()) {
    out.retention = facts::Retention::SelfAttribute;
    out.member = field->getNameAsString();
    out.retained_as = "self." + out.member;
    return out;
  }
  if (const auto* var = parent.get<VarDecl>()) {
    out.retained_as = var->getNameAsString();
    return out;
  }
  const Stmt* p = parent.get<Stmt>();
  if (!p) return out;
  if (const auto* op = dyn_cast<BinaryOperator>(p); op && op->getOpcode() == BO_Assign && op->getRHS() == child_stmt) {
    store(op->getLHS());
  } else if (const auto* assign = dyn_cast<CXXOperatorCallExpr>(p);
             assign && assign->getOperator() == OO_Equal && assign->getNumArgs() == 2 && assign->getArg(1) == child_stmt) {
    store(assign->getArg(0));
  } else if (isa<ReturnStmt>(p)) {
    out.retention = facts::Retention::Returned;
  } else if (const auto* member_call = dyn_cast<CallExpr>(p); member_call && is_method_call(member_call)) {
    const std::string callee = callee_of(cx, member_call);
    const std::string method = callee.substr(callee.rfind('.') + 1);
    const std::string receiver = callee.find('.') == std::string::npos ? std::string() : callee.substr(0, callee.rfind('.'));
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
      }
      return out;
    }
    const std::string member = member_of(receiver);
    if (!member.empty() && (method == "push_back" || method == "emplace_back" || method == "push_front" ||
                            method == "emplace" || method == "try_emplace" || method == "insert")) {
      out.retention = facts::Retention::SelfContainer;
      out.member = member;
      out.retained_as = receiver;
      if ((method == "emplace" || method == "try_emplace" || method == "insert") && member_call->getNumArgs() >= 2 &&
          member_call->getArg(0) != child_stmt)
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
  const CXXRecordDecl* owner = function ? owner_of(function) : nullptr;
  site.owner_class = owner ? owner->getNameAsString() : std::string();
  site.method = function ? method_name(function) : std::string();
  if (at) site.loc = location_of(cx, at->getSourceRange());
  site.retention = where.retention;
  site.retained_as = where.retained_as;
  if (where.key) site.container_key = expression_of(cx, where.key);
  if (function && at) {
    site.guards = guards_of(cx, at, *function);
    site.inside_graph_capture = inside_capture(cx, *function, at);
  }
  return site;
}

void add_arguments(const Context& cx, const CallExpr* call, const FunctionDecl* callee, facts::CacheSite& site) {
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
const CXXRecordDecl* cache_class_built(const Context& cx, const Stmt* s, const CXXConstructExpr** construct_out) {
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

}  // namespace

void extract_member_caches(Context& cx, const CXXRecordDecl& record) {
  for (const FieldDecl* field : record.fields()) {
    const std::string name = field->getNameAsString();
    const CXXRecordDecl* type = field->getType()->getAsCXXRecordDecl();
    // A cache held by value is allocated with the object.
    if (type && type->getIdentifier() && is_cache_class_name(cx, type->getName())) {
      Destination where;
      where.retention = facts::Retention::SelfAttribute;
      where.retained_as = "self." + name;
      facts::CacheSite site = make_site(cx, nullptr, nullptr, type->getNameAsString(), text_of(cx, field->getTypeSpecStartLoc()), where);
      site.owner_class = record.getNameAsString();
      site.loc = location_of(cx, field->getSourceRange());
      if (const auto* init = dyn_cast_or_null<CXXConstructExpr>(field->getInClassInitializer()
                                                                     ? strip(field->getInClassInitializer())
                                                                     : nullptr))
        add_arguments(cx, init, site);
      cx.out.cache_sites.push_back(std::move(site));
      continue;
    }
    // `torch::Tensor k_cache_ = torch::zeros(...);`
    if (const Expr* init = field->getInClassInitializer(); init && is_kv_member(cx, name)) {
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
  // A member initializer's value is stored in its member; Clang's parent map does not lead
  // from the value to the initializer, so that destination is given.
  const Expr* initializer_value = nullptr;
  Destination initializer_member;
  auto destination = [&](const Stmt* s) {
    return s == initializer_value ? initializer_member : destination_of(cx, s);
  };
  auto scan = [&](const Stmt* root) {
    for_each_stmt(root, [&](const Stmt* s) {
      const CXXConstructExpr* construct = nullptr;
      if (const CXXRecordDecl* built = cache_class_built(cx, s, &construct)) {
        facts::CacheSite site = make_site(cx, &function, s, built->getNameAsString(),
                                          text_of(cx, s->getSourceRange()).substr(0, text_of(cx, s->getSourceRange()).find('(')),
                                          destination(s));
        if (construct) add_arguments(cx, construct, site);
        else if (const auto* call = dyn_cast<CallExpr>(s)) add_arguments(cx, call, nullptr, site);
        cx.out.cache_sites.push_back(std::move(site));
        return;
      }
      if (const std::optional<RecoveredCall> recovered = recovered_call(s);
          recovered && is_tensor_allocator(cx, qualified_callee(cx, *recovered))) {
        // An allocation that did not compile against the real headers: still the member's allocation.
        Destination where = destination(s);
        if (where.member.empty() || !is_kv_member(cx, where.member)) return;
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
      const auto* call = dyn_cast<CallExpr>(s);
      if (!call) return;
      if (is_tensor_allocation(cx, call)) {
        Destination where = destination(call);
        if (where.member.empty() || !is_kv_member(cx, where.member)) return;
        facts::CacheSite site = make_site(cx, &function, call, "Tensor", qualified_callee(cx, call), where);
        add_arguments(cx, call, call->getDirectCallee(), site);
        cx.out.cache_sites.push_back(std::move(site));
        return;
      }
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
          if (const auto* inner = dyn_cast<CallExpr>(a); inner && is_tensor_allocation(cx, inner)) allocates = true;
        });
      if (!allocates && !member.empty() && is_kv_member(cx, member) &&
          (method == "push_back" || method == "emplace_back" || method == "emplace" ||
           method == "try_emplace")) {
        Destination where;
        where.retention = facts::Retention::SelfContainer;
        where.member = member;
        where.retained_as = callee.substr(0, dot);
        if ((method == "emplace" || method == "try_emplace") && call->getNumArgs() >= 1) where.key = call->getArg(0);
        facts::CacheSite site = make_site(cx, &function, call, "Tensor", method, where);
        cx.out.cache_sites.push_back(std::move(site));
        return;
      }
      // `past_keys_ = torch::cat({past_keys_, k}, 2)`.
      if (last_component(qualified_callee(cx, call)) == "cat") {
        Destination where = destination_of(cx, call);
        if (!where.member.empty() && is_kv_member(cx, where.member))
          cx.out.cache_sites.push_back(make_site(cx, &function, call, "Tensor", qualified_callee(cx, call), where));
      }
    });
  };
  scan(function.getBody());
  if (const auto* ctor = dyn_cast<CXXConstructorDecl>(&function))
    for (const CXXCtorInitializer* init : ctor->inits()) {
      if (!init->isWritten() || !init->getInit()) continue;
      initializer_value = strip(init->getInit());
      initializer_member = Destination{};
      if (init->getMember()) {
        initializer_member.retention = facts::Retention::SelfAttribute;
        initializer_member.member = init->getMember()->getNameAsString();
        initializer_member.retained_as = "self." + initializer_member.member;
      }
      scan(init->getInit());
      initializer_value = nullptr;
    }
}

}  // namespace kvlint::cpp
