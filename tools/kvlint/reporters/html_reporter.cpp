// One self-contained HTML page for a reviewer: the findings per owner class
// with their code, related locations and (given `kvlint confirm` results)
// verdict and evidence; declared vs observed bytes as inline SVG charts; the
// projection to an engine setting; the change against a base revision.
// No scripts, fonts, images or links to fetch: a Content-Security-Policy
// forbids them, the CSS is inline and works at phone width and in print.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>

#include "tools/kvlint/reporters/report_support.hpp"

namespace kvlint::reporting {
namespace {

// Text for HTML content and attribute values: control characters and bytes
// that are not UTF-8 become visible escapes first, then the five HTML
// specials become entities.
std::string html(std::string_view text) {
  const std::string printable = escape_nonprintable(text, true);
  std::string out;
  out.reserve(printable.size());
  for (char ch : printable) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

// A message with its `code` spans as <code>.
std::string message_html(std::string_view message) {
  std::string out;
  for (const MessagePart& part : split_code_spans(message))
    out += part.code ? "<code>" + html(part.text) + "</code>" : html(part.text);
  return out;
}

std::string html_location(const facts::Location& loc) {
  return loc.column > 0 ? fmt::format("{}:{}:{}", loc.file, loc.line, loc.column)
                        : fmt::format("{}:{}", loc.file, loc.line);
}

constexpr const char* kStyle = R"css(
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg-code:#f6f8fa;--err:#cf222e;--warn:#9a6700;
--info:#0969da;--ok:#1a7f37;--declared:#0969da;--observed:#bc4c00}
*{box-sizing:border-box}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);margin:0 auto;
max-width:980px;padding:16px}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.25em;border-bottom:1px solid var(--line);padding-bottom:.2em;
margin-top:1.6em}h3{font-size:1.05em;margin:.2em 0}
code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
code{background:var(--bg-code);padding:.1em .3em;border-radius:4px;overflow-wrap:anywhere}
pre{background:var(--bg-code);padding:8px;overflow-x:auto;border-radius:6px;margin:.4em 0}
pre code{background:none;padding:0}
.ln{display:inline-block;min-width:3.5em;color:var(--muted);user-select:none}
.hit{background:#fff8c5;display:block}
.muted{color:var(--muted)}
.finding{border:1px solid var(--line);border-radius:8px;padding:10px 12px;margin:10px 0}
.badge{display:inline-block;border-radius:10px;padding:0 .55em;font-size:.8em;font-weight:600;
border:1px solid currentColor;white-space:nowrap}
.sev-error{color:var(--err)}.sev-warning{color:var(--warn)}.sev-info{color:var(--info)}
.v-confirmed{color:var(--err)}.v-refuted{color:var(--ok)}.v-not-exercised,.v-inconclusive,.v-not-checked,
.v-not-run{color:var(--muted)}
.related{padding-left:1.2em}.related li{margin:.3em 0}
.table-wrap{overflow-x:auto}td code{overflow-wrap:normal}
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid var(--line);padding:3px 8px;text-align:left;
vertical-align:top}td.num,th.num{text-align:right;white-space:nowrap}
.chart{margin:1em 0}.chart svg{width:100%;height:auto;max-width:640px}figcaption{font-weight:600;margin-bottom:.3em}
.projection{font-size:1.1em}h2 code{font-size:.95em}
@media (max-width:640px){body{padding:8px;font-size:14px}code,pre{font-size:12px}.ln{min-width:2.5em}
th,td{padding:2px 4px}}
@media print{body{max-width:none;padding:0;font-size:10pt;color:#000}pre{white-space:pre-wrap;
overflow:visible}.finding,figure,tr{break-inside:avoid}td code{overflow-wrap:anywhere}.table-wrap{overflow:visible}h2{break-after:avoid}}
)css";

// The source lines around a finding, its own lines marked.
std::string excerpt(SourceLines& sources, const facts::Location& loc, std::uint32_t context) {
  if (loc.line == 0) return {};
  // 64-bit arithmetic: a line number near UINT32_MAX (from a findings file) must not wrap.
  const std::uint64_t line = loc.line;
  const std::uint64_t last_hit =
      std::min<std::uint64_t>(std::max<std::uint64_t>(loc.end_line, line), line + 8);
  const std::uint64_t first = line > context ? line - context : 1;
  std::string body;
  for (std::uint64_t n = first; n <= last_hit + context && n <= UINT32_MAX; ++n) {
    const auto text = sources.line(loc.file, static_cast<std::uint32_t>(n));
    if (!text) break;
    const bool hit = n >= line && n <= last_hit;
    // A long line shows a window around the finding's column, its cuts marked.
    const LineWindow window = line_window(*text, loc.column > 0 ? loc.column - 1 : 0);
    body += fmt::format("<span class=\"{}\"><span class=\"ln\">{}</span>{}{}{}</span>{}", hit ? "hit" : "src",
                        n, window.cut_before ? kCutMarker : "", html(window.text),
                        window.cut_after ? kCutMarker : "", hit ? "" : "\n");
  }
  if (body.empty() && sources.outside_root(loc.file))
    return fmt::format(
        "<p class=\"muted\">(source not shown: <code>{}</code> lies outside the project root)</p>\n",
        html(loc.file));
  if (body.empty()) return "<p class=\"muted\">(source not available)</p>\n";
  return "<pre class=\"excerpt\"><code>" + body + "</code></pre>\n";
}

