// Renders a ConfirmReport as text, JSON ("kvlint-confirm" v1, see FORMAT.md),
// SARIF 2.1.0 or a reviewer report (Markdown, HTML), and writes output atomically.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "tools/kvlint/confirm/reconcile.hpp"

namespace kvlint::confirm {

std::string render_text(const ConfirmReport& report);
nlohmann::json to_json(const ConfirmReport& report, std::string_view tool_version);
std::string render_json(const ConfirmReport& report, std::string_view tool_version);
std::string render_sarif(const ConfirmReport& report, std::string_view tool_version);
// Renders in `format` ("text" | "json" | "sarif" | "markdown" | "html"); false
// for an unknown format. The reviewer formats (markdown, html) project the
// memory to `max_num_seqs` when given.
bool render(const ConfirmReport& report, std::string_view format, std::string_view tool_version,
            std::string& out, std::optional<int64_t> max_num_seqs = std::nullopt);

// One line per finished model, for streaming progress ("codec: complete, 3 caches, ...").
std::string model_progress_line(const ModelRun& run);

// Writes the report with kvlint::write_output_file: a regular file is replaced
// atomically (readers see the old file or the whole new one); a device, FIFO
// or /dev/stdout is written in place. Throws std::runtime_error naming the
// file on failure.
void write_report_file(const std::filesystem::path& target, std::string_view content);

}  // namespace kvlint::confirm
