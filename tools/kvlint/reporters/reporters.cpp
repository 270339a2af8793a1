// TODO(reporters): placeholder until the reporters land.
#include "tools/kvlint/reporters/reporters.hpp"

namespace kvlint {

bool parse_output_format(std::string_view text, OutputFormat& out) {
  if (text == "text") out = OutputFormat::Text;
  else return false;
  return true;
}

std::string render_report(const CheckResult&, OutputFormat, const ReportOptions&) { return {}; }

}  // namespace kvlint
