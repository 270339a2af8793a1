// `# kvlint: ignore[CODES] reason` comments -> facts::Suppression.
#include "analyzers/facts/suppression_comment.hpp"
#include "analyzers/python/walker.hpp"

namespace kvlint::python::detail {

// `# kvlint: ignore[CODES] reason` / `# kvlint: ignore-file[CODES] reason`. Any other
// `# kvlint:` comment is kept as a malformed suppression (it suppresses nothing and the
// engine reports it), so a mistyped one never silences more, or less, than it says.
void FileWalker::on_comment(TSNode node) {
  const std::string_view t = text(node);
  if (!contains(t, "kvlint")) return;
  facts::Suppression s;
  if (!facts::parse_suppression_comment(t.substr(1), ts_node_start_byte(node) + 1, "#", s))
    return;  // after '#'
  s.loc = loc(node);
  s.applies_to_line = applies_to_line(node);
  fill_suppression_spans(node, s);
  out_.suppressions.push_back(std::move(s));
}

// The comment's bytes, and what removing it removes: the whole line when nothing else is on
// it, else the comment and the blanks before it (so `x = 1  # kvlint: ...` becomes `x = 1`).
void FileWalker::fill_suppression_spans(TSNode comment, facts::Suppression& s) const {
  const uint32_t start = ts_node_start_byte(comment);
  uint32_t end = ts_node_end_byte(comment);
  // The grammar keeps a CRLF line's "\r" in the comment; it belongs to the line end.
  while (end > start && src_[end - 1] == '\r') --end;
  s.span = {start, end};
  uint32_t before = start;
  while (before > 0 && (src_[before - 1] == ' ' || src_[before - 1] == '\t')) --before;
  if (before == 0 || src_[before - 1] == '\n')
    s.removal = {before, after_line_end(end)};
  else
    s.removal = {before, end};
}

uint32_t FileWalker::applies_to_line(TSNode comment) {
  const uint32_t start = ts_node_start_byte(comment);
  const uint32_t line = ts_node_start_point(comment).row + 1;
  std::size_t line_start = src_.rfind('\n', start == 0 ? 0 : start - 1);
  line_start = (line_start == std::string_view::npos || start == 0) ? 0 : line_start + 1;
  if (!trim(src_.substr(line_start, start - line_start)).empty()) return line;  // trails code
  if (next_code_line_.from < start && start < next_code_line_.found_at) return next_code_line_.line;
  std::size_t pos = src_.find('\n', start);
  uint32_t current = line;
  while (pos != std::string_view::npos) {
    ++current;
    const std::size_t begin = pos + 1;
    const std::size_t end = src_.find('\n', begin);
    const std::string_view l =
        trim(src_.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
    if (!l.empty() && l.front() != '#') {
      next_code_line_ = {start, begin, current};
      return current;
    }
    pos = end;
  }
  next_code_line_ = {start, src_.size() + 1, 0};
  return 0;  // nothing after it
}

}  // namespace kvlint::python::detail
