// The grammar built in serves the front end: every node kind and field the walk reads by id
// exists in it, and a name it lacks is reported (a grammar upgrade that renamed a node kind
// must fail at startup, not make every such node read as an unknown one).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "analyzers/python/python_frontend.hpp"
#include "analyzers/python/syntax.hpp"
#include "analyzers/python/walker.hpp"

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

// field()'s memo answers as ts_node_child_by_field_id does, for every node and field of a file,
// asked twice (the second time from the memo where no other question took the slot since).
TEST(FrontendFieldMemo, AnswersAsTreeSitterForEveryNodeAndField) {
  const std::string src =
      "class M:\n    def f(self, x):\n        if self.cfg.get('a') and x.y(z=1):\n"
      "            return f(x)[0].b if x else -x\n        self.c = DynamicCache()\n";
  const std::unique_ptr<TSParser, decltype(&ts_parser_delete)> parser(ts_parser_new(), &ts_parser_delete);
  ASSERT_TRUE(ts_parser_set_language(parser.get(), tree_sitter_python()));
  const std::unique_ptr<TSTree, decltype(&ts_tree_delete)> tree(
      ts_parser_parse_string(parser.get(), nullptr, src.data(), static_cast<uint32_t>(src.size())),
      &ts_tree_delete);
  std::vector<TSNode> nodes;
  std::vector<TSNode> stack{ts_tree_root_node(tree.get())};
  while (!stack.empty()) {
    const TSNode n = stack.back();
    stack.pop_back();
    nodes.push_back(n);
    for (uint32_t i = 0, count = ts_node_child_count(n); i < count; ++i) stack.push_back(ts_node_child(n, i));
  }
  const auto fields = static_cast<TSFieldId>(ts_language_field_count(tree_sitter_python()));
  python::detail::FieldMemo memo;
  std::size_t with_child = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (const TSNode& n : nodes)
      for (TSFieldId f = 1; f <= fields; ++f) {
        const TSNode want = ts_node_child_by_field_id(n, f);
        const TSNode got = memo.child(n, f);
        EXPECT_TRUE(ts_node_eq(want, got) && ts_node_start_byte(want) == ts_node_start_byte(got));
        if (!ts_node_is_null(want)) ++with_child;
      }
  EXPECT_GT(with_child, 40u);
}

}  // namespace
}  // namespace kvlint::frontend_test
