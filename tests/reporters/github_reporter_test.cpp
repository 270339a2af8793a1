#include <gtest/gtest.h>

#include "tests/reporters/reporter_test_support.hpp"

namespace kvlint {
namespace {

TEST(GithubReporter, EmptyResultPrintsNothing) {
  EXPECT_EQ(render_report(CheckResult{}, OutputFormat::Github, ReportOptions{}), "");
}

TEST(GithubReporter, OneCommandPerFindingBySeverityAndDiagnosticsAsErrors) {
  EXPECT_EQ(render_report(test::sample_result(), OutputFormat::Github, ReportOptions{}),
            "::error file=examples/models/codec.py,line=18,col=9,endLine=18,endColumn=40,"
            "title=KV101 (undeclared-cache)::[StreamingDecoder] DynamicCache built here is not declared"
            "%0Anote: examples/models/codec.py:33:5: cache kept per request id here"
            "%0Anote: examples/models/runner.py:7:1: owner built here\n"
            "::warning file=examples/models/codec.py,line=40,col=5,endLine=40,endColumn=30,"
            "title=KV104 (orphan-declaration)::[Talker] declaration covers no cache\n"
            "::notice file=src/geom.py,line=7,col=3,endLine=7,endColumn=20,"
            "title=KV403 (hand-written-geometry)::layers written as a literal\n"
            "::error file=broken.py,line=3,col=7,title=kvlint parse-error::unexpected indent\n");
}

TEST(GithubReporter, EscapesDataAndPropertiesExactly) {
  EXPECT_EQ(
      render_report(test::odd_result(), OutputFormat::Github, ReportOptions{}),
      "::error file=dir with space/na\xC3\xAFve%2C%25\"q\".py,line=2,col=3,endLine=2,endColumn=5,"
      "title=KV101 (undeclared-cache)::[Own] say \"hi\"%0Asecond line: 50%25 done, ok \xC3\xBC <b>|x|</b>"
      "%0Anote: dir with space/na\xC3\xAFve,%25\"q\".py:9:1: kept, here: 100%25\n"
      "::error file=bad%2Cfile%3A1.py,title=kvlint read-error::cannot read: 100%25 gone%0D%0Areally\n");
}

TEST(GithubReporter, UnknownCodeTitleIsTheCode) {
  CheckResult result;
  result.findings.push_back(
      test::make_finding("KV999", Severity::Warning, {"a.py", 4, 0, 0, 0}, "", "m", "x"));
  EXPECT_EQ(render_report(result, OutputFormat::Github, ReportOptions{}),
            "::warning file=a.py,line=4,title=KV999::m\n");
}

TEST(GithubReporter, ControlCharactersFromSourceAreShownEscaped) {
  CheckResult result;
  result.findings.push_back(test::make_finding("KV101", Severity::Error, {"m\x1b[2J.py", 2, 1, 2, 3}, "A\x07",
                                               "spec `kv\x1b[2J`\nnext", "x"));
  result.diagnostics.push_back({"d.py", 0, 0, "read-error", "bad \x1b[1m"});
  EXPECT_EQ(render_report(result, OutputFormat::Github, ReportOptions{}),
            "::error file=m\\x1b[2J.py,line=2,col=1,endLine=2,endColumn=3,"
            "title=KV101 (undeclared-cache)::[A\\x07] spec `kv\\x1b[2J`%0Anext\n"
            "::error file=d.py,title=kvlint read-error::bad \\x1b[1m\n");
}

}  // namespace
}  // namespace kvlint
