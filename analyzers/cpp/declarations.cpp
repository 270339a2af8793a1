// Declarations: a member `model_local_kv_specs()` and the specs it builds with the
// header (runtime/include/kvlint/model_local_kv.h), each field as written:
//   mlkv::spec_from_config(config_, {.name = ..., .rows = mlkv::RowDriver::Fixed, ...})
//   mlkv::Spec{.name = ..., ...}   mlkv::Spec{"name", ...} (positional: field order)
// Specs built by a helper function of the same translation unit count as the
// method's own; `x_->model_local_kv_specs()` is a forward to member `x_`.
#include <clang/AST/RecordLayout.h>

#include <algorithm>
#include <set>

#include "analyzers/cpp/walker.hpp"

namespace kvlint::cpp {

using namespace clang;

namespace {

constexpr int kMaxHelperDepth = 3;

std::string canonical_field(const Context& cx, std::string name) {
  for (const auto& [written, canonical] : cx.vocabulary.field_aliases)
    if (written == name) return canonical;
  return name;
}

bool is_spec_type(const Context& cx, QualType type) {
  const CXXRecordDecl* record = type.isNull() ? nullptr : type->getAsCXXRecordDecl();
  return record && record->getIdentifier() && record->getName() == cx.vocabulary.cpp.spec_type;
}

class SpecReader {
 public:
  SpecReader(Context& cx, const FunctionDecl& method, facts::Declaration& out)
      : cx_(cx), method_(method), out_(out) {}

  void read(const FunctionDecl& function, int depth) {
    if (!function.getBody() || !visited_.insert(&function).second) return;
    for_each_stmt(function.getBody(), [&](const Stmt* s) {
      if (const auto* ret = dyn_cast<ReturnStmt>(s); ret && &function == &method_) {
        const Expr* value = ret->getRetValue() ? strip(ret->getRetValue()) : nullptr;
        if (const auto* list = dyn_cast_or_null<InitListExpr>(value); list && list->getNumInits() == 0)
          out_.returns_empty_somewhere = true;
        if (const auto* construct = dyn_cast_or_null<CXXConstructExpr>(value);
            construct && construct->getNumArgs() == 0)
          out_.returns_empty_somewhere = true;
      }
      if (const auto* var = dyn_cast<DeclStmt>(s); var && &function == &method_)
        for (const Decl* d : var->decls())
          if (const auto* v = dyn_cast<VarDecl>(d); v && v->getInit()) {
            facts::LocalAssignment a;
            a.name = v->getNameAsString();
            a.value = expression_of(cx_, v->getInit());
            a.loc = location_of(cx_, v->getSourceRange());
            out_.local_assignments.push_back(std::move(a));
          }
      const auto* call = dyn_cast<CallExpr>(s);
      if (call) {
        const std::string callee = callee_of(cx_, call);
        const std::string qualified = qualified_callee(cx_, call);
        if (last_component(qualified) == cx_.vocabulary.cpp.spec_from_config) {
          add_spec(call, "spec_from_hf_config", call->getNumArgs() >= 1 ? call->getArg(0) : nullptr,
                   call->getNumArgs() >= 2 ? call->getArg(1) : nullptr);
          return;
        }
        if (callee.ends_with("." + cx_.vocabulary.declaration_method) && callee.starts_with("self.")) {
          facts::Forward f;
          const std::string rest = callee.substr(5);
          f.via_attribute = rest.substr(0, rest.find('.'));
          f.loc = location_of(cx_, call->getSourceRange());
          f.guards = guards_of(cx_, call, method_);
          out_.forwards.push_back(std::move(f));
          return;
        }
        // A helper of this translation unit that builds specs.
        if (const FunctionDecl* helper = call->getDirectCallee(); helper && depth < kMaxHelperDepth) {
          const FunctionDecl* definition = helper->getDefinition();
          if (definition && in_main_file(cx_, definition->getLocation()) && definition != &method_)
            read(*definition, depth + 1);
        }
      }
      // `mlkv::Spec{...}` not inside a spec_from_config call.
      if (const auto* e = dyn_cast<Expr>(s); e && is_spec_type(cx_, e->getType()) && !inside_spec_call(e) &&
                                            (isa<InitListExpr>(e) || isa<CXXTemporaryObjectExpr>(e)) &&
                                            !seen_.count(e)) {
        add_spec(e, "ModelLocalKVSpec", nullptr, e);
      }
    });
  }

 private:
  bool inside_spec_call(const Expr* e) const {
    for (const Expr* argument : spec_arguments_)
      if (argument == e) return true;
    return false;
  }

