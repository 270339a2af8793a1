// Helpers shared by the Python front end tests.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "analyzers/facts/facts.hpp"
#include "analyzers/facts/vocabulary.hpp"
#include "analyzers/python/python_frontend.hpp"

namespace kvlint::frontend_test {

inline facts::FileFacts analyze(std::string_view source, const facts::Vocabulary& vocabulary = {}) {
  return python::analyze("snippet.py", source, vocabulary, "pkg.snippet");
}

inline const facts::CacheSite* site_on_line(const facts::FileFacts& f, uint32_t line) {
  for (const auto& s : f.cache_sites)
    if (s.loc.line == line) return &s;
  return nullptr;
}

inline bool has_guard(const facts::Guards& guards, facts::Guard::Origin origin, std::string_view text,
                      bool negated) {
  return std::any_of(guards.begin(), guards.end(), [&](const facts::Guard& g) {
    return g.origin == origin && g.condition.text == text && g.negated == negated;
  });
}

// The bytes of `source` a span covers.
inline std::string_view slice(std::string_view source, facts::ByteSpan span) {
  return source.substr(span.begin, span.end - span.begin);
}

inline bool contains(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace kvlint::frontend_test
