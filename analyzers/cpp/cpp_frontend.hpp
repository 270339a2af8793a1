// C++ front end: Clang LibTooling syntax and semantics -> facts. Knows the AST, never
// rules. Built as the shared module libkvlint_cpp_frontend.so, which the engine loads
// at run time through the interface in analyzers/facts/cpp_analyzer.hpp.
#pragma once

#include "analyzers/facts/cpp_analyzer.hpp"

namespace kvlint::cpp {

// The module's analyzer (also usable directly by tests that link the module's sources).
std::unique_ptr<facts::CppAnalyzer> make_analyzer(const facts::Vocabulary& vocabulary,
                                                  const facts::CppProjectSettings& settings);

}  // namespace kvlint::cpp
