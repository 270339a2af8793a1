// SARIF 2.1.0, for code-scanning services (GitHub code scanning, Azure DevOps,
// IDE viewers). One run; the driver lists every rule kvlint knows, so
// ruleIndex is stable across runs; results carry the kvlint fingerprint.
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <system_error>

#include "rules/registry.hpp"
#include "tools/kvlint/reporters/report_support.hpp"
#include "tools/kvlint/reporters/sarif_support.hpp"

namespace kvlint::reporting {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kSourceRootId = "%SRCROOT%";

bool is_absolute_path(std::string_view path) {
  return !path.empty() && path.front() == '/';
}

// Absolute paths become file:// URIs; relative ones stay relative to %SRCROOT%.
Json artifact_location(std::string_view path) {
  if (is_absolute_path(path)) return {{"uri", "file://" + sarif::percent_encode_path(path)}};
  return {{"uri", sarif::percent_encode_path(path)}, {"uriBaseId", kSourceRootId}};
}

// Our columns are 1-based UTF-8 byte columns; the run declares
// unicodeCodePoints, so each is converted by reading its line. When the file
// cannot be read the byte column is kept (identical for ASCII lines).
std::uint32_t code_point_column(SourceLines& sources, const std::string& path, std::uint32_t line,
                                std::uint32_t byte_column) {
  if (byte_column == 0) return 0;
  if (auto text = sources.line(path, line)) return byte_to_code_point_column(*text, byte_column);
  return byte_column;
}

Json physical_location(SourceLines& sources, const std::string& path, std::uint32_t line,
                       std::uint32_t column, std::uint32_t end_line, std::uint32_t end_column) {
  Json physical = {{"artifactLocation", artifact_location(path)}};
  if (line == 0) return physical;  // the whole file
  Json region = {{"startLine", line}};
  if (column != 0) region["startColumn"] = code_point_column(sources, path, line, column);
  if (end_line >= line) {
    region["endLine"] = end_line;
    if (column != 0 && end_column != 0)
      region["endColumn"] = code_point_column(sources, path, end_line, end_column);
  }
  physical["region"] = std::move(region);
  return physical;
}

Json physical_location(SourceLines& sources, const facts::Location& loc) {
  return physical_location(sources, loc.file, loc.line, loc.column, loc.end_line, loc.end_column);
}

// The "## What it does" section of a rule doc, for fullDescription.
std::string what_it_does(std::string_view doc, std::string_view fallback) {
  constexpr std::string_view kHeading = "## What it does\n";
  const std::size_t start = doc.find(kHeading);
  if (start == std::string_view::npos) return std::string(fallback);
  std::string_view body = doc.substr(start + kHeading.size());
  body = body.substr(0, body.find("\n## "));
  while (!body.empty() && (body.back() == '\n' || body.back() == ' ')) body.remove_suffix(1);
  return body.empty() ? std::string(fallback) : std::string(body);
}

std::string_view rule_category(std::string_view code) {
  if (code.size() < 3) return "other";
  switch (code[2]) {
    case '1':
      return "presence";
    case '2':
      return "rows";
    case '3':
      return "inertness";
    case '4':
      return "capacity";
    case '5':
      return "protocol";
    case '9':
      return "suppression";
    default:
      return "other";
  }
}

Json rule_descriptor(const RuleInfo& info) {
  const std::string severity(to_string(info.severity));
  return {
      {"id", info.code},
      {"name", info.name},
      {"shortDescription", {{"text", info.summary}}},
      {"fullDescription", {{"text", what_it_does(info.doc, info.summary)}}},
      {"help", {{"text", info.doc}, {"markdown", info.doc}}},
      {"defaultConfiguration", {{"level", sarif::level(info.severity)}}},
      {"properties", {{"tags", Json::array({"kvlint", rule_category(info.code)})}, {"severity", severity}}}};
}

// Diagnostics about unusable inputs are warnings when the input was merely
// skipped on purpose (binary, too large); errors otherwise.
// Degraded mode is a note.
std::string_view notification_level(const Diagnostic& diagnostic) {
  if (is_note(diagnostic)) return "note";
  return (diagnostic.kind == "binary" || diagnostic.kind == "too-large") ? "warning" : "error";
}

}  // namespace

