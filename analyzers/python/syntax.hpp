// tree-sitter plumbing of the Python front end: RAII owners of parsers, trees and cursors,
// and the grammar's node kinds and field ids resolved once per analyzer. Private to
// analyzers/python/.
#pragma once

#include <tree_sitter/api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

extern "C" const TSLanguage* tree_sitter_python();

namespace kvlint::python::detail {

struct ParserDeleter {
  void operator()(TSParser* parser) const { ts_parser_delete(parser); }
};
struct TreeDeleter {
  void operator()(TSTree* tree) const { ts_tree_delete(tree); }
};
using ParserPtr = std::unique_ptr<TSParser, ParserDeleter>;
using TreePtr = std::unique_ptr<TSTree, TreeDeleter>;

// RAII TSTreeCursor; reset() re-roots it, so one cursor serves many sub-walks.
class Cursor {
 public:
  explicit Cursor(TSNode node) : cursor_(ts_tree_cursor_new(node)) {}
  ~Cursor() { ts_tree_cursor_delete(&cursor_); }
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;
  TSTreeCursor* get() { return &cursor_; }
  void reset(TSNode node) { ts_tree_cursor_reset(&cursor_, node); }
  TSNode node() const { return ts_tree_cursor_current_node(&cursor_); }

 private:
  TSTreeCursor cursor_;
};

// Node kinds the walk cares about; everything else is Other.
enum class Sym : uint8_t {
  Other,
  Error,
  Module,
  Block,
  ClassDef,
  FunctionDef,
  Call,
  Attribute,
  Identifier,
  Subscript,
  ArgumentList,
  KeywordArgument,
  ListSplat,
  DictionarySplat,
  Assignment,
  AugmentedAssignment,
  ExpressionStatement,
  ReturnStatement,
  Yield,
  IfStatement,
  ElifClause,
  ElseClause,
  ForStatement,
  WhileStatement,
  WithStatement,
  WithClause,
  WithItem,
  AsPattern,
  ConditionalExpression,
  ParenthesizedExpression,
  BooleanOperator,
  NotOperator,
  ComparisonOperator,
  BinaryOperator,
  UnaryOperator,
  Await,
  List,
  Tuple,
  Set,
  Dictionary,
  Pair,
  ExpressionList,
  ListComprehension,
  SetComprehension,
  DictComprehension,
  GeneratorExpression,
  AssertStatement,
  RaiseStatement,
  ImportStatement,
  ImportFromStatement,
  FutureImport,
  AliasedImport,
  DottedName,
  RelativeImport,
  WildcardImport,
  Comment,
  Integer,
  Float,
  String,
  ConcatenatedString,
  True,
  False,
  None,
  Parameters,
  DefaultParameter,
  TypedParameter,
  TypedDefaultParameter,
  ListSplatPattern,
  DictionarySplatPattern,
  MatchStatement,
  Lambda,
  Decorator,
  TryStatement,
  GenericType,
  IfClause,
  ForInClause,
  PatternList,
  TuplePattern,
};

// The names of `kinds` (named node kinds) and `fields` that `language` does not have, spelled
// "node kind 'x'" / "field 'y'"; empty when it has them all.
std::vector<std::string> missing_grammar_names(const TSLanguage* language,
                                               const std::vector<const char*>& kinds,
                                               const std::vector<const char*>& fields);
// Why the front end cannot work with `language`: an ABI this core cannot load, or node kinds or
// fields the walk reads by id that the grammar lacks (a grammar upgrade that renamed one would
// otherwise make every such node read as Sym::Other, or every such field as absent, silently).
// Empty when it can.
std::string grammar_problem(const TSLanguage* language);

// Symbol and field ids of the grammar, resolved once per analyzer. Throws std::runtime_error
// with grammar_problem() when there is one.
struct Grammar {
  const TSLanguage* language = tree_sitter_python();
  std::vector<Sym> by_symbol;
  TSFieldId f_alias, f_alternative, f_arguments, f_attribute, f_body, f_condition, f_consequence,
      f_definition, f_function, f_left, f_module_name, f_name, f_object, f_operator, f_parameters, f_right,
      f_subject, f_subscript, f_superclasses, f_value, f_key, f_argument, f_type;

  Grammar();
  Sym sym(TSNode node) const {
    if (ts_node_is_null(node)) return Sym::Other;
    const TSSymbol s = ts_node_symbol(node);
    if (s == static_cast<TSSymbol>(-1)) return Sym::Error;  // ts_builtin_sym_error
    return s < by_symbol.size() ? by_symbol[s] : Sym::Other;
  }
};

}  // namespace kvlint::python::detail
