// Classes and ownership: class definitions and their bases (`torch::nn::Module`,
// `torch::nn::Cloneable<T>`), members that hold other model classes (through
// smart pointers, containers and TORCH_MODULE holders) as ownership hops,
// constants, member assignments, and the constructions of project classes.
#include <clang/AST/DeclTemplate.h>

#include <algorithm>

#include "analyzers/cpp/walker.hpp"

namespace kvlint::cpp {

using namespace clang;

namespace {

// `torch::nn::Cloneable<DecoderImpl>` -> "torch.nn.Cloneable"; the written text stays as is.
std::string resolved_base(const Context& cx, const CXXBaseSpecifier& base) {
  QualType type = base.getType();
  std::string name;
  if (const auto* record = type->getAsCXXRecordDecl()) {
    name = record->getQualifiedNameAsString();
  } else if (const auto* spec = type->getAs<TemplateSpecializationType>()) {
    if (const auto* t = spec->getTemplateName().getAsTemplateDecl()) name = t->getQualifiedNameAsString();
  }
  if (name.empty()) name = text_of(cx, base.getSourceRange());
  if (const auto angle = name.find('<'); angle != std::string::npos) name.erase(angle);
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == ':' && i + 1 < name.size() && name[i + 1] == ':') {
      out += '.';
      ++i;
    } else if (name[i] != ' ') {
      out += name[i];
    }
  }
  return out;
}

const CXXRecordDecl* constructed_class(const Stmt* s, const FunctionDecl** factory_of = nullptr) {
  if (const auto* construct = dyn_cast<CXXConstructExpr>(s)) {
    if (construct->getConstructor() && construct->getConstructor()->isCopyOrMoveConstructor()) return nullptr;
    return held_class(construct->getType());
  }
  if (const auto* call = dyn_cast<CallExpr>(s)) {
    const FunctionDecl* f = call->getDirectCallee();
    if (!f) return nullptr;
    const std::string name = f->getQualifiedNameAsString();
    if (name == "std::make_shared" || name == "std::make_unique") return held_class(call->getType());
    if (const auto* method = dyn_cast<CXXMethodDecl>(f); method && method->isStatic()) {
      if (factory_of) *factory_of = f;
      return method->getParent();
    }
  }
  if (const auto* created = dyn_cast<CXXNewExpr>(s)) return held_class(created->getAllocatedType());
  return nullptr;
}

