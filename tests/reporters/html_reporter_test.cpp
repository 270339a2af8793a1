// The HTML reviewer report as a string: what it escapes, what it never loads,
// and the memory picture it draws from confirm results. The rendered page
// (Chromium) and the CLI are tested in tests/report/test_rendered_report.py.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <limits>

#include "tests/reporters/reporter_test_support.hpp"
#include "tools/kvlint/reporters/report_support.hpp"

namespace kvlint {
namespace {

// The codec decoder of the reference table: 4.44 MiB per row, one row per
// sequence, measured at concurrency 1 and 4.
ReviewData codec_review() {
  ReviewData review;
  const int64_t per_row = 4655104;
  for (int64_t c : {1, 4})
    review.memory.push_back({"codec", "streaming", "StreamingDecoder", c, per_row * c, per_row * c, per_row,
                             per_row, c, 0, per_row});
  review.verdicts[review_key(test::sample_result().findings[0])] = {
      "confirmed", "declared FIXED rows_fixed=1, observed rows=4 at concurrency 4 (4.44 MiB/row)", "codec",
      "streaming", 4};
  review.models.push_back({"codec", "complete", "", "cpu"});
  return review;
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(HtmlReporter, EveryFindingGroupedByOwnerWithoutAnythingToFetch) {
  const std::string page = render_report(test::sample_result(), OutputFormat::Html, ReportOptions{});
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count(page, "<article class=\"finding\""), 3u);
  for (const char* fingerprint : {"0123abcd", "feed01", "beef02"})
    EXPECT_NE(page.find(std::string("data-fingerprint=\"") + fingerprint + "\""), std::string::npos)
        << fingerprint;
  // Owners sorted, the finding without an owner last.
  const auto streaming = page.find("<h2><code>StreamingDecoder</code></h2>");
  const auto talker = page.find("<h2><code>Talker</code></h2>");
  const auto none = page.find("<h2>(no owner class)</h2>");
  ASSERT_NE(none, std::string::npos);
  EXPECT_LT(streaming, talker);
  EXPECT_LT(talker, none);
  EXPECT_NE(page.find("<code>examples/models/codec.py:33:5</code> cache kept per request id here"),
            std::string::npos);
  // Self-contained: no script, no external reference of any kind; a CSP forbids loads.
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("url("), std::string::npos);
  EXPECT_EQ(page.find("@import"), std::string::npos);
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(page.find("@media print"), std::string::npos);
  EXPECT_NE(page.find("@media (max-width:640px)"), std::string::npos);
  EXPECT_NE(page.find("name=\"viewport\""), std::string::npos);
}

TEST(HtmlReporter, HostileTextIsEscapedEverywhere) {
  CheckResult result;
  const std::string hostile = "<script>alert(\"x\")</script>'\x1b[31m&amp;";
  Finding finding = test::make_finding("KV101", Severity::Error, {"dir/" + hostile + ".py", 1, 1, 1, 2},
                                       hostile, "built `" + hostile + "` here " + hostile, "\"><script>");
  finding.related.push_back(test::related_at({hostile, 2, 1, 2, 2}, hostile));
  result.findings.push_back(finding);
  result.diagnostics.push_back({hostile, 1, 1, hostile, hostile});
  ReviewData review;
  review.verdicts[review_key(finding)] = {"confirmed", hostile, hostile, hostile, 1};
  review.models.push_back({hostile, hostile, hostile, hostile});
  review.memory.push_back({hostile, hostile, hostile, 1, 1, 1, 1, 1, 1, 0, 1});
  review.max_num_seqs = 8;
  Finding runtime = finding;
  runtime.code = "RT001";
  review.runtime_findings.push_back({runtime, hostile, {}});
  ReportOptions options;
  options.review = &review;
  const std::string page = render_report(result, OutputFormat::Html, options);
  EXPECT_EQ(page.find("<script"), std::string::npos) << page;
  EXPECT_EQ(page.find('\x1b'), std::string::npos);
  EXPECT_NE(page.find("data-fingerprint=\"&quot;&gt;&lt;script&gt;\""), std::string::npos)
      << "attribute values are escaped too";
  EXPECT_NE(page.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39;\\x1b[31m&amp;amp;"),
            std::string::npos);
  EXPECT_NE(page.find("<code>&lt;script&gt;alert"), std::string::npos) << "the code span stays code";
}

TEST(HtmlReporter, MemoryChartsAndTheProjectionOfTheReferenceExample) {
  ReviewData review = codec_review();
  review.max_num_seqs = 256;
  ReportOptions options;
  options.review = &review;
  const std::string page = render_report(test::sample_result(), OutputFormat::Html, options);
  // The reference's own example: 4.44 MiB per request at max_num_seqs=256 is about 1.1 GiB.
  EXPECT_NE(page.find("This model's local KV is <strong>1.11 GiB</strong> at max_num_seqs=256"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("id=\"chart-totals\""), std::string::npos);
  EXPECT_NE(page.find("id=\"chart-per-row\""), std::string::npos);
  // Concurrency 1 and 4, the projection, and bytes per row: each a declared and an observed bar.
  EXPECT_NE(page.find("id=\"chart-projection\""), std::string::npos);
  EXPECT_EQ(count(page, "<rect class=\"bar declared\""), 2u + 1u + 1u);
  EXPECT_NE(page.find("data-bytes=\"18620416\""), std::string::npos);  // 4 x 4.44 MiB
  EXPECT_NE(page.find("<span class=\"badge verdict v-confirmed\">confirmed</span>"), std::string::npos);
  EXPECT_NE(page.find("<span class=\"badge verdict v-not-run\">not-run</span>"), std::string::npos);
  EXPECT_NE(page.find("observed rows=4 at concurrency 4"), std::string::npos);
}

TEST(HtmlReporter, ChangeInDeclaredBytesAgainstTheBase) {
  ReviewData review = codec_review();
  std::vector<MemoryRow> base = review.memory;
  for (MemoryRow& row : base) {
    row.declared_bytes = row.declared_bytes / row.concurrency;  // the base declared one fixed row
    row.declared_fixed_bytes = row.declared_bytes;
    row.declared_per_sequence_bytes = 0;
  }
  review.base_memory = base;
  review.max_num_seqs = 256;
  ReportOptions options;
  options.review = &review;
  const std::string page = render_report(CheckResult{}, OutputFormat::Html, options);
  ASSERT_NE(page.find("id=\"declared-change-table\""), std::string::npos);
  EXPECT_NE(page.find("<td class=\"num\">+13.32 MiB</td>"), std::string::npos)
      << page;  // 4 rows instead of 1
  EXPECT_NE(page.find("<td class=\"num\">+1.11 GiB</td>"), std::string::npos)
      << page;  // 256 rows instead of 1
}

TEST(ReviewProjection, FixedRowsStayObservedRowsThatGrowScale) {
  std::vector<MemoryRow> memory;
  // A per-request cache (rows grow with concurrency) and a fixed graph pool.
  for (int64_t c : {1, 4}) {
    memory.push_back({"m", "p", "PerRequest", c, 100 * c, 200 * c, 100, 100, 2 * c, 0, 100});
    memory.push_back({"m", "p", "Pool", c, 1000, 1000, 1000, 1000, 1, 1000, 0});
  }
  const auto projected = project(memory, 256);
  ASSERT_EQ(projected.size(), 1u);
  EXPECT_EQ(projected[0].declared_bytes, 1000 + 100 * 256);
  EXPECT_EQ(projected[0].observed_bytes, 1000 + 200 * 256);
  EXPECT_EQ(project(memory, int64_t{1} << 62)[0].declared_bytes, std::numeric_limits<int64_t>::max());
}

// Each field is at most 2^53 bytes (confirm's protocol and `kvlint report` check it) and
// --max-num-seqs at most 2^24, so one model's projection can saturate at int64's maximum: the
// total of several stays there, it does not wrap to "-4 B".
TEST(HtmlReporter, AllModelsTogetherSaturatesInsteadOfWrapping) {
  constexpr int64_t kMaxField = int64_t{1} << 53;
  ReviewData review;
  for (const char* model : {"a", "b", "c"})
    review.memory.push_back(
        {model, "p", "Cache", 1, kMaxField, kMaxField, kMaxField, kMaxField, 1, kMaxField, kMaxField});
  review.max_num_seqs = int64_t{1} << 24;
  ReportOptions options;
  options.review = &review;
  const std::string page = render_report(CheckResult{}, OutputFormat::Html, options);
  const std::string most = format_bytes(std::numeric_limits<int64_t>::max());
  EXPECT_NE(page.find(fmt::format("All models together: <strong>{}</strong> declared, {} observed", most,
                                  format_bytes(3 * kMaxField))),
            std::string::npos)
      << page;
  EXPECT_EQ(projection_total(project(review.memory, *review.max_num_seqs)).declared_bytes,
            std::numeric_limits<int64_t>::max());
}

TEST(MessageParts, CodeSpansFollowCommonMark) {
  auto parts = reporting::split_code_spans("a `b` c ``d`e`` `unclosed");
  ASSERT_EQ(parts.size(), 5u);
  EXPECT_EQ(parts[1].text, "b");
  EXPECT_TRUE(parts[1].code);
  EXPECT_EQ(parts[3].text, "d`e");
  EXPECT_EQ(parts[4].text, " `unclosed");
  EXPECT_FALSE(parts[4].code);
}

TEST(HtmlReporter, ExcerptsComeOnlyFromRegularFiles) {
  // A findings file can name anything; a device would never end, a FIFO never open.
  test::TempDir dir;
  const std::string fifo = (dir.path() / "fifo.py").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  CheckResult result;
  for (const std::string& path : {std::string("/dev/zero"), fifo, dir.path().string()})
    result.findings.push_back(
        test::make_finding("KV101", Severity::Error, {path, 1, 1, 1, 2}, "A", "m", path));
  const std::string page = render_report(result, OutputFormat::Html, ReportOptions{});
  EXPECT_EQ(count(page, "(source not available)"), 3u);
}

// 3,000 findings on one 86 KB line: each excerpt is a window around its column.
TEST(HtmlReporter, ExcerptsOfALongLineAreWindowsSoTheSizeIsLinear) {
  test::TempDir dir;
  const CheckResult result = test::findings_on_one_long_line(dir);
  const std::string page = render_report(result, OutputFormat::Html, ReportOptions{});
  EXPECT_LT(page.size(), 3000u * 2000u) << page.size();
  EXPECT_EQ(count(page, "<article class=\"finding\""), 3000u);
  EXPECT_NE(page.find("\xE2\x80\xA6"), std::string::npos) << "the cut is marked";
}

// The HTML report is capped as the Markdown one is: past the limit it stops adding findings and
// says how many it left out (the JSON report has them all).
TEST(HtmlReporter, StaysUnderItsSizeLimitWithACountOfTheRest) {
  CheckResult result;
  const std::string message(2000, 'm');
  for (uint32_t i = 0; i < 20000; ++i)
    result.findings.push_back(test::make_finding("KV101", Severity::Error, {"a.py", i + 1, 1, i + 1, 2}, "A",
                                                 message, std::to_string(i)));
  result.diagnostics.push_back({"broken.py", 3, 7, "parse-error", "unexpected indent"});
  const std::string page = render_report(result, OutputFormat::Html, ReportOptions{});
  EXPECT_LE(page.size(), 32u << 20);
  const std::size_t shown = count(page, "<article class=\"finding\"");
  EXPECT_LT(shown, 20000u);
  EXPECT_GT(shown, 1000u);
  EXPECT_NE(page.find(fmt::format("{} more findings</strong> not shown", 20000 - shown)), std::string::npos);
  EXPECT_NE(page.find("broken.py:3:7"), std::string::npos) << "input problems still listed";
  EXPECT_TRUE(page.ends_with("</html>\n"));
}

}  // namespace
}  // namespace kvlint
