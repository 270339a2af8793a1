#include <gtest/gtest.h>

#include "tests/reporters/reporter_test_support.hpp"

namespace kvlint {
namespace {

using test::make_finding;
using test::sample_result;
using test::TempDir;

ReportOptions plain_options() {
  ReportOptions options;
  options.tool_version = "0.1.0";
  return options;
}

TEST(ParseOutputFormat, AcceptsEveryFormatName) {
  const std::pair<const char*, OutputFormat> cases[] = {
      {"text", OutputFormat::Text},     {"json", OutputFormat::Json},         {"sarif", OutputFormat::Sarif},
      {"github", OutputFormat::Github}, {"markdown", OutputFormat::Markdown}, {"html", OutputFormat::Html}};
  for (const auto& [name, expected] : cases) {
    OutputFormat parsed = OutputFormat::Text;
    ASSERT_TRUE(parse_output_format(name, parsed)) << name;
    EXPECT_EQ(parsed, expected) << name;
  }
}

TEST(ParseOutputFormat, RejectsUnknownNamesAndLeavesOutputAlone) {
  for (const char* name : {"xml", "", "JSON", "sarif ", "htm"}) {
    OutputFormat parsed = OutputFormat::Github;
    EXPECT_FALSE(parse_output_format(name, parsed)) << name;
    EXPECT_EQ(parsed, OutputFormat::Github) << name;
  }
}

TEST(TextReporter, EmptyResultSaysAllChecksPassed) {
  EXPECT_EQ(render_report(CheckResult{}, OutputFormat::Text, plain_options()), "All checks passed.\n");
}

TEST(TextReporter, EmptyResultMentionsSuppressed) {
  CheckResult result;
  result.suppressed = 3;
  EXPECT_EQ(render_report(result, OutputFormat::Text, plain_options()), "All checks passed; 3 suppressed.\n");
}

TEST(TextReporter, FindingsOfEachSeverityWithNotesDiagnosticsAndSummary) {
  ReportOptions options = plain_options();
  options.show_source = false;
  EXPECT_EQ(render_report(sample_result(), OutputFormat::Text, options),
            "examples/models/codec.py:18:9: error: KV101 [StreamingDecoder] DynamicCache built here is not "
            "declared\n"
            "  = note: examples/models/codec.py:33:5: cache kept per request id here\n"
            "  = note: examples/models/runner.py:7:1: owner built here\n"
            "examples/models/codec.py:40:5: warning: KV104 [Talker] declaration covers no cache\n"
            "src/geom.py:7:3: info: KV403 layers written as a literal\n"
            "broken.py:3:7: error[parse-error]: unexpected indent\n"
            "\n"
            "Found 3 findings (1 error, 1 warning, 1 info); 2 suppressed.\n"
            "1 input problem reported.\n");
}

TEST(TextReporter, SummaryPluralsAndOmitsZeroSeverities) {
  CheckResult result;
  for (int i = 0; i < 2; ++i) {
    result.findings.push_back(make_finding("KV202", Severity::Error, {"a.py", 1, 1, 1, 2}, "A", "m", "x"));
  }
  ReportOptions options = plain_options();
  options.show_source = false;
  const std::string text = render_report(result, OutputFormat::Text, options);
  EXPECT_TRUE(text.ends_with("\nFound 2 findings (2 errors).\n")) << text;
}

TEST(TextReporter, UnreadableSourceSkipsTheExcerpt) {
  CheckResult result = sample_result();
  result.diagnostics.clear();
  ReportOptions with_source = plain_options();
  const std::string text = render_report(result, OutputFormat::Text, with_source);
  EXPECT_EQ(text.find(" |"), std::string::npos) << text;
  EXPECT_NE(text.find("src/geom.py:7:3: info: KV403 layers written as a literal\n\n"), std::string::npos)
      << text;
}

TEST(TextReporter, ExcerptPutsCaretsUnderTheColumnRange) {
  TempDir dir;
  const std::string path = dir.write("model.py", "class A:\n    self.cache = DynamicCache()\n").string();
  CheckResult result;
  // "DynamicCache()" starts at byte column 18 and ends before column 32.
  result.findings.push_back(
      make_finding("KV101", Severity::Error, {path, 2, 18, 2, 32}, "A", "undeclared", "x"));
  const std::string text = render_report(result, OutputFormat::Text, plain_options());
  EXPECT_EQ(text, path +
                      ":2:18: error: KV101 [A] undeclared\n"
                      "  |\n"
                      "2 |     self.cache = DynamicCache()\n"
                      "  |                  ^^^^^^^^^^^^^^\n"
                      "\n"
                      "Found 1 finding (1 error).\n");
}

TEST(TextReporter, ExcerptCountsCodePointsAndKeepsTabs) {
  TempDir dir;
  // Line 10 holds a two-byte 'é' before the span; line 11 starts with a tab; CRLF endings.
  std::string content;
  for (int i = 0; i < 9; ++i) content += "# pad\r\n";
  content += "    \xC3\xA9 = DynamicCache()\r\n";
  content += "\tx = StaticCache()\r\n";
  const std::string path = dir.write("wide.py", content).string();
  CheckResult result;
  result.findings.push_back(
      make_finding("KV101", Severity::Warning, {path, 10, 10, 10, 24}, "", "wide", "x"));
  result.findings.push_back(make_finding("KV101", Severity::Info, {path, 11, 6, 11, 19}, "", "tab", "x"));
  const std::string text = render_report(result, OutputFormat::Text, plain_options());
  EXPECT_NE(text.find("10 |     \xC3\xA9 = DynamicCache()\n"
                      "   |         ^^^^^^^^^^^^^^\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("11 | \tx = StaticCache()\n"
                      "   | \t    ^^^^^^^^^^^^^\n"),
            std::string::npos)
      << text;
}

TEST(TextReporter, MultiLineSpanUnderlinesToEndOfLine) {
  TempDir dir;
  const std::string path = dir.write("m.py", "x = f(\n  1)\n").string();
  CheckResult result;
  result.findings.push_back(make_finding("KV102", Severity::Error, {path, 1, 5, 2, 5}, "", "call", "x"));
  const std::string text = render_report(result, OutputFormat::Text, plain_options());
  EXPECT_NE(text.find("1 | x = f(\n  |     ^^\n"), std::string::npos) << text;
}

// One 86 KB line: the excerpt shows a window around the column, marked as cut on both
// sides, with the carets still under the span.
TEST(TextReporter, ExcerptOfALongLineIsAWindowAroundTheColumn) {
  TempDir dir;
  const std::string left(43000, 'a'), right(43000, 'b');
  const std::string path = dir.write("long.py", left + " = DynamicCache()" + right + "\n").string();
  CheckResult result;
  const auto column = static_cast<uint32_t>(left.size() + 4);  // "DynamicCache()"
  result.findings.push_back(
      make_finding("KV101", Severity::Error, {path, 1, column, 1, column + 14}, "", "undeclared", "x"));
  const std::string text = render_report(result, OutputFormat::Text, plain_options());
  EXPECT_LT(text.size(), 600u) << text.size();
  const auto shown = text.find("1 | ");
  ASSERT_NE(shown, std::string::npos) << text;
  const std::string line = text.substr(shown + 4, text.find('\n', shown) - shown - 4);
  EXPECT_TRUE(
      line.starts_with("\xE2\x80\xA6"
                       "a"))
      << line;                                           // "…a"
  EXPECT_TRUE(line.ends_with("b\xE2\x80\xA6")) << line;  // "b…"
  const auto carets_at = text.find("  | ", shown);
  ASSERT_NE(carets_at, std::string::npos);
  const std::string carets = text.substr(carets_at + 4, text.find('\n', carets_at) - carets_at - 4);
  // The marker is one column wide: the carets sit under "DynamicCache()" in the shown line.
  const std::size_t span_bytes = line.find("DynamicCache()");
  ASSERT_NE(span_bytes, std::string::npos);
  EXPECT_EQ(carets, std::string(span_bytes - 2, ' ') + std::string(14, '^')) << line;
}

// 3,000 caches on one 86 KB line: the report grows with the findings, not with findings times
// the line.
TEST(TextReporter, ReportSizeIsLinearInFindingsOnOneLine) {
  TempDir dir;
  const std::string text =
      render_report(test::findings_on_one_long_line(dir), OutputFormat::Text, plain_options());
  EXPECT_LT(text.size(), 3000u * 600u) << text.size();
}

// Lines end at `\r\n`, `\n` and a lone `\r`, as the front ends count them.
TEST(TextReporter, ExcerptLinesEndAtALoneCarriageReturn) {
  TempDir dir;
  const std::string path = dir.write("cr.py", "import x\r\rclass A:\r    c = DynamicCache()\r").string();
  CheckResult result;
  result.findings.push_back(
      make_finding("KV101", Severity::Error, {path, 4, 9, 4, 23}, "A", "undeclared", "x"));
  const std::string text = render_report(result, OutputFormat::Text, plain_options());
  EXPECT_NE(text.find("4 |     c = DynamicCache()\n  |         ^^^^^^^^^^^^^^\n"), std::string::npos) << text;
}

TEST(TextReporter, ColorsOnlyWhenAsked) {
  CheckResult result = sample_result();
  ReportOptions options = plain_options();
  options.show_source = false;
  const std::string plain = render_report(result, OutputFormat::Text, options);
  EXPECT_EQ(plain.find('\x1b'), std::string::npos);

  options.color = true;
  const std::string colored = render_report(result, OutputFormat::Text, options);
  EXPECT_NE(colored.find("codec.py:18:9: \x1b[31merror\x1b[0m: \x1b[1mKV101\x1b[0m [StreamingDecoder]"),
            std::string::npos)
      << colored;
  EXPECT_NE(colored.find("\x1b[33mwarning\x1b[0m: \x1b[1mKV104\x1b[0m"), std::string::npos) << colored;
  EXPECT_NE(colored.find("\x1b[34minfo\x1b[0m: \x1b[1mKV403\x1b[0m"), std::string::npos) << colored;
  EXPECT_NE(colored.find("broken.py:3:7: \x1b[31merror\x1b[0m[parse-error]"), std::string::npos) << colored;
}

TEST(TextReporter, StatisticsTableSortedByCountThenCode) {
  CheckResult result;
  const auto add = [&result](const char* code, Severity severity, int count) {
    for (int i = 0; i < count; ++i) {
      result.findings.push_back(make_finding(code, severity, {"a.py", 1, 1, 1, 2}, "A", "m", "x"));
    }
  };
  add("KV403", Severity::Info, 1);
  add("KV202", Severity::Error, 3);
  add("KV104", Severity::Warning, 1);
  add("KV101", Severity::Error, 12);
  ReportOptions options = plain_options();
  options.statistics = true;
  EXPECT_EQ(render_report(result, OutputFormat::Text, options),
            "12  KV101  undeclared-cache             error\n"
            " 3  KV202  unsupported-fixed-row-claim  error\n"
            " 1  KV104  orphan-declaration           warning\n"
            " 1  KV403  hand-written-geometry        info\n"
            "\n"
            "Found 17 findings (15 errors, 1 warning, 1 info).\n");
}

}  // namespace
}  // namespace kvlint

