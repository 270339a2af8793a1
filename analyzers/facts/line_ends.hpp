// Where lines end: at "\r\n", "\n" or a lone "\r", as Python reads source (universal
// newlines) and as Clang lexes it. Every place that counts lines (front ends, suppressions,
// fingerprints, excerpts, fixes) uses these, so a line number means the same line everywhere.
// Header-only so the C++ front-end module needs no kvlint library.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kvlint::facts {

// The byte where the line holding `from` ends (its terminator's first byte), or text.size().
inline std::size_t line_end(std::string_view text, std::size_t from) {
  const std::size_t at = text.find_first_of("\r\n", from);
  return at == std::string_view::npos ? text.size() : at;
}

// The first byte of the line after the one holding `from`, or text.size().
inline std::size_t next_line_start(std::string_view text, std::size_t from) {
  const std::size_t end = line_end(text, from);
  if (end == text.size()) return end;
  return end + (text[end] == '\r' && end + 1 < text.size() && text[end + 1] == '\n' ? 2 : 1);
}

// Whether `text` holds a "\r" that is not followed by "\n".
inline bool has_lone_cr(std::string_view text) {
  for (std::size_t at = text.find('\r'); at != std::string_view::npos; at = text.find('\r', at + 1))
    if (at + 1 == text.size() || text[at + 1] != '\n') return true;
  return false;
}

// `text` with each lone "\r" made "\n": the same length, so every byte offset still holds, for
// a parser that ends lines only at "\n".
inline std::string lone_cr_as_lf(std::string_view text) {
  std::string out(text);
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i] == '\r' && (i + 1 == out.size() || out[i + 1] != '\n')) out[i] = '\n';
  return out;
}

// The line ending a file uses (that of its first line; "\n" when it has none), for text
// written into it.
inline std::string_view line_ending_of(std::string_view text) {
  const std::size_t end = line_end(text, 0);
  if (end == text.size() || text[end] == '\n') return "\n";
  return end + 1 < text.size() && text[end + 1] == '\n' ? std::string_view("\r\n") : std::string_view("\r");
}

}  // namespace kvlint::facts
