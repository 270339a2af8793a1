#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "rules/registry.hpp"
#include "tests/reporters/reporter_test_support.hpp"

namespace kvlint {
namespace {

using Json = nlohmann::json;
using test::make_finding;
using test::TempDir;

ReportOptions sarif_options() {
  ReportOptions options;
  options.tool_version = "0.1.0";
  options.information_uri = "https://example.org/kvlint";
  return options;
}

Json render_sarif(const CheckResult& result) {
  return Json::parse(render_report(result, OutputFormat::Sarif, sarif_options()));
}

int validate_sarif(const TempDir& dir, const std::string& text, bool show_errors = true) {
  const auto file = dir.write("out.sarif", text);
  return test::validate_json_file(file, KVLINT_SARIF_SCHEMA, show_errors);
}

TEST(SarifReporter, ValidatesAgainstTheOfficialSchema) {
  TempDir dir;
  for (const CheckResult& result : {CheckResult{}, test::sample_result(), test::odd_result()}) {
    EXPECT_EQ(validate_sarif(dir, render_report(result, OutputFormat::Sarif, sarif_options())), 0);
  }
}

TEST(SarifReporter, SchemaCheckCanFail) {
  TempDir dir;
  Json doc = render_sarif(test::sample_result());
  doc["runs"][0]["results"][0]["level"] = "fatal";
  EXPECT_NE(validate_sarif(dir, doc.dump(), /*show_errors=*/false), 0);
}

TEST(SarifReporter, HeaderDriverAndEveryRule) {
  const Json doc = render_sarif(CheckResult{});
  EXPECT_EQ(doc["$schema"], "https://json.schemastore.org/sarif-2.1.0.json");
  EXPECT_EQ(doc["version"], "2.1.0");
  ASSERT_EQ(doc["runs"].size(), 1U);
  const Json& run = doc["runs"][0];
  const Json& driver = run["tool"]["driver"];
  EXPECT_EQ(driver["name"], "kvlint");
  EXPECT_EQ(driver["version"], "0.1.0");
  EXPECT_EQ(driver["informationUri"], "https://example.org/kvlint");
  EXPECT_EQ(run["columnKind"], "unicodeCodePoints");
  EXPECT_EQ(run["results"], Json::array());
  EXPECT_EQ(run["invocations"], Json::parse(R"([{"executionSuccessful": true}])"));
  EXPECT_FALSE(run.contains("originalUriBaseIds"));

  const std::vector<RuleInfo> infos = all_rule_infos();
  ASSERT_EQ(driver["rules"].size(), infos.size());
  for (std::size_t i = 0; i < infos.size(); ++i) {
    const Json& rule = driver["rules"][i];
    EXPECT_EQ(rule["id"], std::string(infos[i].code));
    EXPECT_EQ(rule["name"], std::string(infos[i].name));
    EXPECT_EQ(rule["shortDescription"]["text"], std::string(infos[i].summary));
    EXPECT_EQ(rule["help"]["markdown"], std::string(infos[i].doc));
    EXPECT_EQ(rule["help"]["text"], std::string(infos[i].doc));
    EXPECT_FALSE(rule["fullDescription"]["text"].get<std::string>().empty());
  }
  const RuleInfo* kv403 = find_rule_info("KV403");
  ASSERT_NE(kv403, nullptr);
  for (const Json& rule : driver["rules"]) {
    if (rule["id"] == "KV403") {
      EXPECT_EQ(rule["defaultConfiguration"]["level"], "note");
    }
    if (rule["id"] == "KV101") {
      EXPECT_EQ(rule["defaultConfiguration"]["level"], "error");
    }
    if (rule["id"] == "KV104") {
      EXPECT_EQ(rule["defaultConfiguration"]["level"], "warning");
    }
  }
}

TEST(SarifReporter, ResultsPointAtTheirRulesAndCarryFingerprints) {
  const Json doc = render_sarif(test::sample_result());
  const Json& run = doc["runs"][0];
  const Json& rules = run["tool"]["driver"]["rules"];
  const Json& results = run["results"];
  ASSERT_EQ(results.size(), 3U);
  const char* const expected_levels[] = {"error", "warning", "note"};
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Json& result = results[i];
    const auto index = result["ruleIndex"].get<std::size_t>();
    ASSERT_LT(index, rules.size());
    EXPECT_EQ(rules[index]["id"], result["ruleId"]);
    EXPECT_EQ(result["level"], expected_levels[i]);
    ASSERT_TRUE(result.contains("partialFingerprints"));
  }
  const Json& first = results[0];
  EXPECT_EQ(first["ruleId"], "KV101");
  EXPECT_EQ(first["partialFingerprints"], (Json{{"kvlintFingerprint/v1", "0123abcd"}}));
  EXPECT_EQ(first["message"]["text"], "DynamicCache built here is not declared");
  EXPECT_EQ(first["properties"], (Json{{"owner", "StreamingDecoder"}, {"severity", "error"}}));
  EXPECT_EQ(first["locations"][0]["physicalLocation"], Json::parse(R"({
      "artifactLocation": {"uri": "examples/models/codec.py", "uriBaseId": "%SRCROOT%"},
      "region": {"startLine": 18, "startColumn": 9, "endLine": 18, "endColumn": 40}})"));
  ASSERT_EQ(first["relatedLocations"].size(), 2U);
  EXPECT_EQ(first["relatedLocations"][1], Json::parse(R"({"id": 1,
      "physicalLocation": {"artifactLocation": {"uri": "examples/models/runner.py", "uriBaseId": "%SRCROOT%"},
                           "region": {"startLine": 7, "startColumn": 1, "endLine": 7, "endColumn": 9}},
      "message": {"text": "owner built here"}})"));
  EXPECT_FALSE(results[1].contains("relatedLocations"));

