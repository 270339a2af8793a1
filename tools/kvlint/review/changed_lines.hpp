// What a pull request changed, as git reports it: `kvlint check --diff REF`
// reports the findings that touch these lines and stays silent on the rest.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "rules/finding.hpp"

namespace kvlint::review {

// Git is missing, the path is outside a work tree, REF names no commit: exit 2.
class GitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The changed lines of one file in its current (working tree) version.
struct FileChanges {
  struct LineRange {
    uint32_t first = 0;  // 1-based, inclusive
    uint32_t last = 0;
  };
  std::vector<LineRange> added;  // lines added or rewritten
  // Lines were deleted between line N and N+1 (N may be 0: before the first line).
  std::vector<uint32_t> deleted_after;

  // True when a line of [first, last] was added or rewritten, or lines were
  // deleted inside the span (between two of its lines): a deletion inside a
  // declaration's body changes that declaration.
  bool touches(uint32_t first, uint32_t last) const;
};

// Changed files by absolute, symlink-resolved path.
class ChangedLines {
 public:
  void add(const std::filesystem::path& file, FileChanges changes);
  // A location sits on a changed line; paths are resolved like the keys.
  bool touches(const facts::Location& loc) const;
  // The finding's primary or any related location sits on a changed line.
  bool touches(const Finding& finding) const;
  // Any line of this file (a display path) changed.
  bool touches_file(const std::string& path) const;
  std::size_t file_count() const { return files_.size(); }

 private:
  const FileChanges* changes_of(const std::string& path) const;

  std::map<std::filesystem::path, FileChanges> files_;
  mutable std::map<std::string, std::filesystem::path> resolved_;  // display path -> key
};

// Reads `git diff --unified=0` output (the version after the change is the
// one that counts). Quoted paths (`"b/tab\there.py"`) are unquoted; deleted
// files and binary files have no lines. Paths come relative to `repo_root`.
ChangedLines parse_unified_diff(std::string_view diff_text, const std::filesystem::path& repo_root);

// The lines changed since the merge base of `ref` and HEAD, as `git diff
// REF...` shows them, plus the uncommitted edits in the working tree (staged
// or not) and untracked files that git does not ignore (every line new), in
// the git work tree that holds `inside` (a file or directory). Runs the real
// git from PATH with an argument vector (no shell); throws GitError.
ChangedLines changed_since_merge_base(const std::string& ref, const std::filesystem::path& inside);

}  // namespace kvlint::review