namespace kvlint {
namespace {

TEST(TextReporter, StatisticsKeepDiagnosticsAboveTheTable) {
  ReportOptions options;
  options.statistics = true;
  EXPECT_EQ(render_report(test::sample_result(), OutputFormat::Text, options),
            "broken.py:3:7: error[parse-error]: unexpected indent\n"
            "\n"
            "1  KV101  undeclared-cache       error\n"
            "1  KV104  orphan-declaration     warning\n"
            "1  KV403  hand-written-geometry  info\n"
            "\n"
            "Found 3 findings (1 error, 1 warning, 1 info); 2 suppressed.\n"
            "1 input problem reported.\n");
}

TEST(TextReporter, StatisticsCompareBytesReadWithBytesParsed) {
  CheckResult result;
  result.stats.files_found = 3;
  result.stats.files_context = 1;
  result.stats.files_parsed = 1;
  result.stats.bytes_read = 4000;
  result.stats.bytes_parsed = 1000;
  ReportOptions options;
  options.statistics = true;
  EXPECT_EQ(render_report(result, OutputFormat::Text, options),
            "4 files read (4000 bytes); 1 file parsed (1000 bytes, 25% of those read).\n"
            "\n"
            "All checks passed.\n");
}

TEST(TextReporter, ControlCharactersFromSourceAreShownEscaped) {
  TempDir dir;
  // An escape sequence inside a string before the span, a C1 CSI and a bad byte in the message.
  const std::string path = dir.write("esc\x07.py", "s = '\x1b[2J'; c = DynamicCache()\n").string();
  CheckResult result;
  result.findings.push_back(make_finding("KV101", Severity::Error, {path, 1, 17, 1, 31}, "A\x1b[31m",
                                         "spec `kv\x1b[2J\xc2\x9b\xff` \r\nforged", "x"));
  result.findings.back().related.push_back(test::related_at({path, 1, 1, 1, 2}, "note \x1b]0;title\x07"));
  result.diagnostics.push_back({path, 0, 0, "read-error", "bad \x1b[1m"});
  const std::string text = render_report(result, OutputFormat::Text, plain_options());
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << text;
  const std::string shown_path = path.substr(0, path.size() - 4) + "\\x07.py";
  EXPECT_NE(text.find(shown_path +
                      ":1:17: error: KV101 [A\\x1b[31m] spec `kv\\x1b[2J\\u009b\\xff` \\x0d\\x0aforged\n"),
            std::string::npos)
      << text;
  // The underline still sits under `DynamicCache()` on the escaped line.
  EXPECT_NE(text.find("1 | s = '\\x1b[2J'; c = DynamicCache()\n"
                      "  |                    ^^^^^^^^^^^^^^\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("= note: " + shown_path + ":1:1: note \\x1b]0;title\\x07\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("read-error]: bad \\x1b[1m\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace kvlint
