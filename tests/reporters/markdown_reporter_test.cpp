#include <fmt/format.h>
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

TEST(MarkdownReporter, FindingsGroupedByFileWithEvidenceAndDiagnostics) {
  EXPECT_EQ(render_report(test::sample_result(), OutputFormat::Markdown, ReportOptions{}),
            "## kvlint: 3 findings (1 error, 1 warning, 1 info); 2 suppressed, 1 input problem\n"
            "\n"
            "12 files checked.\n"
            "\n"
            "### `examples/models/codec.py`\n"
            "\n"
            "| Severity | Code | Line | Owner | Message |\n"
            "|---|---|---:|---|---|\n"
            "| error | KV101 `undeclared-cache` | 18:9 | `StreamingDecoder` | "
            "DynamicCache built here is not declared |\n"
            "| warning | KV104 `orphan-declaration` | 40:5 | `Talker` | declaration covers no cache |\n"
            "\n"
            "- **KV101** at line 18\n"
            "  - `examples/models/codec.py:33:5`: cache kept per request id here\n"
            "  - `examples/models/runner.py:7:1`: owner built here\n"
            "\n"
            "### `src/geom.py`\n"
            "\n"
            "| Severity | Code | Line | Owner | Message |\n"
            "|---|---|---:|---|---|\n"
            "| info | KV403 `hand-written-geometry` | 7:3 |  | layers written as a literal |\n"
            "\n"
            "### Input problems\n"
            "\n"
            "- `broken.py:3:7` `parse-error`: unexpected indent\n");
}

