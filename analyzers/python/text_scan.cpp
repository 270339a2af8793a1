#include "analyzers/python/text_scan.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "analyzers/python/text.hpp"

namespace kvlint::python {
namespace {

using detail::find_text;
using detail::find_word;
using detail::is_ident_char;
constexpr std::size_t npos = std::string_view::npos;

// Blanks, line breaks, backslash continuations and comments, from `at`.
std::size_t skip_trivia(std::string_view s, std::size_t at) {
  while (at < s.size()) {
    const char c = s[at];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\\') {
      ++at;
    } else if (c == '#') {
      while (at < s.size() && s[at] != '\n' && s[at] != '\r') ++at;
    } else {
      break;
    }
  }
  return at;
}

// Whether `at` is first on its line, after blanks.
bool first_on_line(std::string_view s, std::size_t at) {
  while (at > 0 && (s[at - 1] == ' ' || s[at - 1] == '\t' || s[at - 1] == '\f')) --at;
  return at == 0 || s[at - 1] == '\n' || s[at - 1] == '\r' || (at == 3 && s.substr(0, 3) == "\xEF\xBB\xBF");
}

bool word_at(std::string_view s, std::size_t at, std::string_view word) {
  return s.substr(at, word.size()) == word &&
         (at + word.size() == s.size() || !is_ident_char(s[at + word.size()]));
}

// What follows a `use_cache` name ending at `end`, or a "use_cache" string ending there (a dict
// key or a subscript, whose `]` may come first): `=` (not `==`) or `:`, then a literal `True`,
// in any parentheses.
bool set_to_true_after(std::string_view s, std::size_t end, bool string_key) {
  std::size_t at = skip_trivia(s, end);
  if (string_key && at < s.size() && s[at] == ']') at = skip_trivia(s, at + 1);
  if (at >= s.size()) return false;
  if (s[at] == '=') {
    if (at + 1 < s.size() && s[at + 1] == '=') return false;
  } else if (s[at] != ':') {
    return false;
  }
  at = skip_trivia(s, at + 1);
  while (at < s.size() && s[at] == '(') at = skip_trivia(s, at + 1);
  return word_at(s, at, "True");
}

// Some `use_cache` of the text, in code or quoted, is set to `True` as set_to_true_after reads
// it: the cheap test before the tokenizing one (most model code passes `use_cache=use_cache`).
bool any_set_to_true(std::string_view s) {
  constexpr std::string_view kName = "use_cache";
  for (std::size_t at = find_text(s, kName, 0); at != npos; at = find_text(s, kName, at + 1)) {
    const std::size_t end = at + kName.size();
    const char before = at > 0 ? s[at - 1] : ' ';
    const char after = end < s.size() ? s[end] : ' ';
    if (is_ident_char(before) || is_ident_char(after)) continue;
    const bool quoted = (before == '"' || before == '\'') && after == before;
    if (set_to_true_after(s, quoted ? end + 1 : end, quoted)) return true;
  }
  return false;
}

bool is_string_prefix(std::string_view word) {
  if (word.size() > 2) return false;
  for (char c : word)
    if (std::strchr("rRbBuUfFtT", c) == nullptr) return false;
  return true;
}

// Tokenizes as Python does, far enough to tell code from strings and comments and to know which
// brackets are a `def`'s parameter list (and where a `lambda`'s parameters run), and reports each
// `use_cache` name in code outside parameters, and each string whose body is `use_cache`, that is
// set to `True`.
bool tokenized_use_cache_true(std::string_view s) {
  enum class Open : unsigned char { Bracket, Parameters, LambdaParameters };
  std::vector<Open> open;
  std::string_view last_word, word_before;  // the last two tokens, when they were names
  bool last_was_word = false;
  auto note_token = [&](std::string_view word) {
    word_before = last_was_word ? last_word : std::string_view();
    last_word = word;
    last_was_word = !word.empty();
  };
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '#') {
      while (i < s.size() && s[i] != '\n' && s[i] != '\r') ++i;
      continue;
    }
    if (c == '\\' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      ++i;
      continue;
    }
    std::size_t string_start = npos;
    if (c == '"' || c == '\'') string_start = i;
    if (string_start == npos && is_ident_char(c)) {
      std::size_t end = i;
      while (end < s.size() && is_ident_char(s[end])) ++end;
      const std::string_view word = s.substr(i, end - i);
      if (end < s.size() && (s[end] == '"' || s[end] == '\'') && is_string_prefix(word)) {
        string_start = end;
      } else {
        if (word == "use_cache" && (open.empty() || open.back() == Open::Bracket) &&
            set_to_true_after(s, end, false))
          return true;
        if (word == "lambda") open.push_back(Open::LambdaParameters);
        note_token(word);
        i = end;
        continue;
      }
    }
    if (string_start != npos) {
      const char quote = s[string_start];
      const bool triple = s.substr(string_start, 3) == std::string(3, quote);
      std::size_t at = string_start + (triple ? 3 : 1);
      const std::size_t body = at;
      std::size_t body_end = npos;
      while (at < s.size()) {
        if (s[at] == '\\') {
          at += 2;
          continue;
        }
        if (s[at] == quote && (!triple || s.substr(at, 3) == std::string(3, quote))) {
          body_end = at;
          at += triple ? 3 : 1;
          break;
        }
        if (!triple && (s[at] == '\n' || s[at] == '\r')) break;  // unterminated: ends at the line
        ++at;
      }
      if (body_end != npos && s.substr(body, body_end - body) == "use_cache" &&
          set_to_true_after(s, at, true))
        return true;
      note_token({});
      i = at;
      continue;
    }
    switch (c) {
      case '(':
        open.push_back(word_before == "def" && last_was_word ? Open::Parameters : Open::Bracket);
        break;
      case '[':
      case '{':
        open.push_back(Open::Bracket);
        break;
      case ')':
      case ']':
      case '}':
        while (!open.empty() && open.back() == Open::LambdaParameters) open.pop_back();
        if (!open.empty()) open.pop_back();
        break;
      case ':':
        if (!open.empty() && open.back() == Open::LambdaParameters) open.pop_back();
        break;
      default:
        break;
    }
    note_token({});
    ++i;
  }
  return false;
}

