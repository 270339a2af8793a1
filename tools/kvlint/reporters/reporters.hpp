// Reporters: findings -> text, JSON, SARIF 2.1.0, GitHub annotations, Markdown, HTML.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "tools/kvlint/engine/engine.hpp"
#include "tools/kvlint/reporters/review.hpp"

namespace kvlint {

enum class OutputFormat { Text, Json, Sarif, Github, Markdown, Html };
bool parse_output_format(std::string_view text, OutputFormat& out);

struct ReportOptions {
  bool color = false;        // ANSI colors (text only)
  bool show_source = true;   // source excerpt under each finding (text only)
  bool statistics = false;   // counts per code instead of findings (text/markdown)
  std::string tool_version;  // "0.1.0"
  // SARIF tool.driver.informationUri (the project's home page); left out when empty.
  std::string information_uri;
  // What `kvlint confirm` measured (markdown and html show it beside the
  // findings); null when only static findings are reported.
  const ReviewData* review = nullptr;
  // Excerpts only from files under this directory (`kvlint report`: the project root; its
  // findings file is input and may name any path); none: the paths are this run's own.
  std::optional<std::filesystem::path> source_root;
};

// Renders the whole report as one string, so callers can write it atomically.
std::string render_report(const CheckResult& result, OutputFormat format, const ReportOptions& options);

}  // namespace kvlint
