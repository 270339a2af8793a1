#include <gtest/gtest.h>

#include "tests/reporters/reporter_test_support.hpp"

namespace kvlint {
namespace {

TEST(MarkdownReporter, EmptyResult) {
  CheckResult result;
  result.stats.files_found = 1;
  EXPECT_EQ(render_report(result, OutputFormat::Markdown, ReportOptions{}),
            "## kvlint: all checks passed\n\n1 file checked.\n");
}

TEST(MarkdownReporter, HeadingTableEvidenceAndDiagnostics) {
  EXPECT_EQ(render_report(test::sample_result(), OutputFormat::Markdown, ReportOptions{}),
            "## kvlint: 3 findings (1 error, 1 warning, 1 info); 2 suppressed, 1 input problem\n"
            "\n"
            "12 files checked.\n"
            "\n"
            "| Severity | Code | Location | Owner | Message |\n"
            "|---|---|---|---|---|\n"
            "| error | KV101 `undeclared-cache` | `examples/models/codec.py:18:9` | `StreamingDecoder` | "
            "DynamicCache built here is not declared |\n"
            "| warning | KV104 `orphan-declaration` | `examples/models/codec.py:40:5` | `Talker` | "
            "declaration covers no cache |\n"
            "| info | KV403 `hand-written-geometry` | `src/geom.py:7:3` |  | layers written as a literal |\n"
            "\n"
            "### Evidence\n"
            "\n"
            "- **KV101** at `examples/models/codec.py:18:9`: DynamicCache built here is not declared\n"
            "  - `examples/models/codec.py:33:5`: cache kept per request id here\n"
            "  - `examples/models/runner.py:7:1`: owner built here\n"
            "\n"
            "### Input problems\n"
            "\n"
            "- `broken.py:3:7` `parse-error`: unexpected indent\n");
}

TEST(MarkdownReporter, EscapesCellsSoEachRowStaysOneRow) {
  const std::string text = render_report(test::odd_result(), OutputFormat::Markdown, ReportOptions{});
  EXPECT_NE(
      text.find("| error | KV101 `undeclared-cache` | `dir with space/na\xC3\xAFve,%\"q\".py:2:3` | `Own` | "
                "say \"hi\"<br>second line: 50% done, ok \xC3\xBC &lt;b&gt;\\|x\\|&lt;/b&gt; |\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("- `bad,file:1.py:0:0` `read-error`: cannot read: 100% gone<br>really\n"),
            std::string::npos)
      << text;
}

TEST(MarkdownReporter, BackticksAndPipesInCodeSpans) {
  CheckResult result;
  result.findings.push_back(
      test::make_finding("KV101", Severity::Error, {"a`b|c.py", 1, 2, 1, 3}, "A_B", "use *this* [x]", "x"));
  const std::string text = render_report(result, OutputFormat::Markdown, ReportOptions{});
  EXPECT_NE(text.find("| ``a`b\\|c.py:1:2`` | `A_B` | use \\*this\\* \\[x\\] |"), std::string::npos) << text;
}

TEST(MarkdownReporter, StatisticsReplaceTheFindingsTable) {
  ReportOptions options;
  options.statistics = true;
  CheckResult result = test::sample_result();
  result.findings.push_back(result.findings[0]);
  result.diagnostics.clear();
  EXPECT_EQ(render_report(result, OutputFormat::Markdown, options),
            "## kvlint: 4 findings (2 errors, 1 warning, 1 info); 2 suppressed\n"
            "\n"
            "12 files checked.\n"
            "\n"
            "| Count | Code | Name | Severity |\n"
            "|---:|---|---|---|\n"
            "| 2 | KV101 | `undeclared-cache` | error |\n"
            "| 1 | KV104 | `orphan-declaration` | warning |\n"
            "| 1 | KV403 | `hand-written-geometry` | info |\n");
}

TEST(MarkdownReporter, AtSignsDoNotMention) {
  CheckResult result;
  result.findings.push_back(test::make_finding("KV101", Severity::Error, {"a.py", 1, 1, 1, 2}, "A",
                                               "ask @octocat or @org/team", "x"));
  const std::string text = render_report(result, OutputFormat::Markdown, ReportOptions{});
  EXPECT_NE(text.find("| ask @&#8203;octocat or @&#8203;org/team |"), std::string::npos) << text;
  EXPECT_EQ(text.find("@o"), std::string::npos) << text;
}

}  // namespace
}  // namespace kvlint
