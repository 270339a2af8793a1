// Parsing the text of a `kvlint:` suppression comment, shared by the front ends:
// `kvlint: ignore[CODES] reason` / `kvlint: ignore-file[CODES] reason` after the
// comment marker (`#` in Python, `//` or `/*` in C++). Any other `kvlint:` comment is
// kept as a malformed suppression (it suppresses nothing and the engine reports it).
// Header-only so the C++ front-end module needs no kvlint library.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "analyzers/facts/facts.hpp"

namespace kvlint::facts {

// `body` is the comment text after its marker, starting at byte `body_offset` of the
// file. Returns false when it is not a `kvlint:` comment at all; otherwise fills `s`
// (codes with their byte spans in the file, reason, or malformed).
inline bool parse_suppression_comment(std::string_view body, uint32_t body_offset, std::string_view marker,
                                      Suppression& s) {
  // Every ASCII blank separates codes, \f and \v included (Python's whitespace).
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; };
  auto trim = [&](std::string_view t) {
    while (!t.empty() && is_space(t.front())) t.remove_prefix(1);
    while (!t.empty() && is_space(t.back())) t.remove_suffix(1);
    return t;
  };
  std::string_view rest = trim(body);
  if (!rest.starts_with("kvlint:")) return false;
  rest = trim(rest.substr(7));
  std::string_view directive = rest.substr(0, std::min(rest.find('['), rest.size()));
  directive = directive.substr(0, std::min(directive.find_first_of(" \t:="), directive.size()));
  const std::string m(marker);
  if (directive == "ignore-file") {
    s.file_level = true;
  } else if (directive != "ignore") {
    s.malformed = directive.empty() ? "`" + m + " kvlint:` names no directive"
                                    : "unknown directive `" + std::string(directive) + "`";
    s.malformed += "; write `" + m + " kvlint: ignore[KV101] reason` or `" + m + " kvlint: ignore-file[KV101] reason`";
    return true;
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
          const auto begin = body_offset + static_cast<uint32_t>(code.data() - body.data());
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
  return true;
}

}  // namespace kvlint::facts