// The text of the `class` statement header starting at `at` (the word `class`), to the `:` that
// ends it outside brackets.
std::string_view class_header(std::string_view s, std::size_t at) {
  int depth = 0;
  for (std::size_t i = at; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    if (c == ':' && depth == 0) return s.substr(at, i - at);
  }
  return s.substr(at);
}

}  // namespace

bool passes_use_cache_true(std::string_view source) {
  return any_set_to_true(source) && tokenized_use_cache_true(source);
}

bool may_build_cache(std::string_view source, const std::vector<std::string>& cache_classes) {
  // `name` as a word at `at`, followed by what builds or imports it.
  auto builds_at = [&](std::size_t at, std::string_view name) {
    const std::size_t end = at + name.size();
    if ((at > 0 && is_ident_char(source[at - 1])) || (end < source.size() && is_ident_char(source[end])))
      return false;
    const std::size_t next = skip_trivia(source, end);
    return (next < source.size() && (source[next] == '(' || source[next] == '.')) ||
           word_at(source, next, "as");
  };
  // Every name holding "Cache" is found through the first "Cache" in it: one pass over the text
  // for all of them, not one per name (a dozen passes over each file the prefilter passes).
  constexpr std::string_view kCache = "Cache";
  std::vector<std::pair<std::string_view, std::size_t>> by_cache;  // name, offset of its first "Cache"
  for (const std::string& name : cache_classes) {
    if (const std::size_t k = name.find(kCache); k != npos) {
      by_cache.emplace_back(name, k);
      continue;
    }
    for (std::size_t at = find_word(source, name); at != npos; at = find_word(source, name, at + 1))
      if (builds_at(at, name)) return true;
  }
  if (!by_cache.empty())
    for (std::size_t q = find_text(source, kCache); q != npos; q = find_text(source, kCache, q + 1))
      for (const auto& [name, k] : by_cache)
        if (q >= k && source.compare(q - k, name.size(), name) == 0 && builds_at(q - k, name)) return true;
  // `class MyCache(Cache):`, `class Paired(DynamicCache)`: a class statement first on its line.
  for (std::size_t at = find_word(source, "class"); at != npos; at = find_word(source, "class", at + 1)) {
    const std::size_t end = at + 5;
    if (!first_on_line(source, at) || end >= source.size() || (source[end] != ' ' && source[end] != '\t'))
      continue;
    const std::string_view header = class_header(source, at);
    if (find_word(header, "Cache") != npos) return true;
    for (const std::string& name : cache_classes)
      if (find_word(header, name) != npos) return true;
  }
  return false;
}

