#include "tools/kvlint/engine/fixes.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <map>
#include <set>

#include "analyzers/facts/line_ends.hpp"
#include "tools/kvlint/engine/result_cache.hpp"
#include "tools/kvlint/engine/source_file.hpp"

namespace kvlint {
namespace {

constexpr std::size_t kContextLines = 3;
// Beyond this many differing lines the diff is one hunk over the changed middle: fixes touch
// a few lines, so only a pathological input gets here.
constexpr std::size_t kMaxDiffDistance = 4096;

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    const std::size_t length = newline == std::string_view::npos ? text.size() : newline + 1;
    lines.push_back(text.substr(0, length));
    text.remove_prefix(length);
  }
  return lines;
}

enum class Op { Equal, Delete, Insert };

// Myers' O(ND) line diff; the edit script in order.
std::vector<Op> diff_ops(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  const auto n = static_cast<long>(a.size()), m = static_cast<long>(b.size());
  const long max = std::min(n + m, static_cast<long>(kMaxDiffDistance));
  const long offset = max + 1;
  std::vector<long> v(static_cast<std::size_t>(2 * max + 3), 0);
  std::vector<std::vector<long>> trace;
  long found = -1;
  for (long d = 0; d <= max && found < 0; ++d) {
    trace.push_back(v);
    for (long k = -d; k <= d; k += 2) {
      long x = (k == -d || (k != d && v[static_cast<std::size_t>(offset + k - 1)] <
                                          v[static_cast<std::size_t>(offset + k + 1)]))
                   ? v[static_cast<std::size_t>(offset + k + 1)]
                   : v[static_cast<std::size_t>(offset + k - 1)] + 1;
      long y = x - k;
      while (x < n && y < m && a[static_cast<std::size_t>(x)] == b[static_cast<std::size_t>(y)]) ++x, ++y;
      v[static_cast<std::size_t>(offset + k)] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  std::vector<Op> ops;
  if (found < 0) {  // too far apart: delete everything, insert everything
    ops.assign(a.size(), Op::Delete);
    ops.insert(ops.end(), b.size(), Op::Insert);
    return ops;
  }
  long x = n, y = m;
  for (long d = found; d > 0; --d) {
    const std::vector<long>& pv = trace[static_cast<std::size_t>(d)];
    const long k = x - y;
    const bool down = k == -d || (k != d && pv[static_cast<std::size_t>(offset + k - 1)] <
                                                pv[static_cast<std::size_t>(offset + k + 1)]);
    const long prev_k = down ? k + 1 : k - 1;
    const long prev_x = pv[static_cast<std::size_t>(offset + prev_k)];
    const long prev_y = prev_x - prev_k;
    while (x > prev_x && y > prev_y) {
      ops.push_back(Op::Equal);
      --x, --y;
    }
    ops.push_back(down ? Op::Insert : Op::Delete);
    x = prev_x, y = prev_y;
  }
  while (x > 0 && y > 0) {
    ops.push_back(Op::Equal);
    --x, --y;
  }
  std::reverse(ops.begin(), ops.end());
  return ops;
}

void append_line(std::string& out, char marker, std::string_view line) {
  out += marker;
  out += line;
  if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
}

std::string hunk_range(std::size_t start, std::size_t count) {
  // A hunk with no lines on a side names the line before it.
  return count == 1 ? fmt::format("{}", start + 1)
                    : fmt::format("{},{}", count == 0 ? start : start + 1, count);
}

// Two edits conflict when they overlap, or insert different text at one place.
bool conflicts(const FixEdit& a, const FixEdit& b) {
  if (a == b) return false;
  if (a.begin == a.end && b.begin == b.end) return a.begin == b.begin;
  return a.begin < b.end && b.begin < a.end;
}

// `text` with each "\n" that does not already end a "\r\n" written as `eol`.
std::string with_line_ending(std::string_view text, std::string_view eol) {
  if (eol == "\n" || text.find('\n') == std::string_view::npos) return std::string(text);
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' && (i == 0 || text[i - 1] != '\r'))
      out += eol;
    else
      out += text[i];
  }
  return out;
}

}  // namespace

