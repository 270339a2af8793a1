// The top-level statement scan and the slice plan (slicing.hpp). One pass over the bytes,
// tracking strings (single, triple, any prefix), comments, brackets and backslash
// continuations, so only a line that starts a new top-level statement opens a block.
#include "analyzers/python/slicing.hpp"

#include <string.h>

#include <algorithm>
#include <unordered_map>

namespace kvlint::python {
namespace {

bool is_identifier_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool is_identifier_char(char c) {
  return is_identifier_start(c) || (c >= '0' && c <= '9');
}

std::string_view word_at(std::string_view s, std::size_t at) {
  std::size_t end = at;
  while (end < s.size() && is_identifier_char(s[end])) ++end;
  return s.substr(at, end - at);
}

std::size_t skip_blanks(std::string_view s, std::size_t at) {
  while (at < s.size() && (s[at] == ' ' || s[at] == '\t')) ++at;
  return at;
}

// Identifiers from `at` to the header's ':' at bracket depth 0 (a superset of the bases:
// keyword names and subscripts come along, which only keeps a little more).
std::vector<std::string_view> header_names(std::string_view s, std::size_t at) {
  std::vector<std::string_view> names;
  int depth = 0;
  const std::size_t limit = std::min(s.size(), at + 4096);
  while (at < limit) {
    const char c = s[at];
    if (c == ':' && depth == 0) break;
    if (c == '\n' && depth == 0) break;
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    if (is_identifier_start(c) && (at == 0 || !is_identifier_char(s[at - 1]))) {
      const std::string_view w = word_at(s, at);
      names.push_back(w);
      at += w.size();
      continue;
    }
    ++at;
  }
  return names;
}

bool is_continuation_keyword(std::string_view word) {
  return word == "else" || word == "elif" || word == "except" || word == "finally";
}

}  // namespace

uint64_t SlicePlan::kept_bytes() const {
  uint64_t total = 0;
  for (const auto& k : kept) total += k.end - k.begin;
  return total;
}

std::vector<TopLevelBlock> split_top_level(std::string_view s) {
  std::vector<TopLevelBlock> blocks;
  if (s.size() >= UINT32_MAX) return {};
  int depth = 0;
  char quote = 0;          // the open string's quote character, 0 outside strings
  bool triple = false;     // the open string is triple-quoted
  bool continued = false;  // the previous line ended in a backslash outside strings
  bool pending_decorator = false;
  uint32_t row = 0;
  std::size_t at = 0;
  while (at < s.size()) {
    // At a line start.
    const char first = s[at];
    if (quote == 0 && depth == 0 && !continued && first != ' ' && first != '\t' && first != '\n' &&
        first != '\r' && first != '#' && first != '\f') {
      const std::string_view word = word_at(s, at);
      const std::size_t after = skip_blanks(s, at + word.size());
      TopLevelBlock::Kind kind = TopLevelBlock::Kind::Other;
      std::string_view name;
      std::size_t name_end = 0;
      if (word == "class" && after > at + word.size()) {
        kind = TopLevelBlock::Kind::Class;
        name = word_at(s, after);
        name_end = after + name.size();
      } else if (word == "def" && after > at + word.size()) {
        kind = TopLevelBlock::Kind::Function;
        name = word_at(s, after);
      } else if (word == "async" && after > at + word.size() && word_at(s, after) == "def") {
        kind = TopLevelBlock::Kind::Function;
        name = word_at(s, skip_blanks(s, after + 3));
      }
      const bool decorator = first == '@';
      if (decorator && pending_decorator) {
        // another decorator of the same definition
      } else if (pending_decorator && kind != TopLevelBlock::Kind::Other) {
        blocks.back().kind = kind;
        blocks.back().name = name;
        if (kind == TopLevelBlock::Kind::Class) blocks.back().header_names = header_names(s, name_end);
        pending_decorator = false;
      } else if (!blocks.empty() && !decorator && is_continuation_keyword(word)) {
        // `else:` / `except ...:` continue the block before
      } else {
        TopLevelBlock block;
        block.slice = {static_cast<uint32_t>(at), 0, row};
        block.kind = kind;
        block.name = name;
        if (kind == TopLevelBlock::Kind::Class) block.header_names = header_names(s, name_end);
        blocks.push_back(std::move(block));
        pending_decorator = decorator;
      }
    }
    continued = false;
    // The rest of the line (and of any string or bracket that spans lines, line by line).
    while (at < s.size()) {
      const char c = s[at];
      if (quote != 0) {
        if (c == '\\') {
          const std::size_t newline = at + 1 < s.size() && s[at + 1] == '\r' ? at + 2 : at + 1;
          if (newline < s.size() && s[newline] == '\n') {
            at = newline + 1;
            ++row;
            goto next_line;
          }
          at += 2;
          continue;
        }
        if (c == '\n') {
          ++at;
          ++row;
          if (!triple) quote = 0;  // an unterminated one-line string: a syntax error, stop it here
          goto next_line;
        }
        if (c == quote) {
          if (!triple) {
            quote = 0;
          } else if (at + 2 < s.size() && s[at + 1] == quote && s[at + 2] == quote) {
            quote = 0;
            at += 3;
            continue;
          }
        }
        ++at;
        continue;
      }
      switch (c) {
        case '#': {
          const void* nl = ::memchr(s.data() + at, '\n', s.size() - at);
          at = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - s.data()) : s.size();
          continue;
        }
        case '\'':
        case '"':
          quote = c;
          triple = at + 2 < s.size() && s[at + 1] == c && s[at + 2] == c;
          at += triple ? 3 : 1;
          continue;
        case '(':
        case '[':
        case '{':
          ++depth;
          break;
        case ')':
        case ']':
        case '}':
          if (depth > 0) --depth;
          break;
        case '\\':
          if (at + 1 < s.size() && s[at + 1] == '\n') {
            continued = true;
            at += 2;
            ++row;
            goto next_line;
          }
          if (at + 2 < s.size() && s[at + 1] == '\r' && s[at + 2] == '\n') {
            continued = true;
            at += 3;
            ++row;
            goto next_line;
          }
          break;
        case '\r':
          // A lone carriage return ends a line for Python but not for our row count: do not slice.
          if (at + 1 >= s.size() || s[at + 1] != '\n') return {};
          break;
        case '\n':
          ++at;
          ++row;
          goto next_line;
        default:
          break;
      }
      ++at;
    }
  next_line:;
  }
  if (quote != 0 || depth != 0 || continued) return {};
  const std::size_t last_newline = s.rfind('\n');
  const auto last_column =
      static_cast<uint32_t>(last_newline == std::string_view::npos ? s.size() : s.size() - last_newline - 1);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const bool last = i + 1 == blocks.size();
    blocks[i].slice.end = last ? static_cast<uint32_t>(s.size()) : blocks[i + 1].slice.begin;
    blocks[i].slice.end_row = last ? row : blocks[i + 1].slice.row;
    blocks[i].slice.end_column = last ? last_column : 0;
  }
  if (!blocks.empty() && blocks.front().slice.begin != 0) {
    // Leading blank or comment lines belong to the first block.
    blocks.front().slice.begin = 0;
    blocks.front().slice.row = 0;
  }
  return blocks;
}

