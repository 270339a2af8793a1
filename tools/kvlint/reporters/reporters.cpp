#include "tools/kvlint/reporters/reporters.hpp"

#include "tools/kvlint/reporters/report_support.hpp"

namespace kvlint {

bool parse_output_format(std::string_view text, OutputFormat& out) {
  if (text == "text") {
    out = OutputFormat::Text;
  } else if (text == "json") {
    out = OutputFormat::Json;
  } else if (text == "sarif") {
    out = OutputFormat::Sarif;
  } else if (text == "github") {
    out = OutputFormat::Github;
  } else if (text == "markdown") {
    out = OutputFormat::Markdown;
  } else if (text == "html") {
    out = OutputFormat::Html;
  } else {
    return false;
  }
  return true;
}

std::string render_report(const CheckResult& result, OutputFormat format, const ReportOptions& options) {
  switch (format) {
    case OutputFormat::Text:
      return reporting::render_text(result, options);
    case OutputFormat::Json:
      return reporting::render_json(result, options);
    case OutputFormat::Sarif:
      return reporting::render_sarif(result, options);
    case OutputFormat::Github:
      return reporting::render_github(result, options);
    case OutputFormat::Markdown:
      return reporting::render_markdown(result, options);
    case OutputFormat::Html:
      return reporting::render_html(result, options);
  }
  return reporting::render_text(result, options);
}

}  // namespace kvlint
