// Shared pieces of the reporters: one renderer per format, totals, rule
// lookup, source lines and column conversion. Internal to the reporters.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/finding.hpp"
#include "tools/kvlint/reporters/reporters.hpp"

namespace kvlint::reporting {

std::string render_text(const CheckResult& result, const ReportOptions& options);
std::string render_json(const CheckResult& result, const ReportOptions& options);
std::string render_sarif(const CheckResult& result, const ReportOptions& options);
std::string render_github(const CheckResult& result, const ReportOptions& options);
std::string render_markdown(const CheckResult& result, const ReportOptions& options);
std::string render_html(const CheckResult& result, const ReportOptions& options);

// A message split into plain text and code spans. Messages mark code the
// CommonMark way (`name`, or ``a`b`` when the code holds a backtick); a
// backtick run with no closing run of the same length is plain text.
struct MessagePart {
  bool code = false;
  std::string text;  // without the fence
};
std::vector<MessagePart> split_code_spans(std::string_view message);

// Counts the reporters print: per severity and per code (ordered by code).
struct Totals {
  std::size_t errors = 0;
  std::size_t warnings = 0;
  std::size_t infos = 0;
  std::map<std::string, std::size_t> by_code;
};
Totals count_findings(const std::vector<Finding>& findings);

// One row of the statistics table; rows come sorted by count desc, then code.
struct CodeCount {
  std::string code;
  std::string name;   // empty when the code is unknown to the registry
  Severity severity;  // the severity the findings carried (the highest, if mixed)
  std::size_t count = 0;
};
std::vector<CodeCount> code_statistics(const std::vector<Finding>& findings);

// Rule name for a code, or empty when the registry does not know it.
std::string rule_name(std::string_view code);

// "1 finding" / "3 findings".
// A diagnostic that informs rather than reports a problem: degraded mode (the file was
// analysed, without full types; the usual CI case). Reported as a note about the whole file.
inline bool is_note(const Diagnostic& diagnostic) {
  return diagnostic.kind == "degraded";
}

std::size_t notes_in(const std::vector<Diagnostic>& diagnostics);

// Where a diagnostic is, as reports print it: `path:line:column`, or the path alone for a note.
std::string diagnostic_where(const Diagnostic& diagnostic);

std::string plural(std::size_t count, std::string_view singular, std::string_view plural_form);
// "(2 errors, 1 warning)" style breakdown without the parentheses; zero counts left out.
std::string severity_breakdown(const Totals& totals);

// Reads source files by path once per report, so many findings in one file
// cost one read. Files that cannot be read yield no lines.
class SourceLines {
 public:
  // `root`: read only files whose real path lies under it (paths from a findings file, which
  // may name any file on the machine); none: the paths came from this run's own analysis.
  explicit SourceLines(std::optional<std::filesystem::path> root = std::nullopt);
  // The 1-based line of `path` without its line terminator, or nullopt.
  std::optional<std::string_view> line(const std::string& path, std::uint32_t line_number);
  // Whether `path` was not read because it lies outside the root.
  bool outside_root(const std::string& path) const;

 private:
  struct File {
    bool readable = false;
    bool outside_root = false;
    std::string content;
    std::vector<std::string_view> lines;
  };
  std::optional<std::filesystem::path> root_;  // its real path
  std::map<std::string, File> files_;
};

// The part of a source line an excerpt shows: the whole line when it is short, else a window
// of at most kExcerptWindowBytes from a little before byte `start` (cut at UTF-8 boundaries), so
// a report stays linear in its findings however long their lines are.
inline constexpr std::size_t kExcerptWindowBytes = 240;
inline constexpr std::string_view kCutMarker = "\xE2\x80\xA6";  // "…", one column wide
struct LineWindow {
  std::string_view text;   // the bytes shown
  std::size_t offset = 0;  // where they start in the line
  bool cut_before = false;
  bool cut_after = false;
};
LineWindow line_window(std::string_view line, std::size_t start);

// `text` safe to print on a terminal: control characters (C0 but tab, DEL, C1)
// and bytes that are not UTF-8 become visible escapes (`\x1b`, `\u009b`,
// `\xff`), so a name in a source file cannot clear the screen or forge lines.
// `keep_line_breaks` leaves LF and CR for a format that encodes them itself.
std::string escape_nonprintable(std::string_view text, bool keep_line_breaks = false);

// The bytes of `text` as lowercase hex when `text` is not valid UTF-8 (a file
// name in another encoding), else nullopt: the JSON report keeps such paths
// recoverable beside the U+FFFD-repaired text.
std::optional<std::string> non_utf8_bytes_hex(std::string_view text);

// Number of UTF-8 code points in the first `byte_count` bytes of `text`
// (continuation bytes are not counted; bytes past the end count as one each).
std::size_t code_points_in_prefix(std::string_view text, std::size_t byte_count);

// Converts a 1-based byte column on `line_text` into a 1-based code point column.
std::uint32_t byte_to_code_point_column(std::string_view line_text, std::uint32_t byte_column);

}  // namespace kvlint::reporting
