// The grammar's symbol and field ids, looked up by name once per analyzer.
#include "analyzers/python/syntax.hpp"

#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace kvlint::python::detail {
namespace {

constexpr std::pair<const char*, Sym> kNames[] = {
    {"ERROR", Sym::Error},
    {"module", Sym::Module},
    {"block", Sym::Block},
    {"class_definition", Sym::ClassDef},
    {"function_definition", Sym::FunctionDef},
    {"call", Sym::Call},
    {"attribute", Sym::Attribute},
    {"identifier", Sym::Identifier},
    {"subscript", Sym::Subscript},
    {"argument_list", Sym::ArgumentList},
    {"keyword_argument", Sym::KeywordArgument},
    {"list_splat", Sym::ListSplat},
    {"dictionary_splat", Sym::DictionarySplat},
    {"assignment", Sym::Assignment},
    {"augmented_assignment", Sym::AugmentedAssignment},
    {"expression_statement", Sym::ExpressionStatement},
    {"return_statement", Sym::ReturnStatement},
    {"yield", Sym::Yield},
    {"if_statement", Sym::IfStatement},
    {"elif_clause", Sym::ElifClause},
    {"else_clause", Sym::ElseClause},
    {"for_statement", Sym::ForStatement},
    {"while_statement", Sym::WhileStatement},
    {"with_statement", Sym::WithStatement},
    {"with_clause", Sym::WithClause},
    {"with_item", Sym::WithItem},
    {"as_pattern", Sym::AsPattern},
    {"conditional_expression", Sym::ConditionalExpression},
    {"parenthesized_expression", Sym::ParenthesizedExpression},
    {"boolean_operator", Sym::BooleanOperator},
    {"not_operator", Sym::NotOperator},
    {"comparison_operator", Sym::ComparisonOperator},
    {"binary_operator", Sym::BinaryOperator},
    {"unary_operator", Sym::UnaryOperator},
    {"await", Sym::Await},
    {"list", Sym::List},
    {"tuple", Sym::Tuple},
    {"set", Sym::Set},
    {"dictionary", Sym::Dictionary},
    {"pair", Sym::Pair},
    {"expression_list", Sym::ExpressionList},
    {"list_comprehension", Sym::ListComprehension},
    {"set_comprehension", Sym::SetComprehension},
    {"dictionary_comprehension", Sym::DictComprehension},
    {"generator_expression", Sym::GeneratorExpression},
    {"assert_statement", Sym::AssertStatement},
    {"raise_statement", Sym::RaiseStatement},
    {"import_statement", Sym::ImportStatement},
    {"import_from_statement", Sym::ImportFromStatement},
    {"future_import_statement", Sym::FutureImport},
    {"aliased_import", Sym::AliasedImport},
    {"dotted_name", Sym::DottedName},
    {"relative_import", Sym::RelativeImport},
    {"wildcard_import", Sym::WildcardImport},
    {"comment", Sym::Comment},
    {"integer", Sym::Integer},
    {"float", Sym::Float},
    {"string", Sym::String},
    {"concatenated_string", Sym::ConcatenatedString},
    {"true", Sym::True},
    {"false", Sym::False},
    {"none", Sym::None},
    {"parameters", Sym::Parameters},
    {"default_parameter", Sym::DefaultParameter},
    {"typed_parameter", Sym::TypedParameter},
    {"typed_default_parameter", Sym::TypedDefaultParameter},
    {"list_splat_pattern", Sym::ListSplatPattern},
    {"dictionary_splat_pattern", Sym::DictionarySplatPattern},
    {"match_statement", Sym::MatchStatement},
    {"lambda", Sym::Lambda},
    {"decorator", Sym::Decorator},
    {"try_statement", Sym::TryStatement},
    {"generic_type", Sym::GenericType},
    {"if_clause", Sym::IfClause},
    {"for_in_clause", Sym::ForInClause},
    {"pattern_list", Sym::PatternList},
    {"tuple_pattern", Sym::TuplePattern},
};
// The fields the walk reads, by name.
constexpr std::pair<const char*, TSFieldId Grammar::*> kFields[] = {
    {"alias", &Grammar::f_alias},
    {"alternative", &Grammar::f_alternative},
    {"arguments", &Grammar::f_arguments},
    {"attribute", &Grammar::f_attribute},
    {"body", &Grammar::f_body},
    {"condition", &Grammar::f_condition},
    {"consequence", &Grammar::f_consequence},
    {"definition", &Grammar::f_definition},
    {"function", &Grammar::f_function},
    {"left", &Grammar::f_left},
    {"module_name", &Grammar::f_module_name},
    {"name", &Grammar::f_name},
    {"object", &Grammar::f_object},
    {"operator", &Grammar::f_operator},
    {"parameters", &Grammar::f_parameters},
    {"right", &Grammar::f_right},
    {"subject", &Grammar::f_subject},
    {"subscript", &Grammar::f_subscript},
    {"superclasses", &Grammar::f_superclasses},
    {"value", &Grammar::f_value},
    {"key", &Grammar::f_key},
    {"argument", &Grammar::f_argument},
    {"type", &Grammar::f_type},
};

std::vector<const char*> names_of_kinds() {
  std::vector<const char*> out;
  for (const auto& [name, sym] : kNames) out.push_back(name);
  return out;
}

std::vector<const char*> names_of_fields() {
  std::vector<const char*> out;
  for (const auto& [name, member] : kFields) out.push_back(name);
  return out;
}

}  // namespace

