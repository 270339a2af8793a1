// `# kvlint: ignore[CODES] reason` comments -> facts::Suppression.
#include "analyzers/python/walker.hpp"

namespace kvlint::python::detail {

// `# kvlint: ignore[CODES] reason` / `# kvlint: ignore-file[CODES] reason`. Any other
// `# kvlint:` comment is kept as a malformed suppression (it suppresses nothing and the
// engine reports it), so a mistyped one never silences more, or less, than it says.
void FileWalker::on_comment(TSNode node) {
  const std::string_view t = text(node);
  if (!contains(t, "kvlint")) return;
  std::string_view rest = trim(t.substr(1));  // after '#'
  if (!starts_with(rest, "kvlint:")) return;
  rest = trim(rest.substr(7));
  facts::Suppression s;
  s.loc = loc(node);
  s.applies_to_line = applies_to_line(node);
  fill_suppression_spans(node, s);
  std::string_view directive = rest.substr(0, std::min(rest.find('['), rest.size()));
  directive = directive.substr(0, std::min(directive.find_first_of(" \t:="), directive.size()));
  if (directive == "ignore-file") {
    s.file_level = true;
  } else if (directive != "ignore") {
    s.malformed = directive.empty() ? "`# kvlint:` names no directive"
                                    : "unknown directive `" + std::string(directive) + "`";
    s.malformed += "; write `# kvlint: ignore[KV101] reason` or `# kvlint: ignore-file[KV101] reason`";
    out_.suppressions.push_back(std::move(s));
    return;
  }
  rest = trim(rest.substr(directive.size()));
  const auto close = rest.find(']');
  if (rest.empty() || rest.front() != '[') {
    s.malformed = "`" + std::string(directive) + "` without `[CODES]` names no code; write `" +
                  std::string(directive) + "[KV101] reason`";
  } else if (close == std::string_view::npos) {
    s.malformed = "`[` is never closed; write `" + std::string(directive) + "[KV101] reason`";
  } else {
    const std::string_view inside = rest.substr(1, close - 1);
    std::size_t start = 0;
    for (std::size_t i = 0; i <= inside.size(); ++i) {
      if (i == inside.size() || inside[i] == ',' || is_space(inside[i])) {
        const std::string_view code = trim(inside.substr(start, i - start));
        if (!code.empty()) {
          s.codes.emplace_back(code);
          const auto begin = static_cast<uint32_t>(code.data() - src_.data());  // `code` views src_
          s.code_spans.push_back({begin, begin + static_cast<uint32_t>(code.size())});
        }
        start = i + 1;
      }
    }
    if (s.codes.empty()) s.malformed = "`[]` names no code";
    s.reason = std::string(trim(rest.substr(close + 1)));
  }
  if (!s.malformed.empty()) {
    s.codes.clear();
    s.code_spans.clear();
  }
  out_.suppressions.push_back(std::move(s));
}

// The comment's bytes, and what removing it removes: the whole line when nothing else is on
// it, else the comment and the blanks before it (so `x = 1  # kvlint: ...` becomes `x = 1`).
void FileWalker::fill_suppression_spans(TSNode comment, facts::Suppression& s) const {
  const uint32_t start = ts_node_start_byte(comment);
  const uint32_t end = ts_node_end_byte(comment);
  s.span = {start, end};
  uint32_t before = start;
  while (before > 0 && (src_[before - 1] == ' ' || src_[before - 1] == '\t')) --before;
  if (before == 0 || src_[before - 1] == '\n')
    s.removal = {before, after_line_end(end)};
  else
    s.removal = {before, end};
}

uint32_t FileWalker::applies_to_line(TSNode comment) const {
  const uint32_t start = ts_node_start_byte(comment);
  const uint32_t line = ts_node_start_point(comment).row + 1;
  std::size_t line_start = src_.rfind('\n', start == 0 ? 0 : start - 1);
  line_start = (line_start == std::string_view::npos || start == 0) ? 0 : line_start + 1;
  if (!trim(src_.substr(line_start, start - line_start)).empty()) return line;  // trails code
  std::size_t pos = src_.find('\n', start);
  uint32_t current = line;
  while (pos != std::string_view::npos) {
    ++current;
    const std::size_t begin = pos + 1;
    const std::size_t end = src_.find('\n', begin);
    const std::string_view l =
        trim(src_.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
    if (!l.empty() && l.front() != '#') return current;
    pos = end;
  }
  return 0;  // nothing after it
}

}  // namespace kvlint::python::detail