std::string render_sarif(const CheckResult& result, const ReportOptions& options) {
  SourceLines sources;

  // Every registered rule, then any code a finding carries that the registry
  // does not know (a newer rule set), so every ruleIndex resolves.
  Json rules = Json::array();
  std::map<std::string, std::size_t, std::less<>> rule_index;
  for (const RuleInfo& info : all_rule_infos()) {
    rule_index.emplace(std::string(info.code), rules.size());
    rules.push_back(rule_descriptor(info));
  }
  for (const Finding& finding : result.findings) {
    if (rule_index.contains(finding.code)) continue;
    rule_index.emplace(finding.code, rules.size());
    rules.push_back({{"id", finding.code},
                     {"shortDescription", {{"text", finding.code}}},
                     {"defaultConfiguration", {{"level", sarif::level(finding.severity)}}}});
  }

  bool uses_source_root = false;
  Json results = Json::array();
  for (const Finding& finding : result.findings) {
    uses_source_root = uses_source_root || !is_absolute_path(finding.loc.file);
    Json sarif_result = {
        {"ruleId", finding.code},
        {"ruleIndex", rule_index.at(finding.code)},
        {"level", sarif::level(finding.severity)},
        {"message", {{"text", finding.message}}},
        {"locations", Json::array({{{"physicalLocation", physical_location(sources, finding.loc)}}})}};
    if (!finding.related.empty()) {
      Json related = Json::array();
      for (std::size_t i = 0; i < finding.related.size(); ++i) {
        const RelatedLocation& item = finding.related[i];
        uses_source_root = uses_source_root || !is_absolute_path(item.loc.file);
        related.push_back({{"id", i},
                           {"physicalLocation", physical_location(sources, item.loc)},
                           {"message", {{"text", item.message}}}});
      }
      sarif_result["relatedLocations"] = std::move(related);
    }
    if (!finding.fingerprint.empty()) {
      sarif_result["partialFingerprints"] = {{"kvlintFingerprint/v1", finding.fingerprint}};
    }
    if (finding.fix) {
      // SARIF 3.55: replacements by byte offset in the finding's file.
      Json replacements = Json::array();
      for (const FixEdit& e : finding.fix->edits)
        replacements.push_back({{"deletedRegion", {{"byteOffset", e.begin}, {"byteLength", e.end - e.begin}}},
                                {"insertedContent", {{"text", e.replacement}}}});
      sarif_result["fixes"] = Json::array(
          {{{"description", {{"text", finding.fix->description}}},
            {"artifactChanges", Json::array({{{"artifactLocation", artifact_location(finding.loc.file)},
                                              {"replacements", std::move(replacements)}}})}}});
    }
    sarif_result["properties"] = {{"owner", finding.owner_class}, {"severity", to_string(finding.severity)}};
    results.push_back(std::move(sarif_result));
  }

  Json notifications = Json::array();
  for (const Diagnostic& diagnostic : result.diagnostics) {
    Json notification = {{"level", notification_level(diagnostic)},
                         {"message", {{"text", diagnostic.message}}},
                         {"descriptor", {{"id", diagnostic.kind}}}};
    if (!diagnostic.path.empty()) {
      uses_source_root = uses_source_root || !is_absolute_path(diagnostic.path);
      notification["locations"] =
          Json::array({{{"physicalLocation", physical_location(sources, diagnostic.path, diagnostic.line,
                                                               diagnostic.column, 0, 0)}}});
    }
    notifications.push_back(std::move(notification));
  }

  Json driver = {{"name", "kvlint"}};
  if (!options.tool_version.empty()) driver["version"] = options.tool_version;
  if (!options.information_uri.empty()) driver["informationUri"] = options.information_uri;
  driver["rules"] = std::move(rules);

  Json invocation = {{"executionSuccessful", true}};
  if (!notifications.empty()) invocation["toolExecutionNotifications"] = std::move(notifications);

  Json run = {{"tool", {{"driver", std::move(driver)}}},
              {"invocations", Json::array({std::move(invocation)})}};
  if (uses_source_root) {
    // Relative paths are relative to where kvlint ran (paths stay as the user named them).
    Json root = {{"description", {{"text", "The directory kvlint was run from."}}}};
    std::error_code error;
    const std::filesystem::path cwd = std::filesystem::current_path(error);
    if (!error && cwd.is_absolute()) {
      std::string uri = "file://" + sarif::percent_encode_path(cwd.generic_string());
      if (!uri.ends_with('/')) uri += '/';
      root = {{"uri", uri}, {"description", root["description"]}};
    }
    run["originalUriBaseIds"] = {{std::string(kSourceRootId), std::move(root)}};
  }
  run["columnKind"] = "unicodeCodePoints";
  run["results"] = std::move(results);

  const Json document = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
                         {"version", "2.1.0"},
                         {"runs", Json::array({std::move(run)})}};
  return document.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace kvlint::reporting
