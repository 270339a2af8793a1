#include "tools/kvlint/reporters/report_support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "analyzers/facts/line_ends.hpp"
#include "rules/registry.hpp"
#include "tools/kvlint/engine/source_file.hpp"

namespace kvlint::reporting {

namespace {

// Appends valid UTF-8 `text` with its control characters escaped.
void append_escaped_valid(std::string& out, std::string_view text, bool keep_line_breaks) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const bool kept = byte == '\t' || (keep_line_breaks && (byte == '\n' || byte == '\r'));
    if ((byte < 0x20 && !kept) || byte == 0x7F) {
      out += fmt::format("\\x{:02x}", byte);
    } else if (byte == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[i + 1]));  // C1: U+0080..U+009F
      ++i;
    } else {
      out += text[i];
    }
  }
}

}  // namespace

std::string escape_nonprintable(std::string_view text, bool keep_line_breaks) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const std::optional<Utf8Error> bad = find_invalid_utf8(text);
    const std::size_t valid_length = bad ? bad->offset : text.size();
    append_escaped_valid(out, text.substr(0, valid_length), keep_line_breaks);
    if (!bad) break;
    out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[valid_length]));
    text.remove_prefix(valid_length + 1);
  }
  return out;
}

std::optional<std::string> non_utf8_bytes_hex(std::string_view text) {
  if (!find_invalid_utf8(text)) return std::nullopt;
  std::string hex;
  hex.reserve(text.size() * 2);
  for (char ch : text) hex += fmt::format("{:02x}", static_cast<unsigned char>(ch));
  return hex;
}

std::vector<MessagePart> split_code_spans(std::string_view message) {
  std::vector<MessagePart> parts;
  auto append_text = [&parts](std::string_view text) {
    if (text.empty()) return;
    if (parts.empty() || parts.back().code) parts.push_back({false, {}});
    parts.back().text += text;
  };
  auto run_length = [&message](std::size_t at) {
    std::size_t end = at;
    while (end < message.size() && message[end] == '`') ++end;
    return end - at;
  };
  std::size_t pos = 0;
  while (pos < message.size()) {
    const std::size_t open = message.find('`', pos);
    if (open == std::string_view::npos) {
      append_text(message.substr(pos));
      break;
    }
    append_text(message.substr(pos, open - pos));
    const std::size_t fence = run_length(open);
    // The closing run is the next run of exactly `fence` backticks.
    std::size_t close = open + fence;
    std::size_t found = std::string_view::npos;
    while ((close = message.find('`', close)) != std::string_view::npos) {
      const std::size_t length = run_length(close);
      if (length == fence) {
        found = close;
        break;
      }
      close += length;
    }
    if (found == std::string_view::npos) {
      append_text(message.substr(open, fence));
      pos = open + fence;
      continue;
    }
    std::string_view body = message.substr(open + fence, found - open - fence);
    // CommonMark strips one space on each side when both are there and the body is not all spaces.
    if (body.size() >= 2 && body.front() == ' ' && body.back() == ' ' &&
        body.find_first_not_of(' ') != std::string_view::npos)
      body = body.substr(1, body.size() - 2);
    parts.push_back({true, std::string(body)});
    pos = found + fence;
  }
  return parts;
}

Totals count_findings(const std::vector<Finding>& findings) {
  Totals totals;
  for (const Finding& finding : findings) {
    switch (finding.severity) {
      case Severity::Error:
        ++totals.errors;
        break;
      case Severity::Warning:
        ++totals.warnings;
        break;
      case Severity::Info:
        ++totals.infos;
        break;
    }
    ++totals.by_code[finding.code];
  }
  return totals;
}

std::vector<CodeCount> code_statistics(const std::vector<Finding>& findings) {
  std::map<std::string, CodeCount> by_code;
  for (const Finding& finding : findings) {
    auto [it, inserted] = by_code.try_emplace(finding.code);
    CodeCount& row = it->second;
    if (inserted) {
      row.code = finding.code;
      row.name = rule_name(finding.code);
      row.severity = finding.severity;
    } else if (finding.severity > row.severity) {
      row.severity = finding.severity;
    }
    ++row.count;
  }
  std::vector<CodeCount> rows;
  rows.reserve(by_code.size());
  for (auto& entry : by_code) rows.push_back(std::move(entry.second));
  std::stable_sort(rows.begin(), rows.end(), [](const CodeCount& a, const CodeCount& b) {
    if (a.count != b.count) return a.count > b.count;
    return a.code < b.code;
  });
  return rows;
}

std::string rule_name(std::string_view code) {
  // find_rule_info builds every rule per call; a report asks once per
  // finding, so the names are looked up in a table built once (immutable).
  static const std::map<std::string, std::string, std::less<>> names = [] {
    std::map<std::string, std::string, std::less<>> table;
    for (const RuleInfo& info : all_rule_infos()) table.emplace(info.code, info.name);
    return table;
  }();
  const auto it = names.find(code);
  return it != names.end() ? it->second : std::string();
}