std::vector<std::string> missing_grammar_names(const TSLanguage* language,
                                               const std::vector<const char*>& kinds,
                                               const std::vector<const char*>& fields) {
  std::vector<std::string> missing;
  for (const char* kind : kinds) {
    // A named node kind (an alias's name counts); "ERROR" is the built-in error symbol.
    if (ts_language_symbol_for_name(language, kind, static_cast<uint32_t>(std::strlen(kind)), true) == 0)
      missing.push_back("node kind '" + std::string(kind) + "'");
  }
  for (const char* field : fields)
    if (ts_language_field_id_for_name(language, field, static_cast<uint32_t>(std::strlen(field))) == 0)
      missing.push_back("field '" + std::string(field) + "'");
  return missing;
}

std::string grammar_problem(const TSLanguage* language) {
  const uint32_t abi = ts_language_abi_version(language);
  if (abi < TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION || abi > TREE_SITTER_LANGUAGE_VERSION)
    return "the tree-sitter-python grammar has ABI " + std::to_string(abi) +
           ", which this tree-sitter core (" + std::to_string(TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION) +
           "-" + std::to_string(TREE_SITTER_LANGUAGE_VERSION) + ") cannot load";
  const std::vector<std::string> missing =
      missing_grammar_names(language, names_of_kinds(), names_of_fields());
  if (missing.empty()) return {};
  std::string list;
  for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
  return "the tree-sitter-python grammar built in lacks " +
         std::string(missing.size() == 1 ? "a name" : "names") + " the Python front end reads (" + list +
         "): a grammar version that renamed them needs the front end changed with it";
}

Grammar::Grammar() {
  if (const std::string problem = grammar_problem(language); !problem.empty())
    throw std::runtime_error(problem);
  // Aliases can give several symbol ids one name, so map every id by name.
  const uint32_t count = ts_language_symbol_count(language);
  by_symbol.assign(count, Sym::Other);
  for (uint32_t id = 0; id < count; ++id) {
    const auto symbol = static_cast<TSSymbol>(id);
    if (ts_language_symbol_type(language, symbol) != TSSymbolTypeRegular) continue;
    const char* name = ts_language_symbol_name(language, symbol);
    for (const auto& [n, s] : kNames)
      if (std::strcmp(n, name) == 0) by_symbol[id] = s;
  }
  for (const auto& [name, member] : kFields)
    this->*member = ts_language_field_id_for_name(language, name, static_cast<uint32_t>(std::strlen(name)));
}

}  // namespace kvlint::python::detail