TEST(MarkdownReporter, EscapesCellsSoEachRowStaysOneRow) {
  const std::string text = render_report(test::odd_result(), OutputFormat::Markdown, ReportOptions{});
  EXPECT_NE(text.find("### `dir with space/na\xC3\xAFve,%\"q\".py`\n"), std::string::npos) << text;
  EXPECT_NE(text.find("| error | KV101 `undeclared-cache` | 2:3 | `Own` | "
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
  EXPECT_NE(text.find("### ``a`b|c.py``\n"), std::string::npos) << text;
  EXPECT_NE(text.find("| 1:2 | `A_B` | use \\*this\\* \\[x\\] |"), std::string::npos) << text;
}

// A file name's ESC (and other control characters) would reach the reader's terminal or forge
// text in a heading; they are shown escaped, as the text and GitHub reports show them.
TEST(MarkdownReporter, ControlCharactersInFileNamesAreEscapedInHeadings) {
  CheckResult result;
  result.findings.push_back(test::make_finding("KV101", Severity::Error, {"a\x1b[31m\x07.py", 1, 2, 1, 3},
                                               "A", "message \x1b[2J here", "x"));
  const std::string text = render_report(result, OutputFormat::Markdown, ReportOptions{});
  EXPECT_NE(text.find("### `a\\x1b[31m\\x07.py`\n"), std::string::npos) << text;
  EXPECT_NE(text.find("message \\\\x1b\\[2J here"), std::string::npos) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
}

// A message's code span whose text holds backticks (a spec named with one) is fenced with a
// longer backtick run, padded with a space where the text starts or ends with a backtick.
TEST(MarkdownReporter, CodeSpansHoldingBackticksKeepTheirFence) {
  EXPECT_EQ(code_span("talker`kv"), "``talker`kv``");
  EXPECT_EQ(code_span("`kv``"), "``` `kv`` ```");
  EXPECT_EQ(code_span(" kv "), "`  kv  `");
  EXPECT_EQ(code_span("kv"), "`kv`");
  CheckResult result;
  result.findings.push_back(test::make_finding("KV201", Severity::Error, {"a.py", 1, 1, 1, 2}, "A",
                                               "`A` declares spec " + code_span("`kv`") + " with `FIXED`",
                                               "x"));
  const std::string text = render_report(result, OutputFormat::Markdown, ReportOptions{});
  EXPECT_NE(text.find("| `A` declares spec `` `kv` `` with `FIXED` |"), std::string::npos) << text;
}

TEST(MarkdownReporter, CodeSpansInMessagesStayCode) {
  CheckResult result;
  result.findings.push_back(test::make_finding("KV101", Severity::Error, {"a.py", 1, 1, 1, 2}, "A",
                                               "`self._caches` keeps ``x`y`` per `a|b`, not *this*", "x"));
  const std::string text = render_report(result, OutputFormat::Markdown, ReportOptions{});
  EXPECT_NE(text.find("| `self._caches` keeps ``x`y`` per `a\\|b`, not \\*this\\* |"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("\\`"), std::string::npos) << "no escaped backticks: " << text;
}

TEST(MarkdownReporter, LongEvidenceIsFoldedInDetails) {
  CheckResult result = test::sample_result();
  for (uint32_t line = 50; line < 54; ++line)
    result.findings[0].related.push_back(
        test::related_at({"examples/models/codec.py", line, 1, line, 2}, "also here"));
  const std::string text = render_report(result, OutputFormat::Markdown, ReportOptions{});
  EXPECT_NE(text.find("- <details><summary>**KV101** at line 18: 6 lines of evidence</summary>\n\n"
                      "  - `examples/models/codec.py:33:5`: cache kept per request id here\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  </details>\n"), std::string::npos) << text;
}

TEST(MarkdownReporter, StaysUnderTheCommentLimitWithACountOfTheRest) {
  CheckResult result;
  for (uint32_t i = 0; i < 3000; ++i)
    result.findings.push_back(test::make_finding(
        "KV101", Severity::Error, {fmt::format("pkg/m{:04}.py", i / 3), i + 1, 1, i + 1, 2}, "Owner",
        "`DynamicCache` built here is not declared by `Owner`", fmt::format("{:08x}", i)));
  result.diagnostics.push_back({"broken.py", 3, 7, "parse-error", "unexpected indent"});
  const std::string text = render_report(result, OutputFormat::Markdown, ReportOptions{});
  EXPECT_LE(text.size(), 65536u);
  EXPECT_GT(text.size(), 60000u) << "the budget is used, not wasted";
  const std::size_t rows = [&text] {
    std::size_t n = 0;
    for (auto at = text.find("| error |"); at != std::string::npos; at = text.find("| error |", at + 1)) ++n;
    return n;
  }();
  EXPECT_NE(text.find(fmt::format("**{} more findings** not shown", 3000 - rows)), std::string::npos)
      << text.substr(text.size() - 600);
  EXPECT_NE(text.find("`broken.py:3:7`"), std::string::npos) << "input problems still listed";
}

TEST(MarkdownReporter, ConfirmVerdictsAndTheBytesTable) {
  CheckResult result = test::sample_result();
  ReviewData review;
  review.verdicts[review_key(result.findings[0])] = {"confirmed", "observed rows=4 at concurrency 4", "codec",
                                                     "streaming", 4};
  for (int64_t c : {1, 4})
    review.memory.push_back(
        {"codec", "streaming", "StreamingDecoder", c, 4655104, 4655104 * c, 4655104, 4655104, c, 4655104, 0});
  review.models.push_back({"codec", "complete", "", "cpu"});
  review.max_num_seqs = 256;
  ReportOptions options;
  options.review = &review;
  const std::string text = render_report(result, OutputFormat::Markdown, options);
  EXPECT_NE(text.find("Runtime (`kvlint confirm`): 1 confirmed, 2 not-run; 0 runtime-only findings.\n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          "- This model's local KV is **4.44 MiB** at max_num_seqs=256 (`codec`; declared; the observed "
          "caches scale to 1.11 GiB).\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("| `codec` | `streaming` | 4 | `StreamingDecoder` | 4.44 MiB | 4.44 MiB | 4.44 MiB | "
                      "17.76 MiB |\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| Severity | Code | Line | Owner | Message | Verdict |\n"), std::string::npos);
  EXPECT_NE(text.find("DynamicCache built here is not declared | confirmed |"), std::string::npos) << text;
  EXPECT_NE(text.find("  - runtime (confirmed): observed rows=4 at concurrency 4\n"), std::string::npos)
      << text;
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

// A confirm JSON is input like any other: a verdict outside the known set is shown escaped (as
// code), never as HTML, a mention, a heading or a fence, in the summary line, the table and the
// evidence.
TEST(MarkdownReporter, VerdictsOutsideTheKnownSetAreEscaped) {
  CheckResult result = test::sample_result();
  ReviewData review;
  const std::vector<std::string> hostile = {"<img src=x onerror=alert(1)>", "@everyone", "\n# Approved\n",
                                            "```"};
  for (std::size_t i = 0; i < 3; ++i)
    review.verdicts[review_key(result.findings[i])] = {hostile[i] + (i == 0 ? hostile[3] : ""), "evidence",
                                                       "codec", "streaming", 1};
  ReportOptions options;
  options.review = &review;
  const std::string text = render_report(result, OutputFormat::Markdown, options);
  EXPECT_EQ(text.find("<img"), std::string::npos) << text;
  EXPECT_EQ(text.find("@everyone"), std::string::npos) << text;
  EXPECT_EQ(text.find("\n# Approved"), std::string::npos) << text;
  EXPECT_EQ(text.find("```"), std::string::npos) << text;
  const std::string summary = text.substr(text.find("Runtime (`kvlint confirm`)"));
  EXPECT_NE(summary.find("unknown verdict"), std::string::npos) << summary;
  // Known verdicts read as before.
  review.verdicts[review_key(result.findings[0])].verdict = "refuted";
  review.verdicts[review_key(result.findings[1])].verdict = "not-exercised";
  review.verdicts[review_key(result.findings[2])].verdict = "inconclusive";
  EXPECT_NE(render_report(result, OutputFormat::Markdown, options)
                .find("Runtime (`kvlint confirm`): 1 inconclusive, 1 not-exercised, 1 refuted; "),
            std::string::npos);
}

}  // namespace
}  // namespace kvlint