namespace {
// Growth by concatenation of what self keeps (`torch.cat([self.k, k], 2)`) too: such K/V has
// no allocation of its own.
constexpr std::string_view kRawKvAllocations[] = {
    "zeros(",         "empty(",           "full(",           "ones(", "_like(",
    "empty_strided(", "torch.cat([self.", "torch.cat((self."};
constexpr std::string_view kRawKvMarkers[] = {"scaled_dot_product_attention",
                                              "flash_attn",
                                              "k_cache",
                                              "v_cache",
                                              "kv_cache",
                                              "key_cache",
                                              "value_cache",
                                              "self.keys",
                                              "self.values",
                                              "self._keys",
                                              "self._values",
                                              "self.kv",
                                              "self._kv",
                                              "KV",
                                              "Kv",
                                              "_ring",
                                              "past_k",
                                              "past_v",
                                              "cache_k",
                                              "cache_v",
                                              "k_buf",
                                              "v_buf",
                                              "kv_buf",
                                              "key_values",
                                              "att_cache"};
}  // namespace

std::span<const std::string_view> raw_kv_allocations() {
  return kRawKvAllocations;
}
std::span<const std::string_view> raw_kv_markers() {
  return kRawKvMarkers;
}

bool may_hold_raw_kv(std::string_view source) {
  auto any = [&](const auto& needles) {
    return std::any_of(std::begin(needles), std::end(needles),
                       [&](std::string_view n) { return detail::find_text(source, n) != npos; });
  };
  return any(kRawKvAllocations) && any(kRawKvMarkers);
}

bool mentions(std::string_view source, std::string_view name) {
  return detail::contains_word(source, name);
}

bool defines_function(std::string_view source, std::string_view name) {
  for (std::size_t at = find_word(source, "def"); at != npos; at = find_word(source, "def", at + 1)) {
    std::size_t next = at + 3;
    if (next >= source.size() || (source[next] != ' ' && source[next] != '\t')) continue;
    while (next < source.size() && (source[next] == ' ' || source[next] == '\t')) ++next;
    if (word_at(source, next, name)) return true;
  }
  return false;
}

bool assigns(std::string_view source, std::string_view name) {
  for (std::size_t at = find_word(source, name); at != npos; at = find_word(source, name, at + 1)) {
    const std::size_t next = skip_trivia(source, at + name.size());
    if (next >= source.size()) break;
    if (source[next] == ':' ||
        (source[next] == '=' && (next + 1 == source.size() || source[next + 1] != '=')))
      return true;
  }
  return false;
}

bool hands_self_to(std::string_view source, std::string_view attribute) {
  for (std::size_t at = find_word(source, attribute); at != npos; at = find_word(source, attribute, at + 1)) {
    std::size_t next = skip_trivia(source, at + attribute.size());
    if (next >= source.size() || source[next] != '=' || (next + 1 < source.size() && source[next + 1] == '='))
      continue;
    next = skip_trivia(source, next + 1);
    while (next < source.size() && source[next] == '(') next = skip_trivia(source, next + 1);
    if (word_at(source, next, "self")) return true;
  }
  return false;
}

std::optional<std::vector<std::string>> names_handed_self(std::string_view source) {
  std::vector<std::string> names;
  for (std::size_t e = source.find('='); e != npos; e = source.find('=', e + 1)) {
    if (e + 1 < source.size() && source[e + 1] == '=') {
      ++e;  // `==`: neither `=` hands anything over
      continue;
    }
    std::size_t next = skip_trivia(source, e + 1);
    while (next < source.size() && source[next] == '(') next = skip_trivia(source, next + 1);
    if (!word_at(source, next, "self")) continue;
    // hands_self_to reaches this `=` from a name past the blanks skip_trivia skips; without a
    // line break among them no comment can sit there, so the name is the word before them.
    std::size_t end = e;
    while (end > 0 && (source[end - 1] == ' ' || source[end - 1] == '\t' || source[end - 1] == '\f' ||
                       source[end - 1] == '\\'))
      --end;
    if (end > 0 && (source[end - 1] == '\n' || source[end - 1] == '\r')) return std::nullopt;
    std::size_t begin = end;
    while (begin > 0 && is_ident_char(source[begin - 1])) --begin;
    if (begin < end) names.emplace_back(source.substr(begin, end - begin));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace kvlint::python
