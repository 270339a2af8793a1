// SARIF building blocks shared by `check`'s SARIF reporter and `confirm`'s.
#pragma once

#include <string>
#include <string_view>

#include "rules/finding.hpp"

namespace kvlint::sarif {

// "error" | "warning" | "note" (SARIF has no "info").
std::string_view level(Severity severity);
// RFC 3986 percent-encoding of a path: every byte but unreserved characters
// and '/' is encoded (also ':' so a relative path never reads as a scheme).
std::string percent_encode_path(std::string_view path);
// An absolute path as a file:// URI; a relative one as a relative reference.
std::string uri_of(std::string_view path);

}  // namespace kvlint::sarif