// A horizontal bar chart of declared vs observed bytes, one group per label.
struct BarGroup {
  std::string label;
  int64_t declared = 0, observed = 0;
};

std::string bar_chart(std::string_view id, std::string_view title, const std::vector<BarGroup>& groups) {
  // Narrow enough that 13px labels stay readable when a phone scales the chart down.
  constexpr int kWidth = 520, kBarArea = 320, kGroup = 60, kTop = 40;
  int64_t largest = 1;
  for (const BarGroup& g : groups) largest = std::max({largest, g.declared, g.observed});
  const int height = kTop + kGroup * static_cast<int>(groups.size()) + 8;
  std::string out = fmt::format(
      "<figure class=\"chart\" id=\"{0}\"><figcaption>{3}</figcaption><svg "
      "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {1} {2}\" "
      "role=\"img\" aria-labelledby=\"{0}-title\"><title id=\"{0}-title\">{3}</title>"
      "<style>text{{font:13px system-ui,sans-serif;fill:#1f2328}}.v{{fill:#59636e}}</style>"
      "<rect x=\"0\" y=\"8\" width=\"14\" height=\"12\" fill=\"#0969da\"/><text x=\"20\" "
      "y=\"18\">declared</text>"
      "<rect x=\"110\" y=\"8\" width=\"14\" height=\"12\" fill=\"#bc4c00\"/>"
      "<text x=\"130\" y=\"18\">observed</text>",
      html(id), kWidth, height, html(title));
  int y = kTop;
  for (const BarGroup& g : groups) {
    out += fmt::format("<g class=\"bar-group\"><text x=\"0\" y=\"{}\">{}</text>", y + 10, html(g.label));
    int bar_y = y + 18;
    for (const auto& [value, colour, kind] :
         {std::tuple{g.declared, "#0969da", "declared"}, std::tuple{g.observed, "#bc4c00", "observed"}}) {
      const double share = static_cast<double>(value) / static_cast<double>(largest);
      const int width = value > 0 ? std::max(1, static_cast<int>(share * kBarArea)) : 0;
      out += fmt::format(
          "<rect class=\"bar {}\" x=\"0\" y=\"{}\" width=\"{}\" height=\"14\" fill=\"{}\" data-bytes=\"{}\"/>"
          "<text class=\"v\" x=\"{}\" y=\"{}\">{} {}</text>",
          kind, bar_y, width, colour, value, width + 6, bar_y + 12, kind, html(format_bytes(value)));
      bar_y += 17;
    }
    out += "</g>";
    y += kGroup;
  }
  return out + "</svg></figure>\n";
}

std::string verdict_badge(std::string_view verdict) {
  return fmt::format("<span class=\"badge verdict v-{0}\">{0}</span>", html(verdict));
}

