// Reporters: findings -> text, JSON, SARIF 2.1.0, GitHub annotations, Markdown.
#pragma once

#include <string>
#include <string_view>

#include "tools/kvlint/engine/engine.hpp"

namespace kvlint {

enum class OutputFormat { Text, Json, Sarif, Github, Markdown };
bool parse_output_format(std::string_view text, OutputFormat& out);

struct ReportOptions {
  bool color = false;        // ANSI colors (text only)
  bool show_source = true;   // source excerpt under each finding (text only)
  bool statistics = false;   // counts per code instead of findings (text/markdown)
  std::string tool_version;  // "0.1.0"
  // SARIF tool.driver.informationUri (the project's home page); left out when empty.
  std::string information_uri;
};

// Renders the whole report as one string, so callers can write it atomically.
std::string render_report(const CheckResult& result, OutputFormat format, const ReportOptions& options);

}  // namespace kvlint
