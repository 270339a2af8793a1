#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tools/kvlint/engine/suppressions.hpp"

namespace kvlint {
namespace {

facts::Suppression inline_suppression(uint32_t line, std::vector<std::string> codes, std::string reason) {
  facts::Suppression s;
  s.loc.file = "m.py";
  s.loc.line = line;
  s.loc.column = 20;
  s.applies_to_line = line;
  s.codes = std::move(codes);
  s.reason = std::move(reason);
  return s;
}

Finding finding(std::string code, uint32_t line, std::string file = "m.py") {
  Finding f;
  f.code = std::move(code);
  f.loc.file = std::move(file);
  f.loc.line = line;
  return f;
}

std::vector<std::string> codes_of(const SuppressionOutcome& o) {
  std::vector<std::string> out;
  for (const auto& f : o.kept) out.push_back(f.code + "@" + std::to_string(f.loc.line));
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Suppressions, InlineByCodeOrPrefixOnItsLineOnly) {
  facts::FileFacts file;
  file.path = "m.py";
  file.suppressions = {inline_suppression(3, {"KV101"}, "declared elsewhere"),
                       inline_suppression(5, {"KV2"}, "prefix")};
  Config config;
  auto out = apply_suppressions(
      {finding("KV101", 3), finding("KV101", 4), finding("KV202", 5), finding("KV101", 5)}, {&file}, config);
  EXPECT_EQ(codes_of(out), (std::vector<std::string>{"KV101@4", "KV101@5"}));
  EXPECT_EQ(out.suppressed, 2u);
}

TEST(Suppressions, FileLevelAndPerFileIgnores) {
  facts::FileFacts file;
  file.path = "m.py";
  auto whole_file = inline_suppression(1, {"KV104"}, "generated");
  whole_file.file_level = true;
  file.suppressions = {whole_file};
  Config config;
  config.per_file_ignores["m.py"] = {"KV3"};
  auto out =
      apply_suppressions({finding("KV104", 10), finding("KV301", 12), finding("KV101", 12)}, {&file}, config);
  EXPECT_EQ(codes_of(out), std::vector<std::string>{"KV101@12"});
  EXPECT_EQ(out.suppressed, 2u);
}

TEST(Suppressions, Kv901WithoutReasonKv902UnknownCode) {
  facts::FileFacts file;
  file.path = "m.py";
  file.suppressions = {inline_suppression(3, {"KV101"}, ""), inline_suppression(7, {"KV1O1"}, "typo")};
  Config config;
  auto out = apply_suppressions({finding("KV101", 3)}, {&file}, config);
  // Line 7 names an unknown code (KV902) and therefore also suppresses nothing (KV903 does not
  // apply: it names no selected rule).
  EXPECT_EQ(codes_of(out), (std::vector<std::string>{"KV901@3", "KV902@7"}));
  EXPECT_EQ(out.kept[0].severity, Severity::Warning);
  EXPECT_EQ(out.suppressed, 1u);
}

TEST(Suppressions, Kv903OnlyWhenTheNamedCodesAreSelected) {
  facts::FileFacts file;
  file.path = "m.py";
  file.suppressions = {inline_suppression(3, {"KV101"}, "stale"),
                       inline_suppression(4, {"KV202"}, "other rule"),
                       inline_suppression(5, {"KV1"}, "prefix")};
  Config config;
  config.select = {"KV101", "KV9"};  // KV202 and the rest of KV1 are not selected in this run
  auto out = apply_suppressions({}, {&file}, config);
  EXPECT_EQ(codes_of(out), std::vector<std::string>{"KV903@3"});
  // With everything selected, all three are unused.
  Config all;
  EXPECT_EQ(apply_suppressions({}, {&file}, all).kept.size(), 3u);
  // A used suppression is not reported.
  EXPECT_EQ(codes_of(apply_suppressions({finding("KV101", 3)}, {&file}, config)), std::vector<std::string>{});
  // Engine codes can be deselected.
  config.ignore = {"KV903"};
  EXPECT_TRUE(apply_suppressions({}, {&file}, config).kept.empty());
}

TEST(Suppressions, Kv903CanBeSilencedByIgnoreFile) {
  facts::FileFacts file;
  file.path = "m.py";
  auto whole_file = inline_suppression(1, {"KV903"}, "kept on purpose");
  whole_file.file_level = true;
  file.suppressions = {whole_file, inline_suppression(3, {"KV101"}, "stale")};
  Config config;
  auto out = apply_suppressions({}, {&file}, config);
  EXPECT_TRUE(out.kept.empty());
  EXPECT_EQ(out.suppressed, 1u);
}

TEST(Suppressions, MalformedSuppressionSuppressesNothingAndIsReportedAsKv904) {
  facts::FileFacts file;
  file.path = "m.py";
  auto malformed = inline_suppression(3, {}, "");
  malformed.malformed = "`ignore` without `[CODES]` names no code";
  auto malformed_file = malformed;
  malformed_file.file_level = true;
  malformed_file.loc.line = malformed_file.applies_to_line = 1;
  file.suppressions = {malformed_file, malformed};
  Config config;
  auto out = apply_suppressions({finding("KV101", 3), finding("KV202", 9)}, {&file}, config);
  // Neither hides anything, neither counts as unused (KV903) or reasonless (KV901).
  EXPECT_EQ(codes_of(out), (std::vector<std::string>{"KV101@3", "KV202@9", "KV904@1", "KV904@3"}));
  EXPECT_EQ(out.suppressed, 0u);
  ASSERT_EQ(out.kept.size(), 4u);
  EXPECT_THAT(out.kept[3].message, ::testing::HasSubstr("names no code"));
  config.ignore = {"KV904"};
  EXPECT_EQ(codes_of(apply_suppressions({finding("KV101", 3)}, {&file}, config)),
            std::vector<std::string>{"KV101@3"});
}

}  // namespace
}  // namespace kvlint