std::string finding_article(const Finding& finding, std::size_t index, const ReviewData* review,
                            SourceLines& sources) {
  const ReviewVerdict* verdict = nullptr;
  if (review) {
    auto it = review->verdicts.find(review_key(finding));
    if (it != review->verdicts.end()) verdict = &it->second;
  }
  const std::string severity(to_string(finding.severity));
  std::string out = fmt::format(
      "<article class=\"finding\" id=\"finding-{}\" data-code=\"{}\" data-fingerprint=\"{}\">\n"
      "<h3><span class=\"badge sev-{}\">{}</span> <span class=\"code\">{}</span> <code>{}</code>",
      index, html(finding.code), html(finding.fingerprint), html(severity), html(severity),
      html(finding.code), html(rule_name(finding.code)));
  if (review) out += " " + verdict_badge(verdict ? verdict->verdict : "not-run");
  out += fmt::format("</h3>\n<p class=\"loc\"><code>{}</code></p>\n<p class=\"message\">{}</p>\n",
                     html(html_location(finding.loc)), message_html(finding.message));
  out += excerpt(sources, finding.loc, 2);
  if (!finding.related.empty()) {
    out += "<ul class=\"related\">\n";
    for (const RelatedLocation& related : finding.related) {
      out += fmt::format("<li><code>{}</code> {}", html(html_location(related.loc)),
                         message_html(related.message));
      facts::Location one_line = related.loc;
      one_line.end_line = related.loc.line;
      out += excerpt(sources, one_line, 0) + "</li>\n";
    }
    out += "</ul>\n";
  }
  if (verdict) {
    std::string where;
    if (!verdict->model.empty()) where = fmt::format(" (model <code>{}</code>", html(verdict->model));
    if (!where.empty() && !verdict->path.empty())
      where += fmt::format(", path <code>{}</code>", html(verdict->path));
    if (!where.empty() && verdict->concurrency > 0)
      where += fmt::format(", concurrency {}", verdict->concurrency);
    if (!where.empty()) where += ")";
    out += fmt::format("<p class=\"evidence\"><strong>Runtime:</strong> {}{}</p>\n",
                       message_html(verdict->summary), where);
  } else if (review) {
    out += "<p class=\"evidence muted\">Runtime: no confirm result for this finding.</p>\n";
  }
  return out + "</article>\n";
}

// The findings section stops adding findings past this size, as the Markdown report stops
// under GitHub's comment limit: a browser can still open the page.
constexpr std::size_t kFindingsLimit = std::size_t{16} << 20;

std::string findings_by_owner(const CheckResult& result, const ReviewData* review, SourceLines& sources) {
  std::map<std::string, std::vector<std::size_t>> by_owner;  // "" (no owner) sorts first; moved last below
  for (std::size_t i = 0; i < result.findings.size(); ++i)
    by_owner[result.findings[i].owner_class].push_back(i);
  std::vector<std::pair<std::string, std::vector<std::size_t>>> ordered(by_owner.begin(), by_owner.end());
  if (!ordered.empty() && ordered.front().first.empty())
    std::rotate(ordered.begin(), ordered.begin() + 1, ordered.end());
  std::string out = "<section id=\"findings\"><h2>Findings by owner class</h2>\n";
  if (result.findings.empty()) out += "<p>No findings.</p>\n";
  std::size_t shown = 0;
  bool full = false;
  for (const auto& [owner, indices] : ordered) {
    if (full) break;
    out += fmt::format("<section class=\"owner\"><h2>{}</h2>\n",
                       owner.empty() ? std::string("(no owner class)") : "<code>" + html(owner) + "</code>");
    for (std::size_t i : indices) {
      std::string article = finding_article(result.findings[i], i + 1, review, sources);
      if (out.size() + article.size() > kFindingsLimit) {
        full = true;
        break;
      }
      out += article;
      ++shown;
    }
    out += "</section>\n";
  }
  if (shown < result.findings.size())
    out += fmt::format(
        "<p id=\"not-shown\"><strong>{} more {}</strong> not shown: the report holds at most {} MiB of "
        "findings. All of them: <code>kvlint check --format json</code>.</p>\n",
        result.findings.size() - shown, result.findings.size() - shown == 1 ? "finding" : "findings",
        kFindingsLimit >> 20);
  return out + "</section>\n";
}

