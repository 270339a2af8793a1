// Lines end where Python ends them: `\r\n`, `\n` and a lone `\r` (universal newlines). The
// grammar ends a line and a comment only at `\n`, so a lone `\r` must not swallow the rest of a
// line into a comment, turn a valid file into a parse error, or stretch a suppression's span.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/frontend/frontend_test_support.hpp"

namespace kvlint::frontend_test {
namespace {

TEST(FrontendLineEnds, CarriageReturnOnlyFileParsesAndItsCacheIsFound) {
  const std::string source =
      "from transformers import DynamicCache\r"
      "\r"
      "\r"
      "class Talker:\r"
      "    def forward(self, x):\r"
      "        self.cache = DynamicCache()\r"
      "        return x\r";
  const auto f = analyze(source);
  EXPECT_TRUE(f.parse_problems.empty()) << f.parse_problems.front().message;
  ASSERT_NE(site_on_line(f, 6), nullptr);
  EXPECT_EQ(site_on_line(f, 6)->loc.column, 22u);
  ASSERT_EQ(f.classes.size(), 1u);
  EXPECT_EQ(f.classes[0].loc.line, 4u);
}

TEST(FrontendLineEnds, StrayCarriageReturnAfterACommentDoesNotHideTheNextStatement) {
  const std::string source =
      "from transformers import DynamicCache\n"
      "\n"
      "class Talker:\n"
      "    def forward(self, x):\n"
      "        # build the cache\r"
      "        self.cache = DynamicCache()\n"
      "        return x\n";
  const auto f = analyze(source);
  EXPECT_TRUE(f.parse_problems.empty());
  EXPECT_NE(site_on_line(f, 6), nullptr);
}

// The reproduction: the comment ends at the lone `\r`; removing the suppression must not
// take the next statement with it, and the suppression applies to its own line.
TEST(FrontendLineEnds, SuppressionEndsAtALoneCarriageReturn) {
  const std::string source =
      "import os\n\n\nclass Talker:\n    def __init__(self):\n"
      "        self.x = 1  # kvlint: ignore[KV101] legacy\r"
      "        self.important = compute_everything()\n";
  const auto f = analyze(source);
  EXPECT_TRUE(f.parse_problems.empty());
  ASSERT_EQ(f.suppressions.size(), 1u);
  const auto& s = f.suppressions[0];
  EXPECT_EQ(slice(source, s.span), "# kvlint: ignore[KV101] legacy");
  EXPECT_EQ(slice(source, s.removal), "  # kvlint: ignore[KV101] legacy");
  EXPECT_EQ(s.reason, "legacy");
  EXPECT_EQ(s.loc.line, 6u);
  EXPECT_EQ(s.applies_to_line, 6u);

  // Alone on its line, it goes with its own line end and nothing after it.
  const std::string alone =
      "class Talker:\r"
      "    # kvlint: ignore[KV101] legacy\r"
      "    important = compute_everything()\r";
  const auto g = analyze(alone);
  ASSERT_EQ(g.suppressions.size(), 1u);
  EXPECT_EQ(slice(alone, g.suppressions[0].removal), "    # kvlint: ignore[KV101] legacy\r");
  EXPECT_EQ(g.suppressions[0].applies_to_line, 3u);
}

// In a CRLF file the `\r` belongs to the line end, not to the comment: removing a trailing
// suppression keeps it, removing a suppression alone on its line takes the whole `\r\n`.
TEST(FrontendLineEnds, CrlfSuppressionSpansLeaveTheLineEndAlone) {
  const std::string source =
      "x = f()  # kvlint: ignore[KV101] why\r\n"
      "    # kvlint: ignore[KV3] alone\r\n"
      "y = 2\r\n";
  const auto f = analyze(source);
  ASSERT_EQ(f.suppressions.size(), 2u);
  EXPECT_EQ(slice(source, f.suppressions[0].span), "# kvlint: ignore[KV101] why");
  EXPECT_EQ(slice(source, f.suppressions[0].removal), "  # kvlint: ignore[KV101] why");
  EXPECT_EQ(slice(source, f.suppressions[1].removal), "    # kvlint: ignore[KV3] alone\r\n");
  EXPECT_EQ(f.suppressions[1].applies_to_line, 3u);
}

}  // namespace
}  // namespace kvlint::frontend_test
