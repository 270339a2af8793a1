#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/reporters/reporter_test_support.hpp"

namespace kvlint {
namespace {

using Json = nlohmann::json;
using test::TempDir;

const std::filesystem::path kFindingsSchema =
    std::filesystem::path(KVLINT_SOURCE_DIR) / "docs/findings.schema.json";

ReportOptions options_with_version() {
  ReportOptions options;
  options.tool_version = "0.1.0";
  return options;
}

Json render_json(const CheckResult& result) {
  return Json::parse(render_report(result, OutputFormat::Json, options_with_version()));
}

TEST(JsonReporter, EmptyResultHasHeaderAndZeroSummary) {
  const Json doc = render_json(CheckResult{});
  EXPECT_EQ(doc["schema"], "kvlint-findings");
  EXPECT_EQ(doc["version"], 1);
  EXPECT_EQ(doc["tool"], (Json{{"name", "kvlint"}, {"version", "0.1.0"}}));
  EXPECT_EQ(doc["findings"], Json::array());
  EXPECT_EQ(doc["diagnostics"], Json::array());
  EXPECT_EQ(doc["summary"], Json::parse(R"({"findings": 0, "suppressed": 0, "files": 0, "by_code": {},
      "by_severity": {"error": 0, "warning": 0, "info": 0}})"));
}

TEST(JsonReporter, FindingCarriesEveryContractField) {
  const Json doc = render_json(test::sample_result());
  ASSERT_EQ(doc["findings"].size(), 3U);
  EXPECT_EQ(doc["findings"][0], Json::parse(R"({
      "code": "KV101", "name": "undeclared-cache", "severity": "error",
      "path": "examples/models/codec.py", "line": 18, "column": 9, "end_line": 18, "end_column": 40,
      "owner": "StreamingDecoder", "message": "DynamicCache built here is not declared",
      "related": [{"path": "examples/models/codec.py", "line": 33, "column": 5,
                   "message": "cache kept per request id here"},
                  {"path": "examples/models/runner.py", "line": 7, "column": 1, "message": "owner built here"}],
      "fingerprint": "0123abcd"})"));
  EXPECT_EQ(doc["findings"][1]["severity"], "warning");
  EXPECT_EQ(doc["findings"][1]["name"], "orphan-declaration");
  EXPECT_EQ(doc["findings"][2]["severity"], "info");
  EXPECT_EQ(doc["findings"][2]["owner"], "");
  EXPECT_EQ(doc["findings"][2]["related"], Json::array());
  EXPECT_EQ(doc["diagnostics"], Json::parse(R"([{"path": "broken.py", "line": 3, "column": 7,
      "kind": "parse-error", "severity": "error", "message": "unexpected indent"}])"));
  EXPECT_EQ(doc["summary"], Json::parse(R"({"findings": 3, "suppressed": 2, "files": 12,
      "by_code": {"KV101": 1, "KV104": 1, "KV403": 1},
      "by_severity": {"error": 1, "warning": 1, "info": 1}})"));
}

TEST(JsonReporter, KeysKeepContractOrder) {
  const std::string text = render_report(test::sample_result(), OutputFormat::Json, options_with_version());
  const std::size_t schema = text.find("\"schema\"");
  const std::size_t version = text.find("\"version\"");
  const std::size_t findings = text.find("\"findings\"");
  const std::size_t summary = text.find("\"summary\"");
  EXPECT_LT(schema, version);
  EXPECT_LT(version, findings);
  EXPECT_LT(findings, summary);
  EXPECT_LT(text.find("\"code\"", findings), text.find("\"name\"", findings));
  EXPECT_LT(text.find("\"message\"", findings), text.find("\"fingerprint\"", findings));
  EXPECT_TRUE(text.ends_with("}\n"));
}

TEST(JsonReporter, SpecialCharactersRoundTrip) {
  const Json doc = render_json(test::odd_result());
  EXPECT_EQ(doc["findings"][0]["path"], test::kOddPath);
  EXPECT_EQ(doc["findings"][0]["message"], test::kOddMessage);
  EXPECT_EQ(doc["findings"][0]["related"][0]["message"], "kept, here: 100%");
  EXPECT_EQ(doc["diagnostics"][0]["message"], "cannot read: 100% gone\r\nreally");
}

TEST(JsonReporter, InvalidUtf8IsReplacedNotFatal) {
  CheckResult result;
  result.findings.push_back(test::make_finding("KV101", Severity::Error, {"bad\xFFpath.py", 1, 1, 1, 2}, "A",
                                               "bytes \xC3 here", "x"));
  const Json doc = render_json(result);
  EXPECT_EQ(doc["findings"][0]["path"], "bad\xEF\xBF\xBDpath.py");
  EXPECT_EQ(doc["findings"][0]["message"], "bytes \xEF\xBF\xBD here");
}

TEST(JsonReporter, UnknownCodeGetsEmptyName) {
  CheckResult result;
  result.findings.push_back(
      test::make_finding("KV999", Severity::Error, {"a.py", 1, 1, 1, 2}, "A", "m", "x"));
  EXPECT_EQ(render_json(result)["findings"][0]["name"], "");
}

TEST(JsonReporter, OutputValidatesAgainstTheDocumentedSchema) {
  TempDir dir;
  for (const CheckResult& result : {CheckResult{}, test::sample_result(), test::odd_result()}) {
    const auto file =
        dir.write("out.json", render_report(result, OutputFormat::Json, options_with_version()));
    EXPECT_EQ(test::validate_json_file(file, kFindingsSchema), 0);
  }
}

TEST(JsonReporter, SchemaRejectsDocumentsThatBreakTheContract) {
  TempDir dir;
  Json doc = render_json(test::sample_result());
  Json bad_severity = doc;
  bad_severity["findings"][0]["severity"] = "fatal";
  Json missing_fingerprint = doc;
  missing_fingerprint["findings"][0].erase("fingerprint");
  Json wrong_version = doc;
  wrong_version["version"] = 2;
  for (const Json& bad : {bad_severity, missing_fingerprint, wrong_version}) {
    const auto file = dir.write("bad.json", bad.dump());
    EXPECT_NE(test::validate_json_file(file, kFindingsSchema, /*show_errors=*/false), 0) << bad.dump();
  }
}

TEST(JsonReporter, NonUtf8PathsKeepTheirBytesInPathBytes) {
  CheckResult result;
  Finding finding = test::make_finding("KV101", Severity::Error, {"caf\xe9.py", 1, 1, 1, 2}, "A", "m", "x");
  finding.related.push_back(test::related_at({"ok.py", 2, 1, 2, 2}, "fine"));
  finding.related.push_back(test::related_at({"b\xff.py", 3, 1, 3, 2}, "bytes"));
  result.findings.push_back(std::move(finding));
  result.diagnostics.push_back({"d\xfe.py", 0, 0, "read-error", "m"});
  const Json doc = render_json(result);
  EXPECT_EQ(doc["findings"][0]["path"], "caf\xEF\xBF\xBD.py");
  EXPECT_EQ(doc["findings"][0]["path_bytes"], "636166e92e7079");
  EXPECT_FALSE(doc["findings"][0]["related"][0].contains("path_bytes"));
  EXPECT_EQ(doc["findings"][0]["related"][1]["path_bytes"], "62ff2e7079");
  EXPECT_EQ(doc["diagnostics"][0]["path_bytes"], "64fe2e7079");
  // Right after "path", and absent for UTF-8 paths.
  const std::string text = render_report(result, OutputFormat::Json, options_with_version());
  EXPECT_NE(
      text.find(
          "\"path\": \"caf\xEF\xBF\xBD.py\",\n      \"path_bytes\": \"636166e92e7079\",\n      \"line\""),
      std::string::npos)
      << text;
  EXPECT_FALSE(render_json(test::sample_result())["findings"][0].contains("path_bytes"));
  TempDir dir;
  EXPECT_EQ(test::validate_json_file(dir.write("out.json", text), kFindingsSchema), 0);
}

}  // namespace
}  // namespace kvlint
