// Reads the reviewer report's inputs: the findings of `kvlint check --format
// json` ("kvlint-findings" v1) and the results of `kvlint confirm --format json`
// ("kvlint-confirm" v1, FORMAT.md), so `kvlint report` can merge them long after
// (and far from) the runs that wrote them.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "tools/kvlint/engine/engine.hpp"
#include "tools/kvlint/reporters/review.hpp"

namespace kvlint::confirm {

// Findings, diagnostics and counts of a findings document. Throws InputError.
CheckResult check_result_from_findings(const nlohmann::json& document, std::string_view source);
// The findings a confirm document reconciled (its "results"), for a report made from confirm output alone.
CheckResult check_result_from_confirm(const nlohmann::json& document, std::string_view source);
// Verdicts, runtime-only findings, model statuses and the memory rows of a confirm document.
ReviewData review_from_confirm(const nlohmann::json& document, std::string_view source);
// Only the memory rows (the base revision's, for the change in declared bytes).
std::vector<MemoryRow> memory_from_confirm(const nlohmann::json& document, std::string_view source);

}  // namespace kvlint::confirm
