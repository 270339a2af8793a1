// The findings JSON (schema "kvlint-findings", version 1), documented in
// docs/json-output.md and docs/findings.schema.json. The runtime companion and
// CI scripts read it, so keys keep their names and order.
#include <nlohmann/json.hpp>

#include "tools/kvlint/reporters/report_support.hpp"

namespace kvlint::reporting {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kSchemaVersion = 1;

// "path", plus "path_bytes" (the path's bytes in hex) when the path is not
// UTF-8: the text form then carries U+FFFD and could not name the file.
void add_path(Json& object, const std::string& path) {
  object["path"] = path;
  if (auto hex = non_utf8_bytes_hex(path)) object["path_bytes"] = std::move(*hex);
}

Json finding_json(const Finding& finding) {
  Json related = Json::array();
  for (const RelatedLocation& item : finding.related) {
    Json entry = Json::object();
    add_path(entry, item.loc.file);
    entry["line"] = item.loc.line;
    entry["column"] = item.loc.column;
    entry["message"] = item.message;
    related.push_back(std::move(entry));
  }
  Json out = {{"code", finding.code},
              {"name", rule_name(finding.code)},
              {"severity", std::string(to_string(finding.severity))}};
  add_path(out, finding.loc.file);
  out.update(Json{{"line", finding.loc.line},
                  {"column", finding.loc.column},
                  {"end_line", finding.loc.end_line},
                  {"end_column", finding.loc.end_column},
                  {"owner", finding.owner_class},
                  {"message", finding.message},
                  {"related", std::move(related)},
                  {"fingerprint", finding.fingerprint}});
  if (!finding.member.empty()) out["member"] = finding.member;
  if (finding.fix) {
    Json edits = Json::array();
    for (const FixEdit& e : finding.fix->edits)
      edits.push_back({{"start_byte", e.begin}, {"end_byte", e.end}, {"content", e.replacement}});
    out["fix"] = {{"description", finding.fix->description},
                  {"applicability", finding.fix->safe ? "safe" : "unsafe"},
                  {"edits", std::move(edits)}};
  }
  return out;
}

Json diagnostic_json(const Diagnostic& diagnostic) {
  Json out = Json::object();
  add_path(out, diagnostic.path);
  out.update(Json{{"line", diagnostic.line},
                  {"column", diagnostic.column},
                  {"kind", diagnostic.kind},
                  {"severity", is_note(diagnostic) ? "note" : "error"},
                  {"message", diagnostic.message}});
  return out;
}

}  // namespace

std::string render_json(const CheckResult& result, const ReportOptions& options) {
  const Totals totals = count_findings(result.findings);

  Json findings = Json::array();
  for (const Finding& finding : result.findings) findings.push_back(finding_json(finding));
  Json diagnostics = Json::array();
  for (const Diagnostic& diagnostic : result.diagnostics) diagnostics.push_back(diagnostic_json(diagnostic));
  Json by_code = Json::object();
  for (const auto& [code, count] : totals.by_code) by_code[code] = count;

  const Json document = {
      {"schema", "kvlint-findings"},
      {"version", kSchemaVersion},
      {"tool", {{"name", "kvlint"}, {"version", options.tool_version}}},
      {"findings", std::move(findings)},
      {"diagnostics", std::move(diagnostics)},
      {"summary",
       {{"findings", result.findings.size()},
        {"suppressed", result.suppressed},
        {"files", result.stats.files_found},
        {"by_code", std::move(by_code)},
        {"by_severity", {{"error", totals.errors}, {"warning", totals.warnings}, {"info", totals.infos}}}}}};
  // Paths and messages come from user files and may hold invalid UTF-8:
  // replace such bytes (U+FFFD) rather than fail the whole report; paths keep
  // their bytes in "path_bytes".
  return document.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace kvlint::reporting
