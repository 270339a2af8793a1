// Python front end: tree-sitter-python syntax -> facts. Knows syntax, never rules.
#pragma once

#include <string>
#include <string_view>

#include "analyzers/facts/facts.hpp"
#include "analyzers/facts/vocabulary.hpp"

namespace kvlint::python {

// Analyses one file's bytes. Never throws on bad input: syntax errors become
// FileFacts::parse_problems and facts from the valid parts are still returned.
// Iterative (no recursion on the tree), so any nesting depth is safe.
// `module_name` is the dotted module path ("pkg.models.decoder"), may be empty.
facts::FileFacts analyze(std::string_view path, std::string_view source,
                         const facts::Vocabulary& vocabulary, std::string module_name = {});

}  // namespace kvlint::python
