#include "tools/kvlint/reporters/sarif_support.hpp"

#include <fmt/format.h>

namespace kvlint::sarif {

std::string_view level(Severity severity) {
  switch (severity) {
    case Severity::Error:
      return "error";
    case Severity::Warning:
      return "warning";
    case Severity::Info:
      return "note";
  }
  return "error";
}

std::string percent_encode_path(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (char ch : path) {
    const auto byte = static_cast<unsigned char>(ch);
    const bool unreserved = (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
                            (byte >= '0' && byte <= '9') || ch == '-' || ch == '.' || ch == '_' || ch == '~';
    if (unreserved || ch == '/') {
      out += ch;
    } else {
      out += fmt::format("%{:02X}", static_cast<unsigned>(byte));
    }
  }
  return out;
}

std::string uri_of(std::string_view path) {
  const bool absolute = !path.empty() && path.front() == '/';
  return (absolute ? "file://" : "") + percent_encode_path(path);
}

}  // namespace kvlint::sarif
