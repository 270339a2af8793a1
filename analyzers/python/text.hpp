// String helpers of the Python front end: identifier boundaries, whitespace folding, and
// Python string-literal bodies. Private to analyzers/python/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvlint::python::detail {

inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
inline bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
inline bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
inline bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
inline bool contains(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}
inline bool is_uppercase_name(std::string_view s) {
  return !s.empty() && s[0] >= 'A' && s[0] <= 'Z';
}
// Where `needle` first occurs in `s` at or after `from`; npos when nowhere or `needle` is empty.
// memmem, not string_view::find: find scans for the first byte and compares at each.
std::size_t find_text(std::string_view s, std::string_view needle, std::size_t from = 0);
// Where `needle` occurs in `s`, in order (occurrences that do not overlap).
std::vector<uint32_t> find_all(std::string_view s, std::string_view needle);
// Where `word` first occurs in `s` at or after `from` with identifier boundaries on both sides.
std::size_t find_word(std::string_view s, std::string_view word, std::size_t from = 0);
// `word` occurs in `s` with identifier boundaries on both sides.
inline bool contains_word(std::string_view s, std::string_view word) {
  return find_word(s, word) != std::string_view::npos;
}
std::string lower(std::string_view s);
std::string_view trim(std::string_view s);
// Source text with whitespace runs folded to one space, cut to facts::kMaxTextBytes
// on a UTF-8 boundary. Stops reading once the limit is reached.
std::string fold_text(std::string_view s);
// A dotted name without the whitespace Python allows inside it (`a . b`).
std::string strip_spaces(std::string_view s);
// The value of a string literal's body (between the quotes): escapes decoded unless `raw`.
std::string decode_string_body(std::string_view body, bool raw);

}  // namespace kvlint::python::detail
