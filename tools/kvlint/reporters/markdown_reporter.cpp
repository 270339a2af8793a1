// Markdown for a reviewer's PR comment: a heading with totals, one table row
// per finding, then each finding's evidence as a nested list.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "tools/kvlint/reporters/report_support.hpp"

namespace kvlint::reporting {
namespace {

// Escapes text for inline Markdown (and GFM table cells): characters that
// would start emphasis, links, code, HTML, a mention or split a cell are
// escaped, line breaks become <br> so a row stays on one line.
std::string escape_inline(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '|':
      case '#':
      case '~':
        out += '\\';
        out += ch;
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '@':
        // A zero-width space after '@' keeps `@name` from mentioning (and
        // notifying) a user or team, as Renovate does; code spans need none.
        out += "@&#8203;";
        break;
      case '\r':
        break;
      case '\n':
        out += "<br>";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

// A code span that survives any backticks in `text`: the fence is one
// backtick longer than the longest run inside. Inside tables '|' still needs
// a backslash (GFM splits cells before parsing code spans).
std::string code_span(std::string_view text, bool in_table = true) {
  std::size_t longest_run = 0;
  std::size_t run = 0;
  std::string body;
  body.reserve(text.size());
  for (char ch : text) {
    run = ch == '`' ? run + 1 : 0;
    longest_run = std::max(longest_run, run);
    if (ch == '|' && in_table) {
      body += "\\|";
    } else if (ch == '\n' || ch == '\r') {
      body += ' ';
    } else {
      body += ch;
    }
  }
  const std::string fence(longest_run + 1, '`');
  const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`');
  return pad ? fmt::format("{} {} {}", fence, body, fence) : fmt::format("{}{}{}", fence, body, fence);
}

std::string location_text(const facts::Location& loc) {
  return fmt::format("{}:{}:{}", loc.file, loc.line, loc.column);
}

std::string code_cell(const Finding& finding) {
  const std::string name = rule_name(finding.code);
  if (name.empty()) return escape_inline(finding.code);
  return fmt::format("{} {}", escape_inline(finding.code), code_span(name));
}

std::string heading(const CheckResult& result, const Totals& totals) {
  std::string text;
  if (result.findings.empty()) {
    text = "## kvlint: all checks passed";
  } else {
    text = fmt::format("## kvlint: {} ({})", plural(result.findings.size(), "finding", "findings"),
                       severity_breakdown(totals));
  }
  std::string details;
  if (result.suppressed > 0) details += fmt::format("{} suppressed", result.suppressed);
  if (!result.diagnostics.empty()) {
    if (!details.empty()) details += ", ";
    details += plural(result.diagnostics.size(), "input problem", "input problems");
  }
  if (!details.empty()) text += "; " + details;
  return text + "\n\n" + fmt::format("{} checked.\n", plural(result.stats.files_found, "file", "files"));
}

}  // namespace

std::string render_markdown(const CheckResult& result, const ReportOptions& options) {
  const Totals totals = count_findings(result.findings);
  std::string out = heading(result, totals);

  if (options.statistics && !result.findings.empty()) {
    out += "\n| Count | Code | Name | Severity |\n|---:|---|---|---|\n";
    for (const CodeCount& row : code_statistics(result.findings)) {
      out += fmt::format("| {} | {} | {} | {} |\n", row.count, escape_inline(row.code),
                         row.name.empty() ? std::string() : code_span(row.name), to_string(row.severity));
    }
  } else if (!result.findings.empty()) {
    out += "\n| Severity | Code | Location | Owner | Message |\n|---|---|---|---|---|\n";
    for (const Finding& finding : result.findings) {
      out += fmt::format("| {} | {} | {} | {} | {} |\n", to_string(finding.severity), code_cell(finding),
                         code_span(location_text(finding.loc)),
                         finding.owner_class.empty() ? std::string() : code_span(finding.owner_class),
                         escape_inline(finding.message));
    }
    bool evidence_heading_written = false;
    for (const Finding& finding : result.findings) {
      if (finding.related.empty()) continue;
      if (!evidence_heading_written) {
        out += "\n### Evidence\n\n";
        evidence_heading_written = true;
      }
      out += fmt::format("- **{}** at {}: {}\n", escape_inline(finding.code),
                         code_span(location_text(finding.loc), false), escape_inline(finding.message));
      for (const RelatedLocation& related : finding.related) {
        out += fmt::format("  - {}: {}\n", code_span(location_text(related.loc), false),
                           escape_inline(related.message));
      }
    }
  }

  if (!result.diagnostics.empty()) {
    out += "\n### Input problems\n\n";
    for (const Diagnostic& diagnostic : result.diagnostics) {
      out += fmt::format(
          "- {} {}: {}\n",
          code_span(fmt::format("{}:{}:{}", diagnostic.path, diagnostic.line, diagnostic.column), false),
          code_span(diagnostic.kind, false), escape_inline(diagnostic.message));
    }
  }
  return out;
}

}  // namespace kvlint::reporting
