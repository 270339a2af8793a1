// Python front end entry: PythonAnalyzer owns the parser; analyze() runs the pre-scans on
// the raw bytes, parses, and hands the tree to a FileWalker (walker.hpp), whose extractors
// emit the facts IR (analyzers/facts/facts.hpp).
#include "analyzers/python/python_frontend.hpp"

#include <tree_sitter/api.h>

#include <algorithm>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analyzers/python/syntax.hpp"
#include "analyzers/python/walker.hpp"

namespace kvlint::python {
namespace {

using detail::FileWalker;
using detail::Grammar;
using detail::ParserPtr;
using detail::TreePtr;

// tree-sitter 0.20 corrupts its heap when freeing an error tree with more than
// about 65,535 unmatched brackets (balanced nesting of any depth is fine). So
// before parsing, find whether the brackets balance; when they do not and the
// nesting reaches this depth, the file is reported instead of parsed.
constexpr std::size_t kMaxUnbalancedNesting = 50000;

// Deepest bracket nesting, skipping strings and comments, and whether every
// bracket is matched. A lexical approximation, good enough for this guard.
struct Nesting {
  std::size_t max_depth = 0;
  bool balanced = true;
};
Nesting scan_nesting(std::string_view s) {
  Nesting n;
  std::vector<char> open;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    switch (c) {
      case '#':
        i = s.find('\n', i);
        if (i == std::string_view::npos) i = s.size();
        break;
      case '\'':
      case '"': {
        const bool triple = i + 2 < s.size() && s[i + 1] == c && s[i + 2] == c;
        const std::size_t quote_len = triple ? 3 : 1;
        std::size_t j = i + quote_len;
        for (; j < s.size(); ++j) {
          if (s[j] == '\\') {
            ++j;
            continue;
          }
          if (!triple && s[j] == '\n') break;  // unterminated single-line string
          if (s[j] == c && (!triple || (j + 2 < s.size() && s[j + 1] == c && s[j + 2] == c))) {
            j += quote_len - 1;
            break;
          }
        }
        i = j;
        break;
      }
      case '(':
      case '[':
      case '{':
        open.push_back(c);
        n.max_depth = std::max(n.max_depth, open.size());
        break;
      case ')':
      case ']':
      case '}': {
        const char want = c == ')' ? '(' : c == ']' ? '[' : '{';
        if (open.empty() || open.back() != want) n.balanced = false;
        if (!open.empty()) open.pop_back();
        break;
      }
      default:
        break;
    }
  }
  if (!open.empty()) n.balanced = false;
  return n;
}
bool may_nest_too_deep(std::string_view s) {
  std::size_t opening = 0;
  for (char c : s) opening += (c == '(' || c == '[' || c == '{') ? 1 : 0;
  return opening >= kMaxUnbalancedNesting;
}

}  // namespace

struct PythonAnalyzer::Impl {
  facts::Vocabulary vocabulary;
  AnalysisBudget budget;
  Grammar grammar;
  ParserPtr parser;
  std::unordered_set<std::string_view> cache_names;
  uint64_t last_steps = 0;

  Impl(const facts::Vocabulary& v, AnalysisBudget b) : vocabulary(v), budget(b), parser(ts_parser_new()) {
    ts_parser_set_language(parser.get(), grammar.language);
    for (const auto& name : vocabulary.cache_classes) cache_names.insert(name);
  }
};

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
                                         std::string module_name) {
  impl_->last_steps = 0;
  facts::FileFacts out;
  out.path = std::string(path);
  out.module_name = std::move(module_name);
  if (source.size() > UINT32_MAX) {
    out.parse_problems.push_back({facts::Location{out.path, 1, 1, 1, 1}, "file too large to parse"});
    return out;
  }
  if (may_nest_too_deep(source)) {
    const Nesting nesting = scan_nesting(source);
    if (!nesting.balanced && nesting.max_depth >= kMaxUnbalancedNesting) {
      out.parse_problems.push_back(
          {facts::Location{out.path, 1, 1, 1, 1}, "brackets nest " + std::to_string(nesting.max_depth) +
                                                      " levels deep and do not balance; file not analysed"});
      return out;
    }
  }
  TreePtr tree(ts_parser_parse_string(impl_->parser.get(), nullptr, source.data(),
                                      static_cast<uint32_t>(source.size())));
  if (!tree) {
    out.parse_problems.push_back({facts::Location{out.path, 1, 1, 1, 1}, "parser gave up"});
    return out;
  }
  const TSNode root = ts_tree_root_node(tree.get());
  FileWalker walker(impl_->grammar, impl_->vocabulary, impl_->cache_names, out.path, source, root, out,
                    impl_->budget.for_source(source.size()));
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
