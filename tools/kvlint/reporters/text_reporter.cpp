// Text output for terminals, in the style of ruff and clang:
//   path:line:col: error: KV101 [Owner] message
// followed by an optional source excerpt with an underline and the evidence
// as `= note:` lines; diagnostics, then one summary line.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "tools/kvlint/reporters/report_support.hpp"

namespace kvlint::reporting {
namespace {

constexpr std::string_view kReset = "\x1b[0m";
constexpr std::string_view kBold = "\x1b[1m";

std::string_view severity_color(Severity severity) {
  switch (severity) {
    case Severity::Error:
      return "\x1b[31m";
    case Severity::Warning:
      return "\x1b[33m";
    case Severity::Info:
      return "\x1b[34m";
  }
  return "";
}

class TextStyle {
 public:
  explicit TextStyle(bool enabled) : enabled_(enabled) {}
  std::string severity(Severity severity, std::string_view text) const {
    return wrap(severity_color(severity), text);
  }
  std::string bold(std::string_view text) const { return wrap(kBold, text); }

 private:
  std::string wrap(std::string_view code, std::string_view text) const {
    if (!enabled_) return std::string(text);
    return fmt::format("{}{}{}", code, text, kReset);
  }
  bool enabled_;
};

// Everything taken from source files (paths, names in messages, the excerpt)
// goes through escape_nonprintable: a terminal must show it, not obey it.
std::string text_location(const facts::Location& loc) {
  return fmt::format("{}:{}:{}", escape_nonprintable(loc.file), loc.line, loc.column);
}

// The primary line of a finding with an underline beneath its column range:
//    |
// 18 |         self.cache = DynamicCache()
//    |                      ^^^^^^^^^^^^^^
// Columns are 1-based bytes, end_column exclusive; the underline is laid out
// in code points and keeps tabs, so it lines up for ASCII and most UTF-8.
void append_excerpt(std::string& out, const facts::Location& loc, std::string_view line_text,
                    const TextStyle& style, Severity severity) {
  const std::string number = std::to_string(loc.line);
  const std::string gutter(number.size(), ' ');
  const std::size_t line_bytes = line_text.size();

  std::size_t start = loc.column == 0 ? 0 : loc.column - 1;
  if (loc.column == 0) {  // unknown column: underline the line's content
    start = std::min(line_text.find_first_not_of(" \t"), line_bytes);
  }
  start = std::min(start, line_bytes);
  std::size_t end = start + 1;
  if (loc.end_line > loc.line) {
    end = std::max(line_bytes, start + 1);
  } else if (loc.end_line == loc.line && loc.end_column > loc.column && loc.column != 0) {
    end = loc.end_column - 1;
  } else if (loc.column == 0) {
    end = std::max(line_bytes, start + 1);
  }

  // A long line shows a window around the span, its cuts marked.
  const LineWindow window = line_window(line_text, start);
  const std::string_view cut_before = window.cut_before ? kCutMarker : std::string_view();
  const std::size_t window_end = window.offset + window.text.size();
  end = std::min(end, std::max(window_end, start + 1));

  // Laid out on the escaped line, so an escape before the span widens the indent.
  std::string indent;
  const std::string prefix =
      std::string(cut_before) + escape_nonprintable(line_text.substr(window.offset, start - window.offset));
  const std::string span = escape_nonprintable(line_text.substr(start, end - start));
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    const auto byte = static_cast<unsigned char>(prefix[i]);
    if (prefix[i] == '\t') {
      indent += '\t';
    } else if ((byte & 0xC0U) != 0x80U) {
      indent += ' ';
    }
  }
  const std::size_t caret_count = std::max<std::size_t>(1, code_points_in_prefix(span, span.size()));
  const std::string carets(caret_count, '^');

