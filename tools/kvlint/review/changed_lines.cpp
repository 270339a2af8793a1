#include "tools/kvlint/review/changed_lines.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <limits>
#include <system_error>

#include "tools/kvlint/confirm/child_process.hpp"

extern char** environ;  // NOLINT: POSIX

namespace kvlint::review {
namespace {

namespace fs = std::filesystem;

fs::path resolved(const fs::path& p) {
  std::error_code ec;
  fs::path absolute = fs::absolute(p, ec);
  if (ec) return p.lexically_normal();
  fs::path canonical = fs::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal() : canonical;
}

// `"b/a\tb.py"` -> `b/a<TAB>b.py`: git quotes paths with control characters,
// quotes and backslashes C-style (octal escapes for other bytes).
std::string unquote_git_path(std::string_view text) {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"') return std::string(text);
  text = text.substr(1, text.size() - 2);
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    const char c = text[++i];
    switch (c) {
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 't':
        out += '\t';
        break;
      case 'n':
        out += '\n';
        break;
      case 'v':
        out += '\v';
        break;
      case 'f':
        out += '\f';
        break;
      case 'r':
        out += '\r';
        break;
      default:
        if (c >= '0' && c <= '7' && i + 2 < text.size()) {
          const int value = (c - '0') * 64 + (text[i + 1] - '0') * 8 + (text[i + 2] - '0');
          out += static_cast<char>(static_cast<unsigned char>(value));
          i += 2;
        } else {
          out += c;  // \" and \\ stand for themselves
        }
    }
  }
  return out;
}

// "-12,3" or "+7" -> {start, count}; count defaults to 1.
bool parse_hunk_range(std::string_view text, uint32_t& start, uint32_t& count) {
  if (text.empty()) return false;
  text.remove_prefix(1);
  const std::size_t comma = text.find(',');
  const std::string_view first = text.substr(0, comma);
  if (std::from_chars(first.data(), first.data() + first.size(), start).ec != std::errc()) return false;
  count = 1;
  if (comma == std::string_view::npos) return true;
  const std::string_view second = text.substr(comma + 1);
  return std::from_chars(second.data(), second.data() + second.size(), count).ec == std::errc();
}

struct GitRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

GitRun run_git(const std::vector<std::string>& args) {
  confirm::ChildSpec spec;
  spec.argv = {"git"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  for (char** item = environ; item != nullptr && *item != nullptr; ++item) spec.env.emplace_back(*item);
  // A read-only look: never take the index lock another git command may hold.
  spec.env.emplace_back("GIT_OPTIONAL_LOCKS=0");
  spec.timeout = std::chrono::minutes(5);
  GitRun run;
  confirm::ChildCallbacks callbacks;
  callbacks.on_line = [&](std::string_view line, bool) {
    run.out += line;
    run.out += '\n';
  };
  const confirm::ChildExit exit = confirm::run_child(spec, callbacks);
  if (!exit.spawned) throw GitError(fmt::format("--diff needs git on PATH: {}", exit.spawn_error));
  if (exit.timed_out) throw GitError(fmt::format("--diff: `git {}` did not finish", args.front()));
  run.exit_code = exit.exit_code;
  run.err = exit.stderr_tail;
  return run;
}

std::string first_line(std::string_view text) {
  const std::size_t end = text.find('\n');
  return std::string(text.substr(0, end));
}

}  // namespace

bool FileChanges::touches(uint32_t first, uint32_t last) const {
  last = std::max(first, last);
  for (const LineRange& r : added)
    if (r.first <= last && first <= r.last) return true;
  for (uint32_t after : deleted_after)
    if (first <= after && after < last) return true;
  return false;
}

void ChangedLines::add(const fs::path& file, FileChanges changes) {
  FileChanges& slot = files_[resolved(file)];
  slot.added.insert(slot.added.end(), changes.added.begin(), changes.added.end());
  slot.deleted_after.insert(slot.deleted_after.end(), changes.deleted_after.begin(),
                            changes.deleted_after.end());
}

const FileChanges* ChangedLines::changes_of(const std::string& path) const {
  auto [it, inserted] = resolved_.try_emplace(path);
  if (inserted) it->second = resolved(path);
  auto file = files_.find(it->second);
  return file == files_.end() ? nullptr : &file->second;
}

bool ChangedLines::touches(const facts::Location& loc) const {
  if (loc.file.empty() || loc.line == 0) return false;
  const FileChanges* changes = changes_of(loc.file);
  return changes != nullptr && changes->touches(loc.line, loc.end_line);
}

bool ChangedLines::touches_file(const std::string& path) const {
  return !path.empty() && changes_of(path) != nullptr;
}

bool ChangedLines::touches(const Finding& finding) const {
  if (touches(finding.loc)) return true;
  return std::any_of(finding.related.begin(), finding.related.end(),
                     [&](const RelatedLocation& r) { return touches(r.loc); });
}

ChangedLines parse_unified_diff(std::string_view diff_text, const fs::path& repo_root) {
  ChangedLines out;
  std::string current;  // path of the file whose hunks follow, relative to the root
  FileChanges changes;
  uint32_t old_left = 0, new_left = 0;  // lines of the current hunk still to skip
  auto flush = [&] {
    if (!current.empty()) out.add(repo_root / current, std::move(changes));
    current.clear();
    changes = FileChanges{};
  };
  std::size_t pos = 0;
  while (pos < diff_text.size()) {
    std::size_t end = diff_text.find('\n', pos);
    if (end == std::string_view::npos) end = diff_text.size();
    const std::string_view line = diff_text.substr(pos, end - pos);
    pos = end + 1;
    // Inside a hunk every line is content, even one that reads "+++ b/x".
    if (old_left > 0 || new_left > 0) {
      if (line.starts_with('-') && old_left > 0) {
        --old_left;
        continue;
      }
      if (line.starts_with('+') && new_left > 0) {
        --new_left;
        continue;
      }
      if (line.starts_with('\\')) continue;  // "\ No newline at end of file"
      old_left = new_left = 0;               // not content after all: read it as a header
    }
    if (line.starts_with("diff ")) {
      flush();
    } else if (line.starts_with("+++ ")) {
      std::string_view name = line.substr(4);
      // A name holding a space ends with a TAB (GNU diff's convention, which git follows); a
      // name holding a TAB itself is quoted.
      if (!name.starts_with('"') && name.ends_with('\t')) name.remove_suffix(1);
      std::string path = unquote_git_path(name);
      if (path == "/dev/null") {
        current.clear();  // deleted: nothing of it is left to report on
      } else {
        current = path.starts_with("b/") ? path.substr(2) : path;
      }
    } else if (line.starts_with("@@ ") && !current.empty()) {
      const std::string_view ranges = line.substr(3);
      const std::size_t space = ranges.find(' ');
      const std::size_t space2 = ranges.find(' ', space + 1);
      uint32_t old_start = 0, old_count = 0, new_start = 0, new_count = 0;
      if (space == std::string_view::npos ||
          !parse_hunk_range(ranges.substr(0, space), old_start, old_count) ||
          !parse_hunk_range(ranges.substr(space + 1, space2 - space - 1), new_start, new_count))
        continue;
      if (new_count > 0)
        changes.added.push_back({new_start, new_start + new_count - 1});
      else
        changes.deleted_after.push_back(new_start);
      old_left = old_count;
      new_left = new_count;
    }
  }
  flush();
  return out;
}

ChangedLines changed_since_merge_base(const std::string& ref, const fs::path& inside) {
  std::error_code ec;
  fs::path dir = fs::is_directory(inside, ec) ? inside : inside.parent_path();
  if (dir.empty()) dir = ".";
  const GitRun top = run_git({"-C", dir.string(), "rev-parse", "--show-toplevel"});
  if (top.exit_code != 0)
    throw GitError(fmt::format("--diff needs a git work tree, and {} is not inside one ({})", dir.string(),
                               first_line(top.err)));
  const fs::path root = first_line(top.out);
  const std::string root_arg = root.string();

  if (ref.empty() ||
      run_git({"-C", root_arg, "rev-parse", "--verify", "--quiet", "--end-of-options", ref + "^{commit}"})
              .exit_code != 0)
    throw GitError(
        fmt::format("--diff: unknown revision '{}' (a branch, tag or commit of {}; in CI, "
                    "fetch it first, e.g. `git fetch origin main` and --diff origin/main)",
                    ref, root_arg));
  const GitRun base = run_git({"-C", root_arg, "merge-base", "--end-of-options", ref, "HEAD"});
  if (base.exit_code != 0)
    throw GitError(
        fmt::format("--diff: '{}' and HEAD have no merge base ({}); in a shallow clone, fetch "
                    "more history (actions/checkout with fetch-depth: 0)",
                    ref, base.err.empty() ? "unrelated histories" : first_line(base.err)));

  // BASE against the working tree: the commits since BASE plus uncommitted edits. --text: a
  // file `.gitattributes` marks `-diff` (or git takes for binary) still gets its hunks, so a
  // change cannot switch the gate off by declaring its files binary.
  const GitRun diff =
      run_git({"-C", root_arg, "-c", "core.quotePath=false", "diff", "--no-color", "--no-ext-diff",
               "--no-textconv", "--text", "--unified=0", "--find-renames", "--ignore-submodules",
               "--src-prefix=a/", "--dst-prefix=b/", first_line(base.out), "--"});
  if (diff.exit_code != 0) throw GitError(fmt::format("--diff: git diff failed: {}", first_line(diff.err)));
  ChangedLines changed = parse_unified_diff(diff.out, root);

  const GitRun untracked = run_git({"-C", root_arg, "ls-files", "-z", "--others", "--exclude-standard"});
  if (untracked.exit_code != 0)
    throw GitError(fmt::format("--diff: git ls-files failed: {}", first_line(untracked.err)));
  // NUL-separated; the line reader split at any newline in a name, put back above.
  std::string names = untracked.out;
  if (!names.empty() && names.back() == '\n') names.pop_back();
  std::size_t start = 0;
  while (start < names.size()) {
    std::size_t end = names.find('\0', start);
    if (end == std::string::npos) end = names.size();
    if (end > start) {
      FileChanges whole;
      whole.added.push_back({1, std::numeric_limits<uint32_t>::max()});
      changed.add(root / names.substr(start, end - start), std::move(whole));
    }
    start = end + 1;
  }
  return changed;
}

}  // namespace kvlint::review
