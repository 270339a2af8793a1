#include "rules/finding.hpp"

namespace kvlint {

std::string_view to_string(Severity severity) {
  switch (severity) {
    case Severity::Info: return "info";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "error";
}

bool parse_severity(std::string_view text, Severity& out) {
  if (text == "info") out = Severity::Info;
  else if (text == "warning") out = Severity::Warning;
  else if (text == "error") out = Severity::Error;
  else return false;
  return true;
}

}  // namespace kvlint
