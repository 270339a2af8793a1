#include "tools/kvlint/review/baseline.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tools/kvlint/engine/source_file.hpp"

namespace kvlint::review {

using nlohmann::json;

Baseline Baseline::parse(std::string_view text, std::string_view source) {
  const json document = json::parse(text.begin(), text.end(), nullptr, false);
  if (document.is_discarded() || !document.is_object())
    throw BaselineError(
        fmt::format("{}: not a JSON object (expected a kvlint JSON or SARIF report)", source));
  Baseline baseline;
  auto take = [&](const json& value, std::string_view where) {
    if (!value.is_string() || value.get_ref<const std::string&>().empty())
      throw BaselineError(fmt::format("{}: {} has no fingerprint", source, where));
    ++baseline.remaining_[value.get<std::string>()];
    ++baseline.total_;
  };
  // A field of the wrong type is named, not left to the JSON library's type error.
  auto text_field = [&](std::string_view name) -> std::string {
    const auto it = document.find(std::string(name));
    if (it == document.end()) return {};
    if (!it->is_string()) throw BaselineError(fmt::format("{}: \"{}\" must be a string", source, name));
    return it->get<std::string>();
  };
  if (text_field("schema") == "kvlint-findings") {
    const auto findings = document.find("findings");
    if (findings == document.end() || !findings->is_array())
      throw BaselineError(fmt::format("{}: \"findings\" must be an array", source));
    std::size_t index = 0;
    for (const auto& f : *findings) {
      const std::string where = fmt::format("findings[{}]", index++);
      if (!f.is_object()) throw BaselineError(fmt::format("{}: {} is not an object", source, where));
      take(f.contains("fingerprint") ? f["fingerprint"] : json(), where);
    }
    return baseline;
  }
  const auto runs = document.find("runs");
  if (text_field("version") != "2.1.0" || runs == document.end() || !runs->is_array())
    throw BaselineError(fmt::format(
        "{}: neither a kvlint JSON report (\"schema\": \"kvlint-findings\") nor SARIF 2.1.0", source));
  std::size_t run_index = 0;
  for (const auto& run : *runs) {
    const json* results = run.is_object() && run.contains("results") ? &run["results"] : nullptr;
    if (results == nullptr || !results->is_array()) {
      ++run_index;
      continue;  // a run with nothing to compare (a tool that found nothing)
    }
    std::size_t index = 0;
    for (const auto& r : *results) {
      const std::string where = fmt::format("runs[{}].results[{}]", run_index, index++);
      const json* prints =
          r.is_object() && r.contains("partialFingerprints") ? &r["partialFingerprints"] : nullptr;
      const std::string key(kSarifFingerprintKey);
      take(prints != nullptr && prints->is_object() && prints->contains(key) ? (*prints)[key] : json(),
           where);
    }
    ++run_index;
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
