// String helpers of the Python front end (see text.hpp).
#include "analyzers/python/text.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "analyzers/facts/facts.hpp"

namespace kvlint::python::detail {

std::size_t find_text(std::string_view s, std::string_view needle, std::size_t from) {
  if (from >= s.size() || needle.empty()) return std::string_view::npos;
  const void* hit = ::memmem(s.data() + from, s.size() - from, needle.data(), needle.size());
  return hit ? static_cast<std::size_t>(static_cast<const char*>(hit) - s.data()) : std::string_view::npos;
}
std::vector<uint32_t> find_all(std::string_view s, std::string_view needle) {
  std::vector<uint32_t> at;
  for (std::size_t i = find_text(s, needle); i != std::string_view::npos;
       i = find_text(s, needle, i + needle.size()))
    at.push_back(static_cast<uint32_t>(i));
  return at;
}
std::size_t find_word(std::string_view s, std::string_view word, std::size_t from) {
  for (std::size_t at = find_text(s, word, from); at != std::string_view::npos;
       at = find_text(s, word, at + 1)) {
    const std::size_t end = at + word.size();
    if ((at == 0 || !is_ident_char(s[at - 1])) && (end == s.size() || !is_ident_char(s[end]))) return at;
  }
  return std::string_view::npos;
}
std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}
std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string fold_text(std::string_view s) {
  std::string out;
  out.reserve(std::min(s.size(), facts::kMaxTextBytes));
  bool pending_space = false;
  for (char c : s) {
    if (is_space(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
    if (out.size() >= facts::kMaxTextBytes) break;
  }
  if (out.size() > facts::kMaxTextBytes) out.resize(facts::kMaxTextBytes);
  // Drop a multi-byte character cut in half.
  std::size_t lead = out.size();
  while (lead > 0 && (static_cast<unsigned char>(out[lead - 1]) & 0xC0) == 0x80) --lead;
  if (lead > 0 && static_cast<unsigned char>(out[lead - 1]) >= 0xC0) {
    const auto b = static_cast<unsigned char>(out[lead - 1]);
    const std::size_t need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
    if (out.size() - (lead - 1) < need) out.resize(lead - 1);
  }
  return out;
}
std::string strip_spaces(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s)
    if (!is_space(c)) out.push_back(c);
  return out;
}

std::string decode_string_body(std::string_view body, bool raw) {
  if (raw) return std::string(body);
  std::string out;
  out.reserve(body.size());
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out.push_back(body[i]);
      continue;
    }
    const char e = body[++i];
    switch (e) {
      case 'n':
        out.push_back('\n');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case '\\':
        out.push_back('\\');
        break;
      case '\'':
        out.push_back('\'');
        break;
      case '"':
        out.push_back('"');
        break;
      case '\n':
        break;  // line continuation
      default:
        out.push_back('\\');
        out.push_back(e);
    }
  }
  return out;
}

}  // namespace kvlint::python::detail
