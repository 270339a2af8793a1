// What rules emit and reporters print.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzers/facts/facts.hpp"

namespace kvlint {

enum class Severity { Info = 0, Warning = 1, Error = 2 };

std::string_view to_string(Severity severity);
// Parses "info" | "warning" | "error"; false on anything else.
bool parse_severity(std::string_view text, Severity& out);

// `text` as a CommonMark code span, the way messages mark code (reporters split them with
// split_code_spans): the fence is a backtick run longer than any inside `text`, and a space pads
// a text that starts or ends with a backtick (or with a space at both ends, which a reader
// strips), so a name holding backticks (a spec's name is any string) stays one span.
std::string code_span(std::string_view text);

struct RelatedLocation {
  facts::Location loc;
  std::string message;  // "cache kept per request id here"
};

// One text replacement in the finding's file: bytes [begin, end) become `replacement`
// (begin == end inserts). Positions come from the facts, never from a syntax tree.
struct FixEdit {
  uint32_t begin = 0;
  uint32_t end = 0;
  std::string replacement;
  bool operator==(const FixEdit&) const = default;
};

// A change that resolves the finding. Safe fixes keep behaviour (removing an unused
// suppression); unsafe ones write code a reviewer must complete (a declaration skeleton).
struct Fix {
  std::string description;  // "remove the unused suppression"
  bool safe = true;
  std::vector<FixEdit> edits;  // non-overlapping, in the finding's file
  bool operator==(const Fix&) const = default;
};

struct Finding {
  std::string code;  // "KV202"
  Severity severity = Severity::Error;
  facts::Location loc;  // where the reviewer should look first
  std::string owner_class;
  std::string message;                   // one sentence a reviewer can act on
  std::vector<RelatedLocation> related;  // the evidence lines
  // The member the cache is kept in ("past_values_"; "cache" for `self.cache`), when the rule knows
  // it; "" otherwise. `kvlint confirm` matches it against the members a run saw holding memory.
  std::string member;
  // Stable across unrelated edits: hash of code, path, owner class and the
  // normalized text of the primary evidence (not line numbers). Set by the engine.
  std::string fingerprint;
  std::optional<Fix> fix;  // applied by `kvlint check --fix` (unsafe ones with --unsafe-fixes)
};

// A problem with an input that is not a finding: unreadable, not UTF-8,
// syntax errors, too large. The run goes on.
struct Diagnostic {
  std::string path;
  uint32_t line = 0;  // 0 when the whole file is concerned
  uint32_t column = 0;
  std::string kind;  // "read-error", "invalid-utf8", "parse-error", "binary", "too-large", "config"
  std::string message;
};

}  // namespace kvlint
