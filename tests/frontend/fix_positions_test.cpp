// Byte positions the fixes need: suppression comment, code and removal spans; a class
// body's indentation and end; where an import goes.
#include <gtest/gtest.h>

#include "tests/frontend/frontend_test_support.hpp"

namespace kvlint::frontend_test {
namespace {

TEST(FrontendFixPositions, SuppressionSpans) {
  constexpr std::string_view source =
      "x = f()  # kvlint: ignore[KV101, KV202] why\n"
      "    # kvlint: ignore[KV3] alone\n"
      "y = 2\n";
  const auto f = analyze(source);
  ASSERT_EQ(f.suppressions.size(), 2u);
  const auto& trailing = f.suppressions[0];
  EXPECT_EQ(slice(source, trailing.span), "# kvlint: ignore[KV101, KV202] why");
  ASSERT_EQ(trailing.code_spans.size(), 2u);
  EXPECT_EQ(slice(source, trailing.code_spans[0]), "KV101");
  EXPECT_EQ(slice(source, trailing.code_spans[1]), "KV202");
  EXPECT_EQ(slice(source, trailing.removal), "  # kvlint: ignore[KV101, KV202] why");
  const auto& alone = f.suppressions[1];
  EXPECT_EQ(slice(source, alone.removal), "    # kvlint: ignore[KV3] alone\n");
}

TEST(FrontendFixPositions, ClassBodyAndImportPoint) {
  constexpr std::string_view source =
      "\"\"\"doc\"\"\"\n"
      "import torch\n"
      "try:\n"
      "    import extra\n"
      "except ImportError:\n"
      "    extra = None\n"
      "class A:\n"
      "\tdef f(self):\n"
      "\t\treturn 1\n"
      "# after\n"
      "class B: pass\n";
  const auto f = analyze(source);
  EXPECT_EQ(source.substr(0, f.import_insert_byte), "\"\"\"doc\"\"\"\nimport torch\n");
  ASSERT_EQ(f.classes.size(), 2u);
  EXPECT_EQ(f.classes[0].body_indent, "\t");
  EXPECT_EQ(source.substr(f.classes[0].body_end_byte, 7), "# after");
  EXPECT_EQ(f.classes[1].body_indent, "    ");
  EXPECT_EQ(f.classes[1].body_end_byte, source.size());
}

}  // namespace
}  // namespace kvlint::frontend_test
