#include "rules/finding.hpp"

#include <algorithm>

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

std::string code_span(std::string_view text) {
  std::size_t longest_run = 0;
  std::size_t run = 0;
  for (char ch : text) {
    run = ch == '`' ? run + 1 : 0;
    longest_run = std::max(longest_run, run);
  }
  const std::string fence(longest_run + 1, '`');
  const bool spaces_around = text.size() >= 2 && text.front() == ' ' && text.back() == ' ' &&
                             text.find_first_not_of(' ') != std::string_view::npos;
  const bool pad = !text.empty() && (text.front() == '`' || text.back() == '`' || spaces_around);
  std::string out = fence;
  if (pad) out += ' ';
  out += text;
  if (pad) out += ' ';
  return out + fence;
}

}  // namespace kvlint
