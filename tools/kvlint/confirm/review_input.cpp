#include "tools/kvlint/confirm/review_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "tools/kvlint/confirm/findings_input.hpp"

namespace kvlint::confirm {
namespace {

using nlohmann::json;

// The array under `key`, or an empty one when the key is absent or null.
const json& array_field(const json& object, const char* key, std::string_view where) {
  static const json kEmpty = json::array();
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return kEmpty;
  if (!it->is_array()) throw InputError(fmt::format("{}: \"{}\" must be an array", where, key));
  return *it;
}

std::string text_field(const json& object, const char* key, std::string_view where) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return {};
  if (!it->is_string()) throw InputError(fmt::format("{}: \"{}\" must be a string", where, key));
  return it->get<std::string>();
}

// Every integer these documents hold (bytes, rows, lines, concurrency) is a
// count: 0 to 2^53, as confirm's protocol checks them, so sums and differences
// in the reports cannot overflow.
int64_t integer_field(const json& object, const char* key, std::string_view where) {
  constexpr int64_t kMaxCount = int64_t{1} << 53;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return 0;
  const bool in_range =
      (it->is_number_unsigned() && it->get<uint64_t>() <= static_cast<uint64_t>(kMaxCount)) ||
      (it->is_number_integer() && it->get<int64_t>() >= 0 && it->get<int64_t>() <= kMaxCount);
  if (!in_range) throw InputError(fmt::format("{}: \"{}\" must be an integer from 0 to 2^53", where, key));
  return it->get<int64_t>();
}

const json& object_at(const json& value, std::string_view where) {
  if (!value.is_object()) throw InputError(fmt::format("{}: expected an object", where));
  return value;
}

ReviewVerdict verdict_from(const json& result, std::string_view where) {
  ReviewVerdict verdict;
  verdict.verdict = text_field(result, "verdict", where);
  auto evidence = result.find("evidence");
  if (evidence != result.end() && !evidence->is_null()) {
    const std::string inner = fmt::format("{}.evidence", where);
    object_at(*evidence, inner);
    verdict.summary = text_field(*evidence, "summary", inner);
    verdict.model = text_field(*evidence, "model", inner);
    verdict.path = text_field(*evidence, "path", inner);
    verdict.concurrency = integer_field(*evidence, "concurrency", inner);
  }
  return verdict;
}

}  // namespace

CheckResult check_result_from_findings(const json& document, std::string_view source) {
  CheckResult result;
  std::size_t index = 0;
  for (const auto& item : array_field(document, "findings", source))
    result.findings.push_back(
        finding_from_json(item, fmt::format("{}: findings[{}]", source, index++)).finding);
  index = 0;
  for (const auto& item : array_field(document, "diagnostics", source)) {
    const std::string where = fmt::format("{}: diagnostics[{}]", source, index++);
    object_at(item, where);
    result.diagnostics.push_back(
        {text_field(item, "path", where),
         static_cast<uint32_t>(std::min<int64_t>(integer_field(item, "line", where), UINT32_MAX)),
         static_cast<uint32_t>(std::min<int64_t>(integer_field(item, "column", where), UINT32_MAX)),
         text_field(item, "kind", where), text_field(item, "message", where)});
  }
  if (auto summary = document.find("summary"); summary != document.end() && summary->is_object()) {
    result.stats.files_found =
        static_cast<std::size_t>(std::max<int64_t>(0, integer_field(*summary, "files", source)));
    result.suppressed =
        static_cast<std::size_t>(std::max<int64_t>(0, integer_field(*summary, "suppressed", source)));
  }
  return result;
}

CheckResult check_result_from_confirm(const json& document, std::string_view source) {
  CheckResult result;
  std::size_t index = 0;
  for (const auto& item : array_field(document, "results", source))
    result.findings.push_back(
        finding_from_json(item, fmt::format("{}: results[{}]", source, index++)).finding);
  return result;
}

std::vector<MemoryRow> memory_from_confirm(const json& document, std::string_view source) {
  std::vector<MemoryRow> rows;
  std::size_t model_index = 0;
  for (const auto& model : array_field(document, "models", source)) {
    const std::string where = fmt::format("{}: models[{}]", source, model_index++);
    object_at(model, where);
    const std::string name = text_field(model, "name", where);
    std::size_t row_index = 0;
    for (const auto& item : array_field(model, "memory", where)) {
      const std::string row_where = fmt::format("{}.memory[{}]", where, row_index++);
      object_at(item, row_where);
      MemoryRow row;
      row.model = name;
      row.path = text_field(item, "path", row_where);
      row.owner = text_field(item, "owner", row_where);
      row.concurrency = integer_field(item, "concurrency", row_where);
      row.declared_bytes = integer_field(item, "declared_bytes", row_where);
      row.observed_bytes = integer_field(item, "observed_bytes", row_where);
      row.declared_bytes_per_row = integer_field(item, "declared_bytes_per_row", row_where);
      row.observed_bytes_per_row = integer_field(item, "observed_bytes_per_row", row_where);
      row.observed_rows = integer_field(item, "observed_rows", row_where);
      row.declared_fixed_bytes = integer_field(item, "declared_fixed_bytes", row_where);
      row.declared_per_sequence_bytes = integer_field(item, "declared_per_sequence_bytes", row_where);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

ReviewData review_from_confirm(const json& document, std::string_view source) {
  ReviewData review;
  std::size_t index = 0;
  for (const auto& item : array_field(document, "results", source)) {
    const std::string where = fmt::format("{}: results[{}]", source, index++);
    const InputFinding input = finding_from_json(item, where);
    review.verdicts[review_key(input.finding)] = verdict_from(item, where);
  }
  index = 0;
  for (const auto& item : array_field(document, "runtime_findings", source)) {
    const std::string where = fmt::format("{}: runtime_findings[{}]", source, index++);
    InputFinding input = finding_from_json(item, where);
    review.runtime_findings.push_back(
        {std::move(input.finding), std::move(input.name), verdict_from(item, where)});
  }
  index = 0;
  for (const auto& model : array_field(document, "models", source)) {
    const std::string where = fmt::format("{}: models[{}]", source, index++);
    object_at(model, where);
    ReviewModel m{text_field(model, "name", where),
                  text_field(model, "status", where),
                  text_field(model, "reason", where),
                  {}};
    if (auto runtime = model.find("runtime"); runtime != model.end() && runtime->is_object())
      m.device = text_field(*runtime, "device", where);
    review.models.push_back(std::move(m));
  }
  review.memory = memory_from_confirm(document, source);
  return review;
}

}  // namespace kvlint::confirm
