// The grammar built in serves the front end: every node kind and field the walk reads by id
// exists in it, and a name it lacks is reported (a grammar upgrade that renamed a node kind
// must fail at startup, not make every such node read as an unknown one).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analyzers/python/python_frontend.hpp"
#include "analyzers/python/syntax.hpp"

namespace kvlint::frontend_test {
namespace {

using ::testing::ElementsAre;

TEST(FrontendGrammar, BuiltInGrammarHasEveryNameTheWalkReads) {
  EXPECT_EQ(python::grammar_problem(), "");
  EXPECT_GE(ts_language_abi_version(tree_sitter_python()), 15u);
}

TEST(FrontendGrammar, NamesTheGrammarLacksAreReported) {
  // except_group_clause was tree-sitter-python 0.23's node for `except*`; 0.25 folds it into
  // except_clause. "ERROR" is the built-in error symbol and always there.
  EXPECT_THAT(python::detail::missing_grammar_names(tree_sitter_python(),
                                                    {"class_definition", "ERROR", "except_group_clause"},
                                                    {"body", "no_such_field"}),
              ElementsAre("node kind 'except_group_clause'", "field 'no_such_field'"));
  // An anonymous token's spelling is no named node kind.
  EXPECT_THAT(python::detail::missing_grammar_names(tree_sitter_python(), {"except_clause", "except"}, {}),
              ElementsAre("node kind 'except'"));
}

}  // namespace
}  // namespace kvlint::frontend_test
