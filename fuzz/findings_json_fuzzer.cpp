// `kvlint confirm --findings FILE`: findings JSON (kvlint-findings v1) ->
// InputFinding list; and `kvlint report`: the same bytes read as findings and
// as confirm results, rendered as the HTML and Markdown reviewer reports.
// Only InputError (a clear message, exit 2) may escape.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tools/kvlint/confirm/findings_input.hpp"
#include "tools/kvlint/confirm/review_input.hpp"
#include "tools/kvlint/engine/bounded_json.hpp"
#include "tools/kvlint/reporters/reporters.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    kvlint::confirm::parse_findings_json(text, "fuzzed.json");
  } catch (const kvlint::confirm::InputError&) {
  }
  // Read as kvlint report reads it: nesting bounded (a deep document is an InputError there).
  std::string error;
  const auto document = kvlint::parse_json_bounded(text, error);
  if (!document || !document->is_object()) return 0;
  try {
    const kvlint::CheckResult findings =
        kvlint::confirm::check_result_from_findings(*document, "fuzzed.json");
    kvlint::ReviewData review = kvlint::confirm::review_from_confirm(*document, "fuzzed.json");
    review.max_num_seqs = 256;
    review.base_memory = review.memory;
    kvlint::ReportOptions options;
    options.review = &review;
    kvlint::render_report(findings, kvlint::OutputFormat::Html, options);
    kvlint::render_report(findings, kvlint::OutputFormat::Markdown, options);
  } catch (const kvlint::confirm::InputError&) {
  }
  return 0;
}