std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                  std::string_view id) {
  std::string out = fmt::format("<div class=\"table-wrap\"><table id=\"{}\"><thead><tr>", html(id));
  for (const auto& h : header) out += "<th>" + h + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    for (const auto& cell : row) {
      const bool number = !cell.empty() && (std::isdigit(static_cast<unsigned char>(cell[0])) != 0 ||
                                            cell[0] == '+' || cell[0] == '-');
      out += number ? "<td class=\"num\">" + cell + "</td>" : "<td>" + cell + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

std::string signed_bytes(int64_t delta) {
  return delta > 0 ? "+" + format_bytes(delta) : delta < 0 ? "-" + format_bytes(-delta) : "0 B";
}

std::string memory_section(const ReviewData& review) {
  std::string out = "<section id=\"memory\"><h2>Declared vs observed memory</h2>\n";
  if (review.memory.empty()) return out + "<p>No model measured any declaration or cache.</p></section>\n";
  std::vector<Projection> projections;
  if (review.max_num_seqs) {
    projections = project(review.memory, *review.max_num_seqs);
    for (const Projection& p : projections)
      out += fmt::format(
          "<p class=\"projection\" data-model=\"{}\">This model's local KV is <strong>{}</strong> at "
          "max_num_seqs={} (model <code>{}</code>; declared; the observed caches scale to {}).</p>\n",
          html(p.model), html(format_bytes(p.declared_bytes)), *review.max_num_seqs, html(p.model),
          html(format_bytes(p.observed_bytes)));
    const Projection total = projection_total(projections);
    if (projections.size() > 1)
      out += fmt::format(
          "<p class=\"projection total\">All models together: <strong>{}</strong> declared, {} observed at "
          "max_num_seqs={}.</p>\n",
          html(format_bytes(total.declared_bytes)), html(format_bytes(total.observed_bytes)),
          *review.max_num_seqs);
  } else {
    out +=
        "<p class=\"muted\">Pass <code>--max-num-seqs N</code> to project the totals to an engine "
        "setting.</p>\n";
  }
  std::vector<BarGroup> totals;
  for (const ConcurrencyTotal& t : totals_by_concurrency(review.memory))
    totals.push_back({fmt::format("{} · {} · concurrency {}", t.model, t.path, t.concurrency),
                      t.declared_bytes, t.observed_bytes});
  out += bar_chart("chart-totals", "Total bytes at each measured concurrency", totals);
  // Its own chart: a projection is usually orders of magnitude above the measurements.
  std::vector<BarGroup> projected;
  for (const Projection& p : projections) projected.push_back({p.model, p.declared_bytes, p.observed_bytes});
  if (!projected.empty())
    out += bar_chart("chart-projection", fmt::format("Projected at max_num_seqs={}", *review.max_num_seqs),
                     projected);

  // Bytes per row: per owner at its largest measured concurrency.
  std::map<std::pair<std::string, std::string>, const MemoryRow*> per_owner;
  for (const MemoryRow& row : review.memory) {
    const MemoryRow*& best = per_owner[{row.model, row.owner}];
    if (!best || row.concurrency > best->concurrency ||
        (row.concurrency == best->concurrency && row.observed_bytes > best->observed_bytes))
      best = &row;
  }
  std::vector<BarGroup> per_row;
  for (const auto& [key, row] : per_owner)
    per_row.push_back({fmt::format("{} · {}", key.first, key.second.empty() ? "(no owner)" : key.second),
                       row->declared_bytes_per_row, row->observed_bytes_per_row});
  out += bar_chart("chart-per-row", "Bytes per row, per owner", per_row);

  std::vector<std::vector<std::string>> rows;
  for (const MemoryRow& row : review.memory)
    rows.push_back({"<code>" + html(row.model) + "</code>", html(row.path), std::to_string(row.concurrency),
                    "<code>" + html(row.owner) + "</code>", html(format_bytes(row.declared_bytes_per_row)),
                    html(format_bytes(row.observed_bytes_per_row)), html(format_bytes(row.declared_bytes)),
                    html(format_bytes(row.observed_bytes))});
  out += table({"model", "path", "<span title=\"concurrency\">conc.</span>", "owner", "declared / row",
                "observed / row", "declared", "observed"},
               rows, "memory-table");
  return out + "</section>\n";
}

std::string diff_section(const ReviewData& review) {
  std::string out = "<section id=\"declared-change\"><h2>Change in declared bytes against the base</h2>\n";
  const auto base = totals_by_concurrency(*review.base_memory);
  const auto head = totals_by_concurrency(review.memory);
  std::vector<std::vector<std::string>> rows;
  auto find = [](const std::vector<ConcurrencyTotal>& in,
                 const ConcurrencyTotal& like) -> const ConcurrencyTotal* {
    for (const auto& t : in)
      if (t.model == like.model && t.path == like.path && t.concurrency == like.concurrency) return &t;
    return nullptr;
  };
  auto add = [&rows](std::string label, const int64_t* before, const int64_t* after) {
    const int64_t delta = (after ? *after : 0) - (before ? *before : 0);
    rows.push_back({std::move(label), before ? html(format_bytes(*before)) : "(not measured)",
                    after ? html(format_bytes(*after)) : "(not measured)", html(signed_bytes(delta))});
  };
  for (const auto& t : head) {
    const ConcurrencyTotal* was = find(base, t);
    add(fmt::format("<code>{}</code> · {} · concurrency {}", html(t.model), html(t.path), t.concurrency),
        was ? &was->declared_bytes : nullptr, &t.declared_bytes);
  }
  for (const auto& t : base)
    if (!find(head, t))
      add(fmt::format("<code>{}</code> · {} · concurrency {}", html(t.model), html(t.path), t.concurrency),
          &t.declared_bytes, nullptr);
  if (review.max_num_seqs) {
    const auto before = project(*review.base_memory, *review.max_num_seqs);
    const auto after = project(review.memory, *review.max_num_seqs);
    for (const auto& p : after) {
      auto was = std::find_if(before.begin(), before.end(),
                              [&p](const Projection& b) { return b.model == p.model; });
      add(fmt::format("<code>{}</code> · projected at max_num_seqs={}", html(p.model), *review.max_num_seqs),
          was != before.end() ? &was->declared_bytes : nullptr, &p.declared_bytes);
    }
  }
  out += table({"measurement", "base", "this change", "change"}, rows, "declared-change-table");
  return out + "</section>\n";
}

std::string runtime_section(const ReviewData& review, SourceLines& sources) {
  std::string out = "<section id=\"models\"><h2>Models booted by <code>kvlint confirm</code></h2>\n";
  std::vector<std::vector<std::string>> rows;
  for (const ReviewModel& m : review.models)
    rows.push_back({"<code>" + html(m.name) + "</code>", html(m.status), html(m.device), html(m.reason)});
  out += rows.empty() ? "<p>No model was booted.</p>\n"
                      : table({"model", "status", "device", "reason"}, rows, "models-table");
  out += "</section>\n";
  if (review.runtime_findings.empty()) return out;
  out += "<section id=\"runtime-findings\"><h2>Runtime-only findings</h2>\n";
  std::size_t index = 0;
  for (const ReviewRuntimeFinding& rt : review.runtime_findings) {
    const std::string severity(to_string(rt.finding.severity));
    out += fmt::format(
        "<article class=\"finding runtime\" id=\"runtime-{}\" data-code=\"{}\">\n<h3><span class=\"badge "
        "sev-{}\">"
        "{}</span> <span class=\"code\">{}</span> <code>{}</code> owner <code>{}</code></h3>\n"
        "<p class=\"loc\"><code>{}</code></p>\n<p class=\"message\">{}</p>\n",
        ++index, html(rt.finding.code), html(severity), html(severity), html(rt.finding.code), html(rt.name),
        html(rt.finding.owner_class), html(html_location(rt.finding.loc)), message_html(rt.finding.message));
    out += excerpt(sources, rt.finding.loc, 1);
    if (!rt.evidence.summary.empty())
      out += fmt::format("<p class=\"evidence\"><strong>Runtime:</strong> {}</p>\n",
                         message_html(rt.evidence.summary));
    out += "</article>\n";
  }
  return out + "</section>\n";
}

std::string summary_line(const CheckResult& result, const ReviewData* review) {
  const Totals totals = count_findings(result.findings);
  std::string out = result.findings.empty()
                        ? std::string("No findings")
                        : fmt::format("{} ({})", plural(result.findings.size(), "finding", "findings"),
                                      severity_breakdown(totals));
  out += fmt::format(" in {}", plural(result.stats.files_found, "file", "files"));
  if (result.suppressed > 0) out += fmt::format("; {} suppressed", result.suppressed);
  if (review) {
    std::map<std::string, std::size_t> verdicts;
    for (const Finding& f : result.findings) {
      auto it = review->verdicts.find(review_key(f));
      ++verdicts[it == review->verdicts.end() ? std::string("not-run") : it->second.verdict];
    }
    std::string parts;
    for (const auto& [verdict, count] : verdicts)
      parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", count, verdict);
    if (!parts.empty()) out += "; runtime: " + parts;
    out += fmt::format(
        "; {}", plural(review->runtime_findings.size(), "runtime-only finding", "runtime-only findings"));
  }
  return html(out) + ".";
}

}  // namespace

std::string render_html(const CheckResult& result, const ReportOptions& options) {
  const ReviewData* review = options.review;
  SourceLines sources(options.source_root);
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'\">\n"
      "<title>kvlint report</title>\n<style>{}</style>\n</head>\n<body>\n<header><h1>kvlint report</h1>\n"
      "<p id=\"summary\">{}</p>\n<p class=\"muted\">kvlint {}</p></header>\n<main>\n",
      kStyle, summary_line(result, review), html(options.tool_version));
  if (review) {
    out += memory_section(*review);
    if (review->base_memory) out += diff_section(*review);
  }
  out += findings_by_owner(result, review, sources);
  if (review) out += runtime_section(*review, sources);
  if (!result.diagnostics.empty()) {
    out += "<section id=\"input-problems\"><h2>Input problems</h2>\n<ul>\n";
    for (const Diagnostic& d : result.diagnostics)
      out += fmt::format("<li><code>{}</code> <code>{}</code>: {}</li>\n", html(diagnostic_where(d)),
                         html(d.kind), html(d.message));
    out += "</ul></section>\n";
  }
  return out + "</main>\n</body>\n</html>\n";
}

}  // namespace kvlint::reporting
