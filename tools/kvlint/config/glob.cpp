#include "tools/kvlint/config/glob.hpp"

#include <fnmatch.h>

namespace kvlint {

std::vector<std::string_view> split_path(std::string_view relative) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= relative.size()) {
    std::size_t slash = relative.find('/', start);
    if (slash == std::string_view::npos) slash = relative.size();
    std::string_view part = relative.substr(start, slash - start);
    if (!part.empty() && part != ".") parts.push_back(part);
    start = slash + 1;
  }
  return parts;
}

bool GlobPattern::parse(std::string_view line, GlobPattern& out) {
  out = GlobPattern{};
  out.text = std::string(line);
  // Trailing spaces are ignored unless escaped with a backslash.
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == '\t')) {
    if (line.size() >= 2 && line[line.size() - 2] == '\\') break;
    line.remove_suffix(1);
  }
  if (line.empty() || line.front() == '#') return false;
  if (line.front() == '!') {
    out.negated = true;
    line.remove_prefix(1);
  } else if (line.size() >= 2 && line[0] == '\\' && (line[1] == '!' || line[1] == '#')) {
    line.remove_prefix(1);
  }
  if (!line.empty() && line.back() == '/') {
    out.dir_only = true;
    while (!line.empty() && line.back() == '/') line.remove_suffix(1);
  }
  if (line.empty()) return false;
  // A slash at the start or in the middle anchors the pattern to its base directory.
  out.anchored = line.find('/') != std::string_view::npos;
  std::size_t start = 0;
  while (start <= line.size()) {
    std::size_t slash = line.find('/', start);
    if (slash == std::string_view::npos) slash = line.size();
    std::string_view seg = line.substr(start, slash - start);
    if (!seg.empty()) out.segments.emplace_back(seg);
    start = slash + 1;
  }
  if (out.segments.empty()) return false;
  // An unanchored pattern matches at any depth: the same as a leading `**`.
  if (!out.anchored) out.segments.insert(out.segments.begin(), "**");
  for (const std::string& seg : out.segments) {
    out.has_globstar = out.has_globstar || seg == "**";
    // fnmatch(3) with FNM_PATHNAME matches a segment without `*?[\` only to itself.
    out.literal.push_back(seg.find_first_of("*?[\\") == std::string::npos ? 1 : 0);
  }
  return true;
}

bool GlobPattern::parse_config(std::string_view text, GlobPattern& out) {
  const std::string written(text);
  std::string normalized;
  if (text.starts_with('!')) {
    normalized = "!";
    text.remove_prefix(1);
  }
  bool root_relative = false;
  while (text.starts_with("./")) {
    text.remove_prefix(2);
    while (text.starts_with('/')) text.remove_prefix(1);
    root_relative = true;
  }
  if (root_relative) normalized += '/';
  normalized += text;
  if (!parse(normalized, out)) return false;
  out.text = written;
  return true;
}

bool GlobPattern::matches(std::string_view relative, bool is_dir) const {
  return matches_parts(split_path(relative), is_dir);
}

bool GlobPattern::matches_parts(std::span<const std::string_view> parts, bool is_dir) const {
  if (dir_only && !is_dir) return false;
  const std::size_t np = segments.size();
  const std::size_t nt = parts.size();
  // Without `**` each segment matches exactly one part: a .gitignore's `/build` is one
  // comparison per path, not a table (every file of a walk meets every pattern).
  if (!has_globstar && np != nt) return false;
  std::string nul_terminated;  // fnmatch wants C strings; parts are views into the path
  auto segment_matches = [&](std::size_t i, std::string_view part) {
    if (literal[i]) return part == segments[i];
    nul_terminated.assign(part);
    return fnmatch(segments[i].c_str(), nul_terminated.c_str(), FNM_PATHNAME) == 0;
  };
  if (!has_globstar) {
    for (std::size_t i = 0; i < np; ++i)
      if (!segment_matches(i, parts[i])) return false;
    return true;
  }
  // reach[i][j]: the first i pattern segments match the first j path parts.
  // Iterative DP over one row at a time (no recursion).
  std::vector<char> prev(nt + 1, 0), cur(nt + 1, 0);
  prev[0] = 1;
  for (std::size_t i = 1; i <= np; ++i) {
    std::fill(cur.begin(), cur.end(), 0);
    if (segments[i - 1] == "**") {
      // Zero or more parts; a trailing "/**" ("foo/**") matches everything inside
      // foo but not foo itself, as in git, so "!foo/keep.py" can re-include a file.
      const bool trailing = i == np && np > 1;
      char any = 0;
      for (std::size_t j = 0; j <= nt; ++j) {
        cur[j] = static_cast<char>(trailing ? any : (any | prev[j]));
        any = static_cast<char>(any | prev[j]);
      }
    } else {
      for (std::size_t j = 1; j <= nt; ++j)
        if (prev[j - 1]) cur[j] = segment_matches(i - 1, parts[j - 1]) ? 1 : 0;
    }
    std::swap(prev, cur);
  }
  return prev[nt] != 0;
}

namespace {

int verdict_of(const std::vector<GlobPattern>& patterns, std::span<const std::string_view> parts,
               bool is_dir) {
  int verdict = 0;
  for (const auto& p : patterns)
    if (p.matches_parts(parts, is_dir)) verdict = p.negated ? -1 : 1;
  return verdict;
}

}  // namespace

bool matches_path_or_ancestor(const std::vector<GlobPattern>& patterns, std::string_view relative,
                              bool is_dir) {
  const auto parts = split_path(relative);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    if (verdict_of(patterns, std::span(parts).first(i + 1), last ? is_dir : true) > 0) return true;
  }
  return false;
}

int match_patterns(const std::vector<GlobPattern>& patterns, std::string_view relative, bool is_dir) {
  return patterns.empty() ? 0 : verdict_of(patterns, split_path(relative), is_dir);
}

}  // namespace kvlint
