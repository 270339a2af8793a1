// Python front end entry: PythonAnalyzer owns the parser; analyze() runs the pre-scans on
// the raw bytes, parses, and hands the tree to a FileWalker (walker.hpp), whose extractors
// emit the facts IR (analyzers/facts/facts.hpp).
#include "analyzers/python/python_frontend.hpp"

#include <tree_sitter/api.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analyzers/facts/line_ends.hpp"
#include "analyzers/python/syntax.hpp"
#include "analyzers/python/walker.hpp"

namespace kvlint::python {
namespace {

using detail::FileWalker;
using detail::Grammar;
using detail::ParserPtr;
using detail::TreePtr;

}  // namespace

struct PythonAnalyzer::Impl {
  facts::Vocabulary vocabulary;
  AnalysisBudget budget;
  Grammar grammar;
  ParserPtr parser;
  std::unordered_set<std::string_view> cache_names;
  uint64_t last_steps = 0;

  Impl(const facts::Vocabulary& v, AnalysisBudget b) : vocabulary(v), budget(b), parser(ts_parser_new()) {
    if (!parser || !ts_parser_set_language(parser.get(), grammar.language))
      throw std::runtime_error("tree-sitter could not load the tree-sitter-python grammar");
    for (const auto& name : vocabulary.cache_classes) cache_names.insert(name);
  }
};

bool records_constructions_of(std::string_view simple_class_name) {
  return detail::is_uppercase_name(simple_class_name);
}

std::string grammar_problem() {
  return detail::grammar_problem(tree_sitter_python());
}

uint64_t AnalysisBudget::for_source(std::size_t bytes) const {
  return std::max(minimum_steps, steps_per_byte * static_cast<uint64_t>(bytes));
}

PythonAnalyzer::PythonAnalyzer(const facts::Vocabulary& vocabulary, AnalysisBudget budget)
    : impl_(std::make_unique<Impl>(vocabulary, budget)) {}
PythonAnalyzer::~PythonAnalyzer() = default;
PythonAnalyzer::PythonAnalyzer(PythonAnalyzer&&) noexcept = default;
PythonAnalyzer& PythonAnalyzer::operator=(PythonAnalyzer&&) noexcept = default;

uint64_t PythonAnalyzer::last_steps() const {
  return impl_->last_steps;
}

facts::FileFacts PythonAnalyzer::analyze(std::string_view path, std::string_view source,
                                         std::string module_name, KnownText known) {
  impl_->last_steps = 0;
  facts::FileFacts out;
  out.path = std::string(path);
  out.language = facts::Language::Python;
  out.module_name = std::move(module_name);
  if (source.size() > UINT32_MAX) {
    out.parse_problems.push_back({facts::Location{out.path, 1, 1, 1, 1}, "file too large to parse"});
    return out;
  }
  // The grammar ends lines and comments only at "\n"; Python also ends them at a lone "\r". The
  // walk reads a copy with each lone "\r" made "\n" (same length, so every byte offset and
  // column holds for the file as it is).
  std::string with_lf;
  if (facts::has_lone_cr(source)) {
    with_lf = facts::lone_cr_as_lf(source);
    source = with_lf;
  }
  TreePtr tree(ts_parser_parse_string(impl_->parser.get(), nullptr, source.data(),
                                      static_cast<uint32_t>(source.size())));
  if (!tree) {
    out.parse_problems.push_back({facts::Location{out.path, 1, 1, 1, 1}, "parser gave up"});
    return out;
  }
  const TSNode root = ts_tree_root_node(tree.get());
  // The raw K/V needles hold no line end, so the lone-"\r" copy answers as the caller's bytes.
  const bool raw_kv_text = known.may_hold_raw_kv ? *known.may_hold_raw_kv : may_hold_raw_kv(source);
  FileWalker walker(impl_->grammar, impl_->vocabulary, impl_->cache_names, out.path, source, root, out,
                    impl_->budget.for_source(source.size()), raw_kv_text);
  walker.run(root);
  impl_->last_steps = walker.steps();
  return out;
}

facts::FileFacts analyze(std::string_view path, std::string_view source, const facts::Vocabulary& vocabulary,
                         std::string module_name) {
  PythonAnalyzer analyzer(vocabulary);
  return analyzer.analyze(path, source, std::move(module_name));
}

}  // namespace kvlint::python
