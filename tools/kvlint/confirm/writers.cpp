#include "tools/kvlint/confirm/writers.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <tuple>

#include "rules/registry.hpp"
#include "tools/kvlint/confirm/review_input.hpp"
#include "tools/kvlint/engine/result_cache.hpp"
#include "tools/kvlint/engine/source_file.hpp"
#include "tools/kvlint/reporters/reporters.hpp"
#include "tools/kvlint/reporters/sarif_support.hpp"

namespace kvlint::confirm {
namespace {

using nlohmann::json;

std::string upper(std::string_view text) {
  std::string out(text);
  for (auto& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

std::string location_text(const Finding& f) {
  return fmt::format("{}:{}", f.loc.file, f.loc.line);
}

// Sets object[key] to a filesystem path. JSON text must be UTF-8, so a path
// that is not gets its bytes percent-encoded beside it under "<key>_bytes"
// (RFC 3986, urllib.parse.unquote_to_bytes reverses it); object[key] itself
// becomes U+FFFD-replaced text when the document is dumped.
void put_path(json& object, const std::string& key, const std::string& path) {
  object[key] = path;
  if (find_invalid_utf8(path)) object[key + "_bytes"] = sarif::percent_encode_path(path);
}

// Text that is not valid UTF-8 (a child's stderr, a path) is written with each
// invalid byte replaced by U+FFFD rather than failing the whole report.
std::string dump(const json& document) {
  return document.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

json optional_int(const std::optional<int64_t>& value) {
  return value ? json(*value) : json(nullptr);
}

json evidence_json(const Evidence& e) {
  json out = json::object();
  out["model"] = e.model.empty() ? json(nullptr) : json(e.model);
  out["path"] = e.path.empty() ? json(nullptr) : json(e.path);
  out["concurrency"] = e.concurrency > 0 ? json(e.concurrency) : json(nullptr);
  if (e.observed) {
    const auto& o = *e.observed;
    out["observed"] = {{"file", o.file},
                       {"line", o.line},
                       {"class", o.cache_class},
                       {"owner", o.owner},
                       {"rows", o.rows},
                       {"bytes_per_row", o.bytes_per_row},
                       {"bytes", o.bytes},
                       {"objects", o.objects},
                       {"positions", o.positions},
                       {"layers", o.layers},
                       {"bytes_per_row_human", format_bytes(o.bytes_per_row)}};
    put_path(out["observed"], "file", o.file);
  } else {
    out["observed"] = nullptr;
  }
  if (e.declared) {
    const auto& d = *e.declared;
    out["declared"] = {{"owner", d.owner},
                       {"name", d.name},
                       {"rows_driver", d.rows_driver},
                       {"rows_fixed", optional_int(d.rows_fixed)},
                       {"rows", d.rows},
                       {"bytes_per_row", d.bytes_per_row},
                       {"total_bytes", d.total_bytes},
                       {"bytes_per_row_human", format_bytes(d.bytes_per_row)}};
  } else {
    out["declared"] = nullptr;
  }
  if (e.capture) {
    const auto& c = *e.capture;
    out["capture"] = {
        {"file", c.file}, {"line", c.line}, {"kind", c.kind}, {"owner", c.owner}, {"count", c.count}};
    put_path(out["capture"], "file", c.file);
  }
  if (e.collected_total_bytes) out["collected_total_bytes"] = *e.collected_total_bytes;
  out["gpu_peak_bytes"] = optional_int(e.gpu_peak_bytes);
  out["summary"] = e.summary;
  return out;
}

json related_json(const Finding& f) {
  json related = json::array();
  for (const auto& r : f.related) {
    related.push_back(
        {{"path", r.loc.file}, {"line", r.loc.line}, {"column", r.loc.column}, {"message", r.message}});
    put_path(related.back(), "path", r.loc.file);
  }
  return related;
}

// Declared vs observed bytes per owner on each (path, concurrency) the run
// reported, summed from the harness events above them: the reviewer report
// charts these and projects them to an engine setting.
json memory_json(const ModelRun& run) {
  struct Row {
    int64_t declared = 0, observed = 0, declared_per_row = 0, observed_per_row = 0, observed_rows = 0;
    int64_t fixed = 0, per_sequence = 0;
  };
  std::map<std::tuple<std::string, int, std::string>, Row> rows;  // (path, concurrency, owner), ordered
  for (const auto& c : run.caches) {
    Row& row = rows[{c.path, c.concurrency, c.owner}];
    row.observed += c.bytes;
    row.observed_per_row += c.bytes_per_row;
    row.observed_rows += c.rows;
  }
  for (const auto& c : run.captures)
    if (c.resident_bytes) rows[{c.path, c.concurrency, c.owner}].observed += *c.resident_bytes;
  for (const auto& d : run.declarations) {
    if (!d.declared) continue;
    Row& row = rows[{d.path, d.concurrency, d.owner}];
    row.declared += d.total_bytes;
    row.declared_per_row += d.bytes_per_row;
    (d.rows_driver == "MAX_NUM_SEQS" ? row.per_sequence : row.fixed) +=
        d.rows_driver == "MAX_NUM_SEQS" ? d.bytes_per_row : d.total_bytes;
  }
  json out = json::array();
  for (const auto& [key, row] : rows)
    out.push_back({{"path", std::get<0>(key)},
                   {"concurrency", std::get<1>(key)},
                   {"owner", std::get<2>(key)},
                   {"declared_bytes", row.declared},
                   {"observed_bytes", row.observed},
                   {"declared_bytes_per_row", row.declared_per_row},
                   {"observed_bytes_per_row", row.observed_per_row},
                   {"observed_rows", row.observed_rows},
                   {"declared_fixed_bytes", row.fixed},
                   {"declared_per_sequence_bytes", row.per_sequence}});
  return out;
}

json model_json(const ModelRun& run) {
  json model = {{"name", run.name},
                {"status", std::string(to_string(run.status))},
                {"reason", run.reason.empty() ? json(nullptr) : json(run.reason)},
                {"owners", run.owners},
                {"paths", run.paths},
                {"concurrency", run.concurrency},
                {"gpu_peak_bytes", optional_int(run.gpu_peak_bytes)}};
  if (run.start) {
    model["runtime"] = {{"pid", run.start->pid},
                        {"python", run.start->python},
                        {"torch", run.start->torch},
                        {"transformers", run.start->transformers},
                        {"device", run.start->device}};
  } else {
    model["runtime"] = nullptr;
  }
  model["process"] = {
      {"exit_code", run.process.spawned && run.process.signal == 0 && !run.process.timed_out
                        ? json(run.process.exit_code)
                        : json(nullptr)},
      {"signal", run.process.signal != 0 ? json(signal_name(run.process.signal)) : json(nullptr)},
      {"timed_out", run.process.timed_out},
      {"stderr_tail", run.process.stderr_tail}};
  json caches = json::array();
  for (const auto& c : run.caches) {
    caches.push_back({{"path", c.path},
                      {"concurrency", c.concurrency},
                      {"class", c.cache_class},
                      {"file", c.file},
                      {"line", c.line},
                      {"owner", c.owner},
                      {"rows", c.rows},
                      {"positions", c.positions},
                      {"layers", c.layers},
                      {"bytes", c.bytes},
                      {"bytes_per_row", c.bytes_per_row},
                      {"objects", c.objects},
                      {"alive_after_step", c.alive_after_step},
                      {"in_capture", c.in_capture},
                      {"growth", c.growth}});
    put_path(caches.back(), "file", c.file);
    if (!c.chain.empty()) {
      json chain = json::array();
      for (const auto& frame : c.chain) {
        chain.push_back({{"file", frame.file}, {"line", frame.line}, {"owner", frame.owner}});
        put_path(chain.back(), "file", frame.file);
      }
      caches.back()["chain"] = std::move(chain);
    }
    if (!c.members.empty()) {
      json members = json::array();
      for (const auto& member : c.members)
        members.push_back({{"owner", member.owner}, {"name", member.name}});
      caches.back()["members"] = std::move(members);
    }
    if (!c.holder.empty()) caches.back()["holder"] = c.holder;
    if (!c.kept_by.empty()) caches.back()["kept_by"] = c.kept_by;
  }
  json captures = json::array();
  for (const auto& c : run.captures) {
    captures.push_back({{"path", c.path},
                        {"concurrency", c.concurrency},
                        {"kind", c.kind},
                        {"file", c.file},
                        {"line", c.line},
                        {"owner", c.owner},
                        {"count", c.count},
                        {"resident_bytes", optional_int(c.resident_bytes)},
                        {"allocated_bytes", optional_int(c.allocated_bytes)},
                        {"retained", c.retained}});
    put_path(captures.back(), "file", c.file);
  }
  json declarations = json::array();
  for (const auto& d : run.declarations)
    declarations.push_back({{"path", d.path},
                            {"concurrency", d.concurrency},
                            {"owner", d.owner},
                            {"name", d.name},
                            {"bytes_per_row", d.bytes_per_row},
                            {"rows_driver", d.rows_driver},
                            {"rows_fixed", optional_int(d.rows_fixed)},
                            {"rows", d.rows},
                            {"total_bytes", d.total_bytes},
                            {"capacity", d.capacity},
                            {"scope", d.scope},
                            {"capacity_source", d.capacity_source},
                            {"declared", d.declared}});
  json paths_done = json::array();
  for (const auto& p : run.paths_done)
    paths_done.push_back({{"path", p.path}, {"concurrency", p.concurrency}, {"ok", p.ok}});
  json errors = json::array();
  for (const auto& e : run.errors)
    errors.push_back({{"path", e.path.empty() ? json(nullptr) : json(e.path)},
                      {"concurrency", e.concurrency ? json(*e.concurrency) : json(nullptr)},
                      {"kind", e.kind},
                      {"message", e.message}});
  model["observed"] = {{"caches", caches},
                       {"captures", captures},
                       {"declarations", declarations},
                       {"paths_done", paths_done},
                       {"errors", errors}};
  model["memory"] = memory_json(run);
  return model;
}

json sarif_location(const std::string& path, uint32_t line, uint32_t column) {
  json region = {{"startLine", std::max<uint32_t>(line, 1)}};
  if (column > 0) region["startColumn"] = column;
  return {{"physicalLocation", {{"artifactLocation", {{"uri", sarif::uri_of(path)}}}, {"region", region}}}};
}

}  // namespace

std::string model_progress_line(const ModelRun& run) {
  std::string line = fmt::format("kvlint confirm: model {}: {}", run.name, to_string(run.status));
  if (!run.reason.empty()) line += fmt::format(" ({})", run.reason);
  // A retained capture is one an earlier path made, seen again: not counted twice.
  const auto captured = std::count_if(run.captures.begin(), run.captures.end(),
                                      [](const CaptureEvent& c) { return !c.retained; });
  line += fmt::format("; {} cache site(s), {} capture(s), {} declaration(s)", run.caches.size(), captured,
                      run.declarations.size());
  if (run.gpu_peak_bytes) line += fmt::format("; GPU peak {}", format_bytes(*run.gpu_peak_bytes));
  return line;
}

std::string render_text(const ConfirmReport& report) {
  std::map<std::string_view, int> counts;
  for (const auto& r : report.results) ++counts[to_string(r.verdict)];
  std::string out =
      fmt::format("kvlint confirm: {} model(s), {} finding(s)", report.models.size(), report.results.size());
  for (auto verdict : {Verdict::Confirmed, Verdict::Refuted, Verdict::NotExercised, Verdict::Inconclusive,
                       Verdict::NotChecked})
    if (counts.count(to_string(verdict)) != 0)
      out += fmt::format(", {} {}", counts[to_string(verdict)], to_string(verdict));
  out += fmt::format(", {} runtime-only\n", report.runtime_findings.size());

  auto result_line = [](const FindingResult& r) {
    return fmt::format("  {} {} {} {}: {}\n", upper(to_string(r.verdict)), r.input.finding.code,
                       location_text(r.input.finding), r.input.finding.owner_class, r.evidence.summary);
  };
  for (const auto& run : report.models) {
    out += fmt::format("\nmodel {}: {}", run.name, to_string(run.status));
    if (!run.reason.empty()) out += fmt::format(": {}", run.reason);
    if (run.start && run.start->python.empty())  // a C++ plugin in kvlint-model-host
      out += fmt::format(" (C++ plugin, LibTorch {}, device {})", run.start->torch, run.start->device);
    else if (run.start)
      out += fmt::format(" (python {}, torch {}, transformers {}, device {})", run.start->python,
                         run.start->torch, run.start->transformers, run.start->device);
    if (run.gpu_peak_bytes) out += fmt::format(", GPU peak {}", format_bytes(*run.gpu_peak_bytes));
    out += "\n";
    for (const auto& r : report.results)
      if (r.evidence.model == run.name) out += result_line(r);
  }
  bool header = false;
  for (const auto& r : report.results) {
    bool tied = false;
    for (const auto& run : report.models) tied = tied || r.evidence.model == run.name;
    if (tied) continue;
    if (!header) out += "\nnot tied to a model run:\n";
    header = true;
    out += result_line(r);
  }
  if (!report.runtime_findings.empty()) out += "\nruntime-only findings:\n";
  for (const auto& rt : report.runtime_findings)
    out += fmt::format("  {} {} {} {}:{} {}: {}\n", rt.code, to_string(rt.severity), rt.name, rt.file,
                       rt.line, rt.owner.empty() ? "?" : rt.owner, rt.message);
  return out;
}

nlohmann::json to_json(const ConfirmReport& report, std::string_view tool_version) {
  json models = json::array();
  for (const auto& run : report.models) models.push_back(model_json(run));
  json results = json::array();
  std::map<std::string, int> by_verdict;
  for (const auto& r : report.results) {
    const auto& f = r.input.finding;
    ++by_verdict[std::string(to_string(r.verdict))];
    results.push_back({{"code", f.code},
                       {"name", r.input.name},
                       {"severity", std::string(to_string(f.severity))},
                       {"path", f.loc.file},
                       {"line", f.loc.line},
                       {"column", f.loc.column},
                       {"end_line", f.loc.end_line},
                       {"end_column", f.loc.end_column},
                       {"owner", f.owner_class},
                       {"message", f.message},
                       {"related", related_json(f)},
                       {"fingerprint", f.fingerprint},
                       {"verdict", std::string(to_string(r.verdict))},
                       {"evidence", evidence_json(r.evidence)}});
    put_path(results.back(), "path", f.loc.file);
  }
  json runtime = json::array();
  for (const auto& rt : report.runtime_findings) {
    runtime.push_back({{"code", rt.code},
                       {"name", rt.name},
                       {"severity", std::string(to_string(rt.severity))},
                       {"path", rt.file},
                       {"line", rt.line},
                       {"owner", rt.owner},
                       {"message", rt.message},
                       {"evidence", evidence_json(rt.evidence)}});
    put_path(runtime.back(), "path", rt.file);
  }
  return {{"schema", "kvlint-confirm"},
          {"version", 1},
          {"tool", {{"name", "kvlint"}, {"version", tool_version}}},
          {"tolerance", report.tolerance},
          {"models", models},
          {"results", results},
          {"runtime_findings", runtime},
          {"summary",
           {{"findings", report.results.size()},
            {"by_verdict", by_verdict},
            {"runtime_findings", report.runtime_findings.size()},
            {"exit_code", report.exit_code()}}}};
}

std::string render_json(const ConfirmReport& report, std::string_view tool_version) {
  return dump(to_json(report, tool_version));
}

std::string render_sarif(const ConfirmReport& report, std::string_view tool_version) {
  std::map<std::string, json> rules;  // id -> reportingDescriptor, ordered
  auto add_rule = [&rules](const std::string& code, const std::string& fallback_name, Severity severity) {
    if (rules.count(code) != 0) return;
    json rule = {{"id", code}};
    std::string name = fallback_name;
    std::string summary;
    if (const RuleInfo* info = find_rule_info(code)) {
      name = std::string(info->name);
      summary = std::string(info->summary);
    }
    if (!name.empty()) rule["name"] = name;
    if (!summary.empty()) rule["shortDescription"] = {{"text", summary}};
    rule["defaultConfiguration"] = {{"level", sarif::level(severity)}};
    rules[code] = rule;
  };
  json results = json::array();
  for (const auto& r : report.results) {
    const auto& f = r.input.finding;
    add_rule(f.code, r.input.name, f.severity);
    json result = {
        {"ruleId", f.code},
        {"level", sarif::level(f.severity)},
        {"message",
         {{"text",
           fmt::format("{} [runtime: {}: {}]", f.message, to_string(r.verdict), r.evidence.summary)}}},
        {"locations", json::array({sarif_location(f.loc.file, f.loc.line, f.loc.column)})},
        {"properties",
         {{"verdict", std::string(to_string(r.verdict))}, {"evidence", evidence_json(r.evidence)}}}};
    if (!f.fingerprint.empty()) result["partialFingerprints"] = {{"kvlint/v1", f.fingerprint}};
    if (!f.related.empty()) {
      json related = json::array();
      int id = 0;
      for (const auto& rel : f.related) {
        json location = sarif_location(rel.loc.file, rel.loc.line, rel.loc.column);
        location["id"] = id++;
        location["message"] = {{"text", rel.message.empty() ? std::string("related") : rel.message}};
        related.push_back(location);
      }
      result["relatedLocations"] = related;
    }
    results.push_back(result);
  }
  for (const auto& rt : report.runtime_findings) {
    add_rule(rt.code, rt.name, rt.severity);
    results.push_back({{"ruleId", rt.code},
                       {"level", sarif::level(rt.severity)},
                       {"message", {{"text", rt.message}}},
                       {"locations", json::array({sarif_location(rt.file, rt.line, 0)})},
                       {"properties", {{"verdict", "runtime"}, {"evidence", evidence_json(rt.evidence)}}}});
  }
  json rule_list = json::array();
  for (auto& [code, rule] : rules) rule_list.push_back(rule);
  json run = {{"tool",
               {{"driver",
                 {{"name", "kvlint"},
                  {"version", tool_version},

                  {"rules", rule_list}}}}},
              {"results", results},
              {"properties", {{"kvlintConfirm", {{"models", json::array()}}}}}};
  for (const auto& model : report.models)
    run["properties"]["kvlintConfirm"]["models"].push_back(
        {{"name", model.name}, {"status", std::string(to_string(model.status))}, {"reason", model.reason}});
  json sarif = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
                {"version", "2.1.0"},
                {"runs", json::array({run})}};
  return dump(sarif);
}

std::string render_review(const ConfirmReport& report, OutputFormat format, std::string_view tool_version,
                          std::optional<int64_t> max_num_seqs) {
  // Through the JSON document, so `kvlint report` on a saved confirm.json gives the same page.
  const json document = to_json(report, tool_version);
  const CheckResult findings = check_result_from_confirm(document, "confirm");
  ReviewData review = review_from_confirm(document, "confirm");
  review.max_num_seqs = max_num_seqs;
  ReportOptions options;
  options.tool_version = std::string(tool_version);
  options.review = &review;
  return render_report(findings, format, options);
}

bool render(const ConfirmReport& report, std::string_view format, std::string_view tool_version,
            std::string& out, std::optional<int64_t> max_num_seqs) {
  if (format == "html")
    out = render_review(report, OutputFormat::Html, tool_version, max_num_seqs);
  else if (format == "markdown")
    out = render_review(report, OutputFormat::Markdown, tool_version, max_num_seqs);
  else if (format == "text")
    out = render_text(report);
  else if (format == "json")
    out = render_json(report, tool_version);
  else if (format == "sarif")
    out = render_sarif(report, tool_version);
  else
    return false;
  return true;
}

void write_report_file(const std::filesystem::path& target, std::string_view content) {
  std::string error;
  if (!kvlint::write_output_file(target, content, error)) throw std::runtime_error(error);
}

}  // namespace kvlint::confirm
