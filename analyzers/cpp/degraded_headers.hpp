// What a missing header is replaced with in degraded mode (LibTorch / CUDA / the
// kvlint header absent where the linter runs): a small declaration of the names the
// front end matches, so that the code around them still gets types and the facts
// come from the same AST shapes as with the real headers. Any other missing header
// is an empty file. Only used for headers that were NOT found: with the real
// headers present nothing here is seen.
#pragma once

#include <string_view>

namespace kvlint::cpp {

// The content served for a missing `#include <name>`.
std::string_view degraded_header(std::string_view name);

}  // namespace kvlint::cpp
