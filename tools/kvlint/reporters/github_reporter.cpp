// GitHub Actions workflow commands: one `::error|warning|notice ...::message`
// line per finding, so findings show up as annotations on the PR diff.
#include <fmt/format.h>

#include <string>

#include "tools/kvlint/reporters/report_support.hpp"

namespace kvlint::reporting {
namespace {

// Workflow-command escaping (actions/toolkit, command.ts): data escapes
// %, CR and LF; property values also escape ':' and ','. Other control
// characters would reach the log raw (and drive its ANSI rendering), so text
// from source files goes through escape_nonprintable first (line breaks in
// messages kept: they become %0A here).
std::string escape_data(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '%':
        out += "%25";
        break;
      case '\r':
        out += "%0D";
        break;
      case '\n':
        out += "%0A";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string escape_property(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : escape_data(text)) {
    if (ch == ':') {
      out += "%3A";
    } else if (ch == ',') {
      out += "%2C";
    } else {
      out += ch;
    }
  }
  return out;
}

std::string_view command_for(Severity severity) {
  switch (severity) {
    case Severity::Error:
      return "error";
    case Severity::Warning:
      return "warning";
    case Severity::Info:
      return "notice";
  }
  return "error";
}

// file=..,line=..,col=..,endLine=..,endColumn=..; zero (unknown) positions are left out.
std::string position_properties(std::string_view path, std::uint32_t line, std::uint32_t column,
                                std::uint32_t end_line, std::uint32_t end_column) {
  std::string out = "file=" + escape_property(escape_nonprintable(path));
  if (line == 0) return out;
  out += fmt::format(",line={}", line);
  if (column != 0) out += fmt::format(",col={}", column);
  if (end_line != 0) out += fmt::format(",endLine={}", end_line);
  if (end_column != 0) out += fmt::format(",endColumn={}", end_column);
  return out;
}

}  // namespace

std::string render_github(const CheckResult& result, const ReportOptions& /*options*/) {
  std::string out;
  for (const Finding& finding : result.findings) {
    const std::string name = rule_name(finding.code);
    const std::string title = name.empty() ? finding.code : fmt::format("{} ({})", finding.code, name);
    // The annotation body carries the owner and the evidence, one note per line.
    std::string message = escape_nonprintable(finding.message, true);
    if (!finding.owner_class.empty())
      message = fmt::format("[{}] {}", escape_nonprintable(finding.owner_class), message);
    for (const RelatedLocation& related : finding.related) {
      message += fmt::format("\nnote: {}:{}:{}: {}", escape_nonprintable(related.loc.file), related.loc.line,
                             related.loc.column, escape_nonprintable(related.message, true));
    }
    const facts::Location& loc = finding.loc;
    out += fmt::format("::{} {},title={}::{}\n", command_for(finding.severity),
                       position_properties(loc.file, loc.line, loc.column, loc.end_line, loc.end_column),
                       escape_property(title), escape_data(message));
  }
  for (const Diagnostic& diagnostic : result.diagnostics) {
    out += fmt::format("::{} {},title={}::{}\n", is_note(diagnostic) ? "notice" : "error",
                       position_properties(diagnostic.path, diagnostic.line, diagnostic.column, 0, 0),
                       escape_property(fmt::format("kvlint {}", diagnostic.kind)),
                       escape_data(escape_nonprintable(diagnostic.message, true)));
  }
  return out;
}

}  // namespace kvlint::reporting
