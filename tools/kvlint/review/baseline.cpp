#include "tools/kvlint/review/baseline.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tools/kvlint/confirm/findings_input.hpp"
#include "tools/kvlint/engine/bounded_json.hpp"
#include "tools/kvlint/engine/source_file.hpp"

namespace kvlint::review {

using nlohmann::json;

Baseline Baseline::parse(std::string_view text, std::string_view source) {
  std::string error;
  const std::optional<json> parsed = parse_json_bounded(text, error);
  if (!parsed) throw BaselineError(fmt::format("{}: not a kvlint JSON or SARIF report: {}", source, error));
  const json& document = *parsed;
  if (!document.is_object())
    throw BaselineError(
        fmt::format("{}: not a JSON object (expected a kvlint JSON or SARIF report)", source));
  Baseline baseline;
  auto take = [&](const std::string& print, std::string_view where) {
    if (print.empty()) throw BaselineError(fmt::format("{}: {} has no fingerprint", source, where));
    ++baseline.remaining_[print];
    ++baseline.total_;
  };
  // A field of the wrong type is named, not left to the JSON library's type error or ignored.
  auto text_field = [&](const json& object, std::string_view name, std::string_view where) -> std::string {
    const auto it = object.find(std::string(name));
    if (it == object.end()) return {};
    if (!it->is_string())
      throw BaselineError(fmt::format("{}: {}\"{}\" must be a string", source, where, name));
    return it->get<std::string>();
  };
  if (text_field(document, "schema", "") == "kvlint-findings") {
    const auto findings = document.find("findings");
    if (findings == document.end() || !findings->is_array())
      throw BaselineError(fmt::format("{}: \"findings\" must be an array", source));
    std::size_t index = 0;
    for (const auto& f : *findings) {
      const std::string where = fmt::format("findings[{}]", index++);
      if (!f.is_object()) throw BaselineError(fmt::format("{}: {} is not an object", source, where));
      try {
        // Every field a kvlint finding has is read as `kvlint report` reads it: one of the
        // wrong type is exit 2, not ignored.
        take(confirm::finding_from_json(f, fmt::format("{}: {}", source, where)).finding.fingerprint, where);
      } catch (const confirm::InputError& e) {
        throw BaselineError(e.what());
      }
    }
    return baseline;
  }
  const auto runs = document.find("runs");
  if (text_field(document, "version", "") != "2.1.0" || runs == document.end() || !runs->is_array())
    throw BaselineError(fmt::format(
        "{}: neither a kvlint JSON report (\"schema\": \"kvlint-findings\") nor SARIF 2.1.0", source));
  std::size_t run_index = 0;
  for (const auto& run : *runs) {
    const std::string run_where = fmt::format("runs[{}]", run_index++);
    if (!run.is_object()) throw BaselineError(fmt::format("{}: {} is not an object", source, run_where));
    const auto results = run.find("results");
    if (results == run.end() || results->is_null()) continue;  // a tool that found nothing
    if (!results->is_array())
      throw BaselineError(fmt::format("{}: {}.results must be an array", source, run_where));
    std::size_t index = 0;
    for (const auto& r : *results) {
      const std::string where = fmt::format("{}.results[{}]", run_where, index++);
      if (!r.is_object()) throw BaselineError(fmt::format("{}: {} is not an object", source, where));
      const auto prints = r.find("partialFingerprints");
      if (prints != r.end() && !prints->is_object())
        throw BaselineError(fmt::format("{}: {}.partialFingerprints must be an object", source, where));
      take(prints == r.end() ? std::string() : text_field(*prints, kSarifFingerprintKey, where + "."), where);
    }
  }
  return baseline;
}

Baseline Baseline::load(const std::filesystem::path& file) {
  // A regular file of bounded size only: a FIFO would wait for a writer, /dev/zero never ends.
  ReadOutcome read = read_source(file, file.string(), kMaxBaselineBytes);
  if (read.problem)
    throw BaselineError(fmt::format("cannot read {}: {}", file.string(), read.problem->message));
  return parse(read.content, file.string());
}

bool Baseline::absorbs(const Finding& finding) {
  auto it = remaining_.find(finding.fingerprint);
  if (it == remaining_.end() || it->second == 0) return false;
  --it->second;
  return true;
}

std::size_t Baseline::unmatched() const {
  std::size_t left = 0;
  for (const auto& [print, count] : remaining_) left += count;
  return left;
}

}  // namespace kvlint::review
