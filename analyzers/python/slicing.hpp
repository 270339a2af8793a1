// Parse only what can matter: a byte scan splits a module into its top-level (column-0)
// statements, and a plan keeps the ones that can produce facts a rule reads (those that
// name an anchor, the module header, and the same-file bases of kept classes). The front
// end hands the kept ranges to tree-sitter as included ranges, so every location keeps
// its original line and column.
// A syntax error inside a left-out block goes unreported, as in a file the prefilter skips.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyzers/python/needle_search.hpp"

namespace kvlint::python {

// Bytes [begin, end) starting on line `row` (0-based) at column 0 and ending on line
// `end_row` at byte column `end_column` (0 unless the slice ends the file mid-line).
struct SourceSlice {
  uint32_t begin = 0;
  uint32_t end = 0;
  uint32_t row = 0;
  uint32_t end_row = 0;
  uint32_t end_column = 0;
};

// One top-level statement with what follows it up to the next one (blank and comment
// lines included): a decorated definition starts at its first decorator, and `else:`,
// `elif`, `except` and `finally` at column 0 stay with the statement they continue.
struct TopLevelBlock {
  enum class Kind : uint8_t { Other, Class, Function };
  SourceSlice slice;
  Kind kind = Kind::Other;
  std::string_view name;                       // the class or function name
  std::vector<std::string_view> header_names;  // identifiers between a class's name and its ':'
};

// The module's top-level blocks in order, covering every byte. Empty when the scan ends
// inside a string or bracket (a file the scan cannot split safely: parse it whole).
std::vector<TopLevelBlock> split_top_level(std::string_view source);

// What to parse. `kept` are merged, ordered ranges; `dropped` the rest. Nothing dropped
// means: parse the whole file as before.
struct SlicePlan {
  std::vector<SourceSlice> kept;
  std::vector<SourceSlice> dropped;
  bool sliced() const { return !dropped.empty(); }
  uint64_t kept_bytes() const;
};

// Keeps every block that is not a class or function definition (imports, constants,
// `if TYPE_CHECKING:` and try-import blocks), every definition whose bytes contain one of
// `anchors`, and, transitively, the same-file classes a kept class names in its header
// (its bases), so inheritance inside the file resolves as in a whole parse. Files below
// `minimum_dropped_bytes` of droppable text are not sliced (the ranges cost more than they save).
SlicePlan plan_slices(std::string_view source, const NeedleSearch& anchors,
                      uint32_t minimum_dropped_bytes = 4096);

}  // namespace kvlint::python