std::string unified_diff(std::string_view path, std::string_view before, std::string_view after) {
  if (before == after) return {};
  const auto a = split_lines(before), b = split_lines(after);
  const std::vector<Op> ops = diff_ops(a, b);
  std::string out = fmt::format("--- {}\n+++ {}\n", path, path);
  std::size_t i = 0;
  while (i < ops.size()) {
    if (ops[i] == Op::Equal) {
      ++i;
      continue;
    }
    // A hunk: from kContextLines before this change to kContextLines after the last change
    // that lies within 2 * kContextLines equal lines of the previous one.
    std::size_t start = i >= kContextLines ? i - kContextLines : 0;
    while (start < i && ops[start] != Op::Equal) ++start;
    std::size_t end = i, equal_run = 0;
    for (std::size_t j = i; j < ops.size(); ++j) {
      if (ops[j] == Op::Equal) {
        if (++equal_run > 2 * kContextLines) break;
      } else {
        equal_run = 0;
        end = j + 1;
      }
    }
    const std::size_t stop = std::min(ops.size(), end + kContextLines);
    std::size_t a_pos = 0, b_pos = 0;
    for (std::size_t j = 0; j < start; ++j) {
      if (ops[j] != Op::Insert) ++a_pos;
      if (ops[j] != Op::Delete) ++b_pos;
    }
    std::string body;
    std::size_t a_count = 0, b_count = 0, ai = a_pos, bi = b_pos;
    for (std::size_t j = start; j < stop; ++j) {
      if (ops[j] == Op::Equal) {
        append_line(body, ' ', a[ai++]);
        ++bi, ++a_count, ++b_count;
      } else if (ops[j] == Op::Delete) {
        append_line(body, '-', a[ai++]);
        ++a_count;
      } else {
        append_line(body, '+', b[bi++]);
        ++b_count;
      }
    }
    out += fmt::format("@@ -{} +{} @@\n", hunk_range(a_pos, a_count), hunk_range(b_pos, b_count));
    out += body;
    i = stop;
  }
  return out;
}

FixOutcome apply_fixes(const CheckResult& result, const FixOptions& options) {
  FixOutcome outcome;
  std::set<std::string> unparsable;
  // A Python parse error, or a C++ file Clang could not compile (or whose degraded analysis met
  // a syntax error): what the fix was computed on may not be what the file means.
  for (const auto& d : result.diagnostics)
    if (d.kind == "parse-error" || d.kind == "compile-error") unparsable.insert(d.path);
  std::map<std::string, std::vector<const Finding*>> by_file;
  for (const auto& f : result.findings) {
    if (!f.fix || f.fix->edits.empty()) continue;
    if (!f.fix->safe && !options.unsafe) {
      ++outcome.unsafe_hidden;
      continue;
    }
    by_file[f.loc.file].push_back(&f);
  }
  for (const auto& [path, findings] : by_file) {
    if (unparsable.count(path)) {
      outcome.notes.push_back(fmt::format("{}: not fixed: the file has syntax errors", path));
      continue;
    }
    // As ruff does, a file the user made read-only is not rewritten (the rename-based write
    // would replace it whatever its mode, and as root access(2) says yes to anything).
    struct stat st {};
    const bool have_mode = ::stat(path.c_str(), &st) == 0;
    if (have_mode && ((st.st_mode & 0222) == 0 || ::access(path.c_str(), W_OK) != 0)) {
      outcome.notes.push_back(fmt::format("{}: not fixed: the file is read-only", path));
      continue;
    }
    const ReadOutcome read = read_source(path, path);
    const auto analysed = result.content_hashes.find(path);
    if (read.problem || analysed == result.content_hashes.end() ||
        XXH3_64bits(read.content.data(), read.content.size()) != analysed->second) {
      outcome.notes.push_back(fmt::format("{}: not fixed: the file changed since it was analysed", path));
      continue;
    }
    // Accept fixes in order; one that conflicts with an accepted edit waits for the next run.
    std::vector<FixEdit> accepted;
    std::size_t fixed_here = 0;
    for (const Finding* f : findings) {
      const auto& edits = f->fix->edits;
      const bool in_bounds = std::all_of(edits.begin(), edits.end(), [&](const FixEdit& e) {
        return e.begin <= e.end && e.end <= read.content.size();
      });
      const bool clashes = std::any_of(edits.begin(), edits.end(), [&](const FixEdit& e) {
        return std::any_of(accepted.begin(), accepted.end(),
                           [&](const FixEdit& o) { return conflicts(e, o); });
      });
      if (!in_bounds || clashes) continue;
      for (const auto& e : edits)
        if (std::find(accepted.begin(), accepted.end(), e) == accepted.end()) accepted.push_back(e);
      ++fixed_here;
    }
    if (accepted.empty()) continue;
    std::sort(accepted.begin(), accepted.end(), [](const FixEdit& x, const FixEdit& y) {
      return x.begin != y.begin ? x.begin > y.begin : x.end > y.end;
    });
    // Text a fix writes ends its lines with "\n"; a CRLF (or CR) file keeps its own ending.
    const std::string_view eol = facts::line_ending_of(read.content);
    std::string fixed = read.content;
    for (const auto& e : accepted)
      fixed.replace(e.begin, e.end - e.begin, with_line_ending(e.replacement, eol));
    if (fixed == read.content) continue;
    if (options.dry_run) {
      outcome.diff += unified_diff(path, read.content, fixed);
    } else {
      std::string error;
      if (!write_source_file(path, fixed, error)) {  // keeps owner, group, mode and hard links
        outcome.notes.push_back(fmt::format("{}: not fixed: {}", path, error));
        continue;
      }
    }
    outcome.fixed += fixed_here;
    ++outcome.files_changed;
  }
  return outcome;
}

}  // namespace kvlint
