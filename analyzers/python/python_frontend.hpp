// Python front end: tree-sitter-python syntax -> facts. Knows syntax, never rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "analyzers/facts/facts.hpp"
#include "analyzers/facts/vocabulary.hpp"

namespace kvlint::python {

// Analyses one file's bytes. Never throws on bad input: syntax errors become
// FileFacts::parse_problems and facts from the valid parts are still returned.
// Iterative (no recursion on the tree), so any nesting depth is safe.
// `module_name` is the dotted module path ("pkg.models.decoder"), may be empty.
facts::FileFacts analyze(std::string_view path, std::string_view source, const facts::Vocabulary& vocabulary,
                         std::string module_name = {});

// The work one file may take, in analysis steps: a syntax node visited by any walk, or a
// byte of source scanned by a text test. The analysis is linear in the file, so real files
// stay far below the budget (transformers 4.57.6 and vllm-omni 0.30.0, 3,773 files: 0.5-0.6
// steps per byte on average, at most 1.2 for any file over 2 KB); a file that
// reaches it is cut off with a parse problem ("analysis stopped here: ...") and keeps the
// facts found before that point, so one pathological file cannot stall a run.
struct AnalysisBudget {
  uint64_t steps_per_byte = 64;
  uint64_t minimum_steps = 4'000'000;  // small files: never the limit
  uint64_t for_source(std::size_t bytes) const;
};

// Whether this front end records a facts::Construction of a class with this simple name:
// it reads `Cls(...)` and `Cls.factory(...)` as constructions only for a capitalised class
// name (lowercase callees are functions; `torch.cuda.graph(...)` is a context manager).
bool records_constructions_of(std::string_view simple_class_name);

// Why the grammar built in cannot serve this front end (an ABI the core cannot load, or a node
// kind or field the walk reads by id that the grammar lacks), empty when it can. kvlint checks
// it at startup, so a grammar upgrade that renamed a node kind fails loudly, not silently.
std::string grammar_problem();

// What the caller's own text scans already answered for the bytes, so the front end does not
// scan them again (the engine's prefilter answers them in one sampled pass); an unset answer is
// found here. A given answer must equal the front end's own, or facts are lost or invented.
struct KnownText {
  std::optional<bool> may_hold_raw_kv;  // python::may_hold_raw_kv(source)
};

// Reusable analyzer: owns one tree-sitter parser, so an engine keeps one per
// worker thread instead of creating a parser per file. Not thread-safe; one
// instance per thread. Copies the vocabulary it is given.
class PythonAnalyzer {
 public:
  explicit PythonAnalyzer(const facts::Vocabulary& vocabulary, AnalysisBudget budget = {});
  ~PythonAnalyzer();
  PythonAnalyzer(PythonAnalyzer&&) noexcept;
  PythonAnalyzer& operator=(PythonAnalyzer&&) noexcept;
  PythonAnalyzer(const PythonAnalyzer&) = delete;
  PythonAnalyzer& operator=(const PythonAnalyzer&) = delete;

  // Same contract as the free function analyze().
  facts::FileFacts analyze(std::string_view path, std::string_view source, std::string module_name = {},
                           KnownText known = {});
  // Analysis steps the last analyze() took (0 when it did not walk a tree).
  uint64_t last_steps() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvlint::python