  out += fmt::format("{} |\n", gutter);
  out += fmt::format("{} | {}{}{}\n", number, cut_before, escape_nonprintable(window.text),
                     window.cut_after ? kCutMarker : std::string_view());
  out += fmt::format("{} | {}{}\n", gutter, indent, style.severity(severity, carets));
}

void append_summary(std::string& out, const CheckResult& result, const Totals& totals) {
  if (result.findings.empty()) {
    out += "All checks passed";
    if (result.suppressed > 0) out += fmt::format("; {} suppressed", result.suppressed);
    out += ".\n";
  } else {
    out += fmt::format("Found {} ({})", plural(result.findings.size(), "finding", "findings"),
                       severity_breakdown(totals));
    if (result.suppressed > 0) out += fmt::format("; {} suppressed", result.suppressed);
    out += ".\n";
  }
  const std::size_t notes = notes_in(result.diagnostics);
  if (result.diagnostics.size() > notes)
    out += fmt::format("{} reported.\n",
                       plural(result.diagnostics.size() - notes, "input problem", "input problems"));
  if (notes > 0) out += fmt::format("{} about how files were analysed.\n", plural(notes, "note", "notes"));
}

void append_statistics(std::string& out, const std::vector<Finding>& findings, const TextStyle& style) {
  const std::vector<CodeCount> rows = code_statistics(findings);
  std::size_t count_width = 1;
  std::size_t code_width = 4;
  std::size_t name_width = 1;
  for (const CodeCount& row : rows) {
    count_width = std::max(count_width, std::to_string(row.count).size());
    code_width = std::max(code_width, row.code.size());
    name_width = std::max(name_width, row.name.size());
  }
  for (const CodeCount& row : rows) {
    // Pad before styling so escape codes do not disturb the alignment.
    const std::string code = fmt::format("{:<{}}", row.code, code_width);
    const std::string name = fmt::format("{:<{}}", row.name, name_width);
    out += fmt::format("{:>{}}  {}  {}  {}\n", row.count, count_width, style.bold(code), name,
                       style.severity(row.severity, to_string(row.severity)));
  }
}

}  // namespace

std::string render_text(const CheckResult& result, const ReportOptions& options) {
  const TextStyle style(options.color);
  const Totals totals = count_findings(result.findings);
  SourceLines sources;
  std::string out;

  if (!options.statistics) {
    for (const Finding& finding : result.findings) {
      out += fmt::format("{}: {}: {}", text_location(finding.loc),
                         style.severity(finding.severity, to_string(finding.severity)),
                         style.bold(finding.code));
      if (!finding.owner_class.empty()) out += fmt::format(" [{}]", escape_nonprintable(finding.owner_class));
      out += fmt::format(" {}\n", escape_nonprintable(finding.message));
      if (options.show_source) {
        if (auto line_text = sources.line(finding.loc.file, finding.loc.line)) {
          append_excerpt(out, finding.loc, *line_text, style, finding.severity);
        }
      }
      for (const RelatedLocation& related : finding.related) {
        out += fmt::format("  = note: {}: {}\n", text_location(related.loc),
                           escape_nonprintable(related.message));
      }
      if (options.show_source) out += '\n';
    }
  }
  for (const Diagnostic& diagnostic : result.diagnostics) {
    out += fmt::format("{}: {}[{}]: {}\n", escape_nonprintable(diagnostic_where(diagnostic)),
                       is_note(diagnostic) ? style.severity(Severity::Info, "note")
                                           : style.severity(Severity::Error, "error"),
                       diagnostic.kind, escape_nonprintable(diagnostic.message));
  }
  if (options.statistics) {
    if (!out.empty()) out += '\n';
    append_statistics(out, result.findings, style);
    // What the prefilter and the cache saved: bytes read against bytes the parser saw.
    const CheckStats& s = result.stats;
    if (s.bytes_read > 0)
      out += fmt::format("{} read ({} bytes); {} parsed ({} bytes, {:.0f}% of those read).\n",
                         plural(s.files_found + s.files_context, "file", "files"), s.bytes_read,
                         plural(s.files_parsed, "file", "files"), s.bytes_parsed,
                         100.0 * static_cast<double>(s.bytes_parsed) / static_cast<double>(s.bytes_read));
  }
  if (!out.empty() && !out.ends_with("\n\n")) out += '\n';
  append_summary(out, result, totals);
  return out;
}

}  // namespace kvlint::reporting