std::size_t notes_in(const std::vector<Diagnostic>& diagnostics) {
  return static_cast<std::size_t>(std::count_if(diagnostics.begin(), diagnostics.end(), is_note));
}

std::string diagnostic_where(const Diagnostic& diagnostic) {
  if (is_note(diagnostic)) return diagnostic.path;
  return fmt::format("{}:{}:{}", diagnostic.path, diagnostic.line, diagnostic.column);
}

std::string plural(std::size_t count, std::string_view singular, std::string_view plural_form) {
  return std::to_string(count) + " " + std::string(count == 1 ? singular : plural_form);
}

std::string severity_breakdown(const Totals& totals) {
  std::string text;
  auto append = [&text](std::size_t count, std::string_view singular, std::string_view plural_form) {
    if (count == 0) return;
    if (!text.empty()) text += ", ";
    text += plural(count, singular, plural_form);
  };
  append(totals.errors, "error", "errors");
  append(totals.warnings, "warning", "warnings");
  append(totals.infos, "info", "info");
  return text;
}

SourceLines::SourceLines(std::optional<std::filesystem::path> root) {
  if (!root) return;
  std::error_code error;
  std::filesystem::path real = std::filesystem::canonical(*root, error);
  root_ = error ? std::filesystem::absolute(*root, error).lexically_normal() : real;
}

bool SourceLines::outside_root(const std::string& path) const {
  const auto it = files_.find(path);
  return it != files_.end() && it->second.outside_root;
}

std::optional<std::string_view> SourceLines::line(const std::string& path, std::uint32_t line_number) {
  auto [it, inserted] = files_.try_emplace(path);
  File& file = it->second;
  if (inserted && root_) {
    // The file's real path (links and `..` followed) must lie under the root.
    std::error_code error;
    const std::filesystem::path real = std::filesystem::canonical(path, error);
    const std::filesystem::path below = error ? std::filesystem::path() : real.lexically_relative(*root_);
    file.outside_root = !error && (below.empty() || *below.begin() == "..");
    if (error || file.outside_root) return std::nullopt;
  }
  if (inserted) {
    // Only regular files no larger than a source file may be: a path from a
    // findings file (`kvlint report`) can name a device or a FIFO, which would
    // never end or never open.
    std::error_code error;
    const auto status = std::filesystem::status(path, error);
    const bool regular = !error && std::filesystem::is_regular_file(status) &&
                         std::filesystem::file_size(path, error) <= kMaxSourceBytes && !error;
    std::ifstream stream;
    if (regular) stream.open(path, std::ios::binary);
    if (regular && stream) {
      file.content.assign(std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>());
      file.readable = !stream.bad();
    }
    if (file.readable) {
      // Lines end where the front ends end them: "\r\n", "\n" or a lone "\r".
      const std::string_view all(file.content);
      for (std::size_t start = 0; start < all.size(); start = facts::next_line_start(all, start))
        file.lines.push_back(all.substr(start, facts::line_end(all, start) - start));
    }
  }
  if (!file.readable || line_number == 0 || line_number > file.lines.size()) return std::nullopt;
  return file.lines[line_number - 1];
}

LineWindow line_window(std::string_view line, std::size_t start) {
  if (line.size() <= kExcerptWindowBytes) return {line, 0, false, false};
  constexpr std::size_t kBefore = kExcerptWindowBytes / 4;
  start = std::min(start, line.size());
  std::size_t begin = start > kBefore ? start - kBefore : 0;
  std::size_t stop = std::min(line.size(), begin + kExcerptWindowBytes);
  if (stop == line.size()) begin = line.size() - kExcerptWindowBytes;  // a span near the end
  auto continuation = [&](std::size_t i) {
    return i < line.size() && (static_cast<unsigned char>(line[i]) & 0xC0U) == 0x80U;
  };
  while (begin < start && continuation(begin)) ++begin;
  while (stop > begin && continuation(stop)) --stop;
  return {line.substr(begin, stop - begin), begin, begin > 0, stop < line.size()};
}

std::size_t code_points_in_prefix(std::string_view text, std::size_t byte_count) {
  std::size_t points = 0;
  for (std::size_t i = 0; i < byte_count; ++i) {
    if (i >= text.size()) {
      points += byte_count - i;
      break;
    }
    const auto byte = static_cast<unsigned char>(text[i]);
    if ((byte & 0xC0U) != 0x80U) ++points;  // not a UTF-8 continuation byte
  }
  return points;
}

std::uint32_t byte_to_code_point_column(std::string_view line_text, std::uint32_t byte_column) {
  if (byte_column == 0) return 0;
  return static_cast<std::uint32_t>(code_points_in_prefix(line_text, byte_column - 1) + 1);
}

}  // namespace kvlint::reporting
