// The grammar's symbol and field ids, looked up by name once per analyzer.
#include "analyzers/python/syntax.hpp"

#include <cstring>
#include <utility>

namespace kvlint::python::detail {

Grammar::Grammar() {
  static constexpr std::pair<const char*, Sym> kNames[] = {
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
  };
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
  auto field = [this](const char* name) {
    return ts_language_field_id_for_name(language, name, static_cast<uint32_t>(std::strlen(name)));
  };
  f_alias = field("alias");
  f_alternative = field("alternative");
  f_arguments = field("arguments");
  f_attribute = field("attribute");
  f_body = field("body");
  f_condition = field("condition");
  f_consequence = field("consequence");
  f_definition = field("definition");
  f_function = field("function");
  f_left = field("left");
  f_module_name = field("module_name");
  f_name = field("name");
  f_object = field("object");
  f_operator = field("operator");
  f_parameters = field("parameters");
  f_right = field("right");
  f_subject = field("subject");
  f_subscript = field("subscript");
  f_superclasses = field("superclasses");
  f_value = field("value");
  f_key = field("key");
  f_argument = field("argument");
  f_type = field("type");
}

}  // namespace kvlint::python::detail
