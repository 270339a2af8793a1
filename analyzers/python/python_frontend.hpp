// Python front end: tree-sitter-python syntax -> facts. Knows syntax, never rules.
#pragma once

#include <memory>
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

// Reusable analyzer: owns one tree-sitter parser, so an engine keeps one per
// worker thread instead of creating a parser per file. Not thread-safe; one
// instance per thread. Copies the vocabulary it is given.
class PythonAnalyzer {
 public:
  explicit PythonAnalyzer(const facts::Vocabulary& vocabulary);
  ~PythonAnalyzer();
  PythonAnalyzer(PythonAnalyzer&&) noexcept;
  PythonAnalyzer& operator=(PythonAnalyzer&&) noexcept;
  PythonAnalyzer(const PythonAnalyzer&) = delete;
  PythonAnalyzer& operator=(const PythonAnalyzer&) = delete;

  // Same contract as the free function analyze().
  facts::FileFacts analyze(std::string_view path, std::string_view source, std::string module_name = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvlint::python