  const std::string root = run["originalUriBaseIds"]["%SRCROOT%"]["uri"];
  EXPECT_TRUE(root.starts_with("file:///")) << root;
  EXPECT_TRUE(root.ends_with("/")) << root;

  const Json& notifications = run["invocations"][0]["toolExecutionNotifications"];
  ASSERT_EQ(notifications.size(), 1U);
  EXPECT_EQ(notifications[0]["level"], "error");
  EXPECT_EQ(notifications[0]["message"]["text"], "unexpected indent");
  EXPECT_EQ(notifications[0]["descriptor"]["id"], "parse-error");
  EXPECT_EQ(notifications[0]["locations"][0]["physicalLocation"]["region"],
            (Json{{"startLine", 3}, {"startColumn", 7}}));
}

TEST(SarifReporter, PercentEncodesRelativeAndAbsolutePaths) {
  CheckResult result = test::odd_result();
  result.findings.push_back(make_finding(
      "KV101", Severity::Error, {"/abs/d\xC3\xA9j\xC3\xA0 vu/x.py", 0, 0, 0, 0}, "", "whole file", ""));
  const Json doc = render_sarif(result);
  const Json& results = doc["runs"][0]["results"];
  EXPECT_EQ(results[0]["locations"][0]["physicalLocation"]["artifactLocation"],
            (Json{{"uri", "dir%20with%20space/na%C3%AFve%2C%25%22q%22.py"}, {"uriBaseId", "%SRCROOT%"}}));
  EXPECT_EQ(results[0]["message"]["text"], test::kOddMessage);
  // Absolute path: a file URI, no base id, no region for line 0, no empty fingerprint.
  EXPECT_EQ(results[1]["locations"][0]["physicalLocation"],
            (Json{{"artifactLocation", {{"uri", "file:///abs/d%C3%A9j%C3%A0%20vu/x.py"}}}}));
  EXPECT_FALSE(results[1].contains("partialFingerprints"));
  const Json& notification = doc["runs"][0]["invocations"][0]["toolExecutionNotifications"][0];
  EXPECT_EQ(notification["locations"][0]["physicalLocation"],
            (Json{{"artifactLocation", {{"uri", "bad%2Cfile%3A1.py"}, {"uriBaseId", "%SRCROOT%"}}}}));
}

TEST(SarifReporter, ColumnsBecomeCodePointsWhenTheFileIsReadable) {
  TempDir dir;
  const std::string path = dir.write("wide.py", "x = 1\n    \xC3\xA9 = DynamicCache()\n").string();
  CheckResult result;
  result.findings.push_back(make_finding("KV101", Severity::Error, {path, 2, 10, 2, 24}, "", "m", "x"));
  const Json region =
      render_sarif(result)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"];
  EXPECT_EQ(region, (Json{{"startLine", 2}, {"startColumn", 9}, {"endLine", 2}, {"endColumn", 23}}));
}

TEST(SarifReporter, UnknownCodeStillGetsARuleToIndex) {
  CheckResult result;
  result.findings.push_back(make_finding("KV999", Severity::Warning, {"a.py", 1, 1, 1, 2}, "", "m", "x"));
  const Json doc = render_sarif(result);
  const Json& run = doc["runs"][0];
  const auto index = run["results"][0]["ruleIndex"].get<std::size_t>();
  EXPECT_EQ(index, all_rule_infos().size());
  EXPECT_EQ(run["tool"]["driver"]["rules"][index]["id"], "KV999");
  TempDir dir;
  EXPECT_EQ(validate_sarif(dir, doc.dump()), 0);
}

}  // namespace
}  // namespace kvlint
