// The token summary (token_summary.hpp): it may say a needle is there when it is not, never
// that it is not when it is.
#include "tools/kvlint/engine/token_summary.hpp"

#include <gtest/gtest.h>

#include <string>

namespace kvlint {
namespace {

using Start = NeedleSearch::Start;

TEST(TokenSummary, HoldsEachIdentifierOnceInOrder) {
  EXPECT_EQ(token_summary("b = a(b)  # a.b\n"), std::string("\0a\0b\0", 5));
  EXPECT_EQ(token_summary(""), std::string("\0", 1));
}

TEST(TokenSummary, SaysNoOnlyWhereTheBytesCannotHoldTheNeedle) {
  const std::string content = "from .wrap import GraphWrapper\nx = nx.Graph(1)\ny: List<Runner> = None\n";
  const std::string summary = token_summary(content);
  for (const auto& [needle, start] : {std::pair{"Graph(", Start::WordStart},
                                      {"Graph(", Start::Anywhere},
                                      {"Wrapper", Start::Anywhere},
                                      {"<Runner>", Start::Anywhere},
                                      {"GraphWrapper", Start::WordStart},
                                      {"nx.Graph", Start::WordStart}}) {
    ASSERT_NE(content.find(needle), std::string::npos) << needle;
    EXPECT_TRUE(summary_may_contain(summary, needle, start)) << needle;
  }
  // Not there: a name no token holds, one only inside a longer name where a word start is
  // needed, and one that must end a token but does not.
  EXPECT_FALSE(summary_may_contain(summary, "Decoder(", Start::Anywhere));
  EXPECT_FALSE(summary_may_contain(summary, "Wrapper(", Start::WordStart));
  EXPECT_FALSE(summary_may_contain(summary, "<Run>", Start::Anywhere));
  EXPECT_TRUE(summary_may_contain(summary, "Graph.", Start::Anywhere));
}

}  // namespace
}  // namespace kvlint