std::vector<facts::BaseClass> bases_of(const Context& cx, const CXXRecordDecl& record) {
  std::vector<facts::BaseClass> out;
  for (const CXXBaseSpecifier& base : record.bases()) {
    facts::BaseClass b;
    b.written = text_of(cx, base.getTypeSourceInfo()->getTypeLoc().getSourceRange());
    b.resolved = resolved_base(cx, base);
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace

facts::ClassFact out_of_line_class(Context& cx, const CXXRecordDecl& definition, const FunctionDecl& first) {
  facts::ClassFact cls;
  cls.name = definition.getNameAsString();
  cls.qualified_name = qualified_name(definition);
  cls.out_of_line = true;
  cls.loc = location_of(cx, first.getLocation());
  if (definition.hasDefinition()) cls.bases = bases_of(cx, definition);
  return cls;
}

void extract_class(Context& cx, const CXXRecordDecl& record) {
  facts::ClassFact cls;
  cls.name = record.getNameAsString();
  cls.qualified_name = qualified_name(record);
  cls.loc = location_of(cx, record.getLocation());
  cls.bases = bases_of(cx, record);
  cx.out.classes.push_back(std::move(cls));
  // Members holding model classes: the ownership the collector walks.
  for (const FieldDecl* field : record.fields()) {
    bool in_container = false;
    const CXXRecordDecl* held = held_class(field->getType(), &in_container);
    if (!held || is_library_class(held) || held == &record) continue;
    facts::OwnershipHop hop;
    hop.owner_class = record.getNameAsString();
    hop.attribute = field->getNameAsString();
    hop.target_class = held->getNameAsString();
    hop.loc = location_of(cx, field->getSourceRange());
    hop.in_container = in_container;
    cx.out.hops.push_back(std::move(hop));
  }
}

void extract_constant(Context& cx, const VarDecl& var) {
  if (!var.getType().isConstQualified() && !var.isConstexpr()) return;
  const Expr* init = var.getInit();
  if (!init) return;
  facts::Expression value = expression_of(cx, init);
  if (value.literal == facts::LiteralKind::None) return;
  facts::Constant c;
  if (const auto* record = dyn_cast<CXXRecordDecl>(var.getDeclContext()))
    c.owner_class = record->getNameAsString();
  c.name = var.getNameAsString();
  c.value = std::move(value);
  cx.out.constants.push_back(std::move(c));
}

void extract_constructions(Context& cx, const FunctionDecl& function) {
  const CXXRecordDecl* owner = owner_of(&function);
  for_each_stmt(function.getBody(), [&](const Stmt* s) {
    const FunctionDecl* factory = nullptr;
    const CXXRecordDecl* built = constructed_class(s, &factory);
    if (!built || is_library_class(built) || !built->getIdentifier()) return;
    facts::Construction c;
    c.owner_class = owner ? owner->getNameAsString() : std::string();
    c.method = method_name(&function);
    c.target_class = built->getNameAsString();
    c.loc = location_of(cx, s->getSourceRange());
    c.guards = guards_of(cx, s, function);
    if (factory) c.factory = factory->getNameAsString();
    if (const auto* call = dyn_cast<CallExpr>(s))
      for (unsigned i = 0; i < call->getNumArgs(); ++i) {
        facts::Argument a;
        a.position = i;
        a.value = expression_of(cx, call->getArg(i));
        if (a.value.literal != facts::LiteralKind::String) c.args.push_back(std::move(a));
      }
    cx.out.constructions.push_back(std::move(c));
  });
  // Member initializers (`decoder_(std::make_shared<DecoderImpl>(cfg))`) are part of construction too.
  if (const auto* ctor = dyn_cast<CXXConstructorDecl>(&function))
    for (const CXXCtorInitializer* init : ctor->inits()) {
      if (!init->isWritten() || !init->getInit()) continue;
      for_each_stmt(init->getInit(), [&](const Stmt* s) {
        const CXXRecordDecl* built = constructed_class(s);
        if (!built || is_library_class(built) || !built->getIdentifier()) return;
        facts::Construction c;
        c.owner_class = owner ? owner->getNameAsString() : std::string();
        c.method = "__init__";
        c.target_class = built->getNameAsString();
        c.loc = location_of(cx, s->getSourceRange());
        cx.out.constructions.push_back(std::move(c));
      });
    }
}

void extract_attribute_assignments(Context& cx, const FunctionDecl& function) {
  const CXXRecordDecl* owner = owner_of(&function);
  if (!owner) return;
  auto record = [&](const Expr* target, const Expr* value, const Stmt* at) {
    const std::string d = dotted(cx, target);
    if (!d.starts_with("self.")) return;
    facts::AttributeAssignment a;
    a.owner_class = owner->getNameAsString();
    a.method = method_name(&function);
    const std::string rest = d.substr(5);
    a.attribute = rest.substr(0, rest.find('.'));
    a.value = expression_of(cx, value);
    a.loc = location_of(cx, at->getSourceRange());
    cx.out.attribute_assignments.push_back(std::move(a));
  };
  if (const auto* ctor = dyn_cast<CXXConstructorDecl>(&function))
    for (const CXXCtorInitializer* init : ctor->inits())
      if (init->isWritten() && init->getMember() && init->getInit()) {
        facts::AttributeAssignment a;
        a.owner_class = owner->getNameAsString();
        a.method = "__init__";
        a.attribute = init->getMember()->getNameAsString();
        a.value = expression_of(cx, init->getInit());
        a.loc = location_of(cx, init->getSourceRange());
        cx.out.attribute_assignments.push_back(std::move(a));
      }
  for_each_stmt(function.getBody(), [&](const Stmt* s) {
    if (const Expr* target = nullptr, *value = nullptr;
        binary_operands(dyn_cast_or_null<Expr>(s), BO_Assign, OO_Equal, &target, &value))
      record(target, value, s);
  });
}

}  // namespace kvlint::cpp
