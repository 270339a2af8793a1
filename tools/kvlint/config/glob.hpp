// Gitignore-style glob patterns, shared by `exclude`, `per-file-ignores` and
// .gitignore files. Segments are matched with fnmatch(3) (FNM_PATHNAME), `**`
// as a whole segment matches zero or more directories.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kvlint {

struct GlobPattern {
  std::string text;                   // as written, for messages
  std::vector<std::string> segments;  // pattern split on '/', leading/trailing '/' removed
  bool negated = false;               // leading '!'
  bool dir_only = false;              // trailing '/'
  bool anchored = false;              // a '/' at the start or in the middle: relative to the base dir
  // Set by parse: whether some segment is `**` (else a path matches only with as many
  // parts as segments), and which segments hold no glob character (compared as text).
  bool has_globstar = false;
  std::vector<char> literal;

  // Parses one pattern line; false for blank lines and comments.
  static bool parse(std::string_view line, GlobPattern& out);
  // Parses a glob from the configuration (`exclude`, `per-file-ignores`): as `parse`,
  // but a leading "./" means the config root, as users write it, and anchors the
  // pattern there ("./top.py" is "/top.py"). Git gives "./" no meaning in .gitignore.
  static bool parse_config(std::string_view text, GlobPattern& out);

  // `relative` is the path relative to the pattern's base directory, '/'-separated,
  // without a leading "./". `is_dir` tells whether it names a directory.
  bool matches(std::string_view relative, bool is_dir) const;
  // The same, the path given as split_path's parts (split once for a list of patterns).
  bool matches_parts(std::span<const std::string_view> parts, bool is_dir) const;
};

// A list of patterns where the last match wins (negations re-include).
// Returns +1 excluded, -1 re-included by a negation, 0 no pattern matched.
int match_patterns(const std::vector<GlobPattern>& patterns, std::string_view relative, bool is_dir);

// Whether the path or one of its ancestor directories is matched (excluded).
bool matches_path_or_ancestor(const std::vector<GlobPattern>& patterns, std::string_view relative,
                              bool is_dir);

// Splits "a/b/c" into its components (empty components dropped).
std::vector<std::string_view> split_path(std::string_view relative);

}  // namespace kvlint
