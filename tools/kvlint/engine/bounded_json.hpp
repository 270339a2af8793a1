// Reading JSON and CBOR documents kvlint did not necessarily write (baselines, reports given to
// `kvlint report`, confirm's harness lines, the cache) with their nesting bounded.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace kvlint {

// Deeper than anything kvlint reads or writes (a SARIF result nests about eight levels), far
// below what exhausts the stack: nlohmann parses iteratively, but copies, compares and dumps
// a document recursively, so a 200 KB file of nested arrays crashed a later copy.
inline constexpr std::size_t kMaxJsonNesting = 64;

enum class JsonEncoding { Text, Cbor };

// The document in `bytes`, or nullopt with `error` saying why: the reader's own message, or
// that it nests deeper than kMaxJsonNesting. The reader stops at the first level too deep, so
// a deep document costs no more than its first kMaxJsonNesting levels.
std::optional<nlohmann::json> parse_json_bounded(std::string_view bytes, std::string& error,
                                                 JsonEncoding encoding = JsonEncoding::Text);

}  // namespace kvlint