  // Fields of a spec as written: designated initializers by name, positional ones by field order,
  // constructor arguments by parameter name.
  void read_fields(const Expr* fields_expr, facts::SpecFact& spec) {
    const Expr* e = strip(fields_expr);
    if (!e) return;
    if (const auto* list = dyn_cast<InitListExpr>(e)) {
      const InitListExpr* syntactic = list->isSemanticForm() && list->getSyntacticForm() ? list->getSyntacticForm() : list;
      seen_.insert(list);
      seen_.insert(syntactic);
      const CXXRecordDecl* record = list->getType()->getAsCXXRecordDecl();
      std::vector<std::string> field_names;
      if (record)
        for (const FieldDecl* f : record->fields()) field_names.push_back(f->getNameAsString());
      for (unsigned i = 0; i < syntactic->getNumInits(); ++i) {
        const Expr* init = syntactic->getInit(i);
        facts::Argument a;
        a.position = i;
        if (const auto* designated = dyn_cast<DesignatedInitExpr>(init)) {
          if (designated->size() >= 1 && designated->getDesignator(0)->isFieldDesignator())
            a.keyword = designated->getDesignator(0)->getFieldName()->getName().str();
          init = designated->getInit();
        } else if (i < field_names.size()) {
          a.keyword = field_names[i];
        }
        if (a.keyword.empty()) continue;
        a.keyword = canonical_field(cx_, a.keyword);
        a.value = expression_of(cx_, init);
        spec.fields.push_back(std::move(a));
      }
      return;
    }
    if (const auto* construct = dyn_cast<CXXConstructExpr>(e)) {
      seen_.insert(construct);
      const CXXConstructorDecl* ctor = construct->getConstructor();
      for (unsigned i = 0; i < construct->getNumArgs(); ++i) {
        if (isa<CXXDefaultArgExpr>(construct->getArg(i)) || !ctor || i >= ctor->getNumParams()) continue;
        facts::Argument a;
        a.position = i;
        a.keyword = canonical_field(cx_, ctor->getParamDecl(i)->getNameAsString());
        a.value = expression_of(cx_, construct->getArg(i));
        spec.fields.push_back(std::move(a));
      }
    }
  }

  void add_spec(const Expr* at, const char* constructor, const Expr* config, const Expr* fields) {
    facts::SpecFact spec;
    spec.loc = location_of(cx_, at->getSourceRange());
    spec.constructor = constructor;
    if (config) spec.config = expression_of(cx_, config);
    if (fields) {
      spec_arguments_.push_back(strip(fields));
      read_fields(fields, spec);
    }
    if (const facts::Argument* rows = spec.field("rows")) {
      const std::string& text = rows->value.text;
      auto tail = text.substr(text.rfind(':') == std::string::npos ? 0 : text.rfind(':') + 1);
      if (tail == "Fixed" || tail == cx_.vocabulary.row_fixed) spec.rows = facts::RowsDriver::Fixed;
      else if (tail == "MaxNumSeqs" || tail == cx_.vocabulary.row_max_num_seqs) spec.rows = facts::RowsDriver::MaxNumSeqs;
      else spec.rows = facts::RowsDriver::Other;
    }
    // Specs built in a helper are guarded by the method's call of it; inside the method, by their own.
    if (in_method(at)) spec.guards = guards_of(cx_, at, method_);
    out_.specs.push_back(std::move(spec));
  }

  bool in_method(const Expr* at) const {
    const unsigned offset = offset_of(cx_, at->getBeginLoc());
    return offset >= offset_of(cx_, method_.getBody()->getBeginLoc()) &&
           offset <= offset_of(cx_, method_.getBody()->getEndLoc());
  }

  Context& cx_;
  const FunctionDecl& method_;
  facts::Declaration& out_;
  std::set<const FunctionDecl*> visited_;
  std::set<const Expr*> seen_;
  std::vector<const Expr*> spec_arguments_;
};

}  // namespace

void extract_declaration(Context& cx, const CXXMethodDecl& method) {
  facts::Declaration decl;
  decl.owner_class = owner_of(&method) ? owner_of(&method)->getNameAsString() : std::string();
  decl.loc = location_of(cx, method.getLocation());
  SpecReader reader(cx, method, decl);
  reader.read(method, 0);
  std::sort(decl.specs.begin(), decl.specs.end(), [](const facts::SpecFact& a, const facts::SpecFact& b) {
    return std::tie(a.loc.line, a.loc.column) < std::tie(b.loc.line, b.loc.column);
  });
  cx.out.declarations.push_back(std::move(decl));
}

}  // namespace kvlint::cpp