SlicePlan plan_slices(std::string_view source, const NeedleSearch& anchors, uint32_t minimum_dropped_bytes) {
  SlicePlan plan;
  const std::vector<TopLevelBlock> blocks = split_top_level(source);
  if (blocks.size() < 2) return plan;
  std::vector<char> keep(blocks.size(), 0);
  for (std::size_t i = 0; i < blocks.size(); ++i) keep[i] = blocks[i].kind == TopLevelBlock::Kind::Other;
  // An anchor's occurrence marks its block; the search resumes after that block.
  auto block_of = [&](std::size_t offset) {
    auto it = std::upper_bound(blocks.begin(), blocks.end(), offset,
                               [](std::size_t o, const TopLevelBlock& b) { return o < b.slice.begin; });
    return static_cast<std::size_t>(it - blocks.begin()) - 1;
  };
  for (std::size_t at = anchors.find(source); at != std::string_view::npos;) {
    const std::size_t b = block_of(at);
    keep[b] = 1;
    at = anchors.find(source, blocks[b].slice.end);
  }
  // Same-file bases of kept classes, transitively.
  std::unordered_multimap<std::string_view, std::size_t> classes;
  for (std::size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].kind == TopLevelBlock::Kind::Class && !blocks[i].name.empty())
      classes.emplace(blocks[i].name, i);
  std::vector<std::size_t> work;
  for (std::size_t i = 0; i < blocks.size(); ++i)
    if (keep[i] && blocks[i].kind == TopLevelBlock::Kind::Class) work.push_back(i);
  while (!work.empty()) {
    const std::size_t i = work.back();
    work.pop_back();
    for (std::string_view name : blocks[i].header_names) {
      auto [first, last] = classes.equal_range(name);
      for (auto it = first; it != last; ++it)
        if (!keep[it->second]) {
          keep[it->second] = 1;
          work.push_back(it->second);
        }
    }
  }
  uint64_t dropped_bytes = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i)
    if (!keep[i]) dropped_bytes += blocks[i].slice.end - blocks[i].slice.begin;
  if (dropped_bytes < minimum_dropped_bytes) return plan;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    auto& target = keep[i] ? plan.kept : plan.dropped;
    if (!target.empty() && target.back().end == blocks[i].slice.begin) {
      target.back().end = blocks[i].slice.end;
      target.back().end_row = blocks[i].slice.end_row;
      target.back().end_column = blocks[i].slice.end_column;
    } else {
      target.push_back(blocks[i].slice);
    }
  }
  return plan;
}

}  // namespace kvlint::python
