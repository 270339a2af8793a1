#include "tools/kvlint/confirm/findings_input.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>

#include "tools/kvlint/engine/bounded_json.hpp"
#include "tools/kvlint/engine/source_file.hpp"

namespace kvlint::confirm {
namespace {

using nlohmann::json;

std::string string_field(const json& object, const char* key, std::string_view where, bool required) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    if (required) throw InputError(fmt::format("{}: missing \"{}\"", where, key));
    return {};
  }
  if (!it->is_string()) throw InputError(fmt::format("{}: \"{}\" must be a string", where, key));
  return it->get<std::string>();
}

uint32_t line_field(const json& object, const char* key, std::string_view where, bool required) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    if (required) throw InputError(fmt::format("{}: missing \"{}\"", where, key));
    return 0;
  }
  // Checked before converting: a larger value would be silently truncated.
  const bool in_range =
      (it->is_number_unsigned() && it->get<uint64_t>() <= UINT32_MAX) ||
      (it->is_number_integer() && it->get<int64_t>() >= 0 && it->get<int64_t>() <= UINT32_MAX);
  if (!in_range)
    throw InputError(fmt::format("{}: \"{}\" must be an integer from 0 to {}", where, key, UINT32_MAX));
  return static_cast<uint32_t>(it->get<uint64_t>());
}

}  // namespace

InputFinding finding_from_json(const nlohmann::json& item, const std::string& where) {
  if (!item.is_object()) throw InputError(fmt::format("{}: expected an object", where));
  InputFinding input;
  Finding& f = input.finding;
  f.code = string_field(item, "code", where, true);
  input.name = string_field(item, "name", where, false);
  std::string severity = string_field(item, "severity", where, false);
  if (!severity.empty() && !parse_severity(severity, f.severity))
    throw InputError(fmt::format("{}: unknown severity \"{}\"", where, severity));
  f.loc.file = string_field(item, "path", where, true);
  f.loc.line = line_field(item, "line", where, true);
  f.loc.column = line_field(item, "column", where, false);
  f.loc.end_line = line_field(item, "end_line", where, false);
  f.loc.end_column = line_field(item, "end_column", where, false);
  f.owner_class = string_field(item, "owner", where, false);
  f.message = string_field(item, "message", where, false);
  f.fingerprint = string_field(item, "fingerprint", where, false);
  f.member = string_field(item, "member", where, false);
  if (auto related = item.find("related"); related != item.end() && !related->is_null()) {
    if (!related->is_array()) throw InputError(fmt::format("{}: \"related\" must be an array", where));
    for (const auto& r : *related) {
      if (!r.is_object()) throw InputError(fmt::format("{}: \"related\" entries must be objects", where));
      RelatedLocation location;
      location.loc.file = string_field(r, "path", where, true);
      location.loc.line = line_field(r, "line", where, true);
      location.loc.column = line_field(r, "column", where, false);
      location.message = string_field(r, "message", where, false);
      f.related.push_back(std::move(location));
    }
  }
  return input;
}

json parse_document(std::string_view text, std::string_view source, std::string_view schema_name,
                    std::string_view producer) {
  std::string error;
  std::optional<json> parsed = parse_json_bounded(text, error);
  if (!parsed) throw InputError(fmt::format("{}: not valid JSON: {}", source, error));
  json document = std::move(*parsed);
  if (!document.is_object()) throw InputError(fmt::format("{}: expected a JSON object", source));
  auto schema = document.find("schema");
  if (schema == document.end() || !schema->is_string() || *schema != schema_name)
    throw InputError(
        fmt::format("{}: \"schema\" must be \"{}\" (is this `{}` output?)", source, schema_name, producer));
  auto version = document.find("version");
  if (version == document.end() || !version->is_number_integer() || version->get<int64_t>() != 1)
    throw InputError(fmt::format("{}: unsupported \"version\" {} (this kvlint reads version 1)", source,
                                 version == document.end() ? std::string("(missing)") : version->dump()));
  return document;
}

json read_document(const std::filesystem::path& file, std::string_view schema_name,
                   std::string_view producer) {
  // A regular file of bounded size only, as for baselines: a FIFO would wait for a writer,
  // /dev/zero never ends.
  const ReadOutcome read = read_source(file, file.string(), kMaxDocumentBytes);
  if (read.problem)
    throw InputError(fmt::format("{}: cannot read the file: {}", file.string(), read.problem->message));
  return parse_document(read.content, file.string(), schema_name, producer);
}

namespace {

std::vector<InputFinding> findings_of(const json& document, std::string_view source) {
  auto findings = document.find("findings");
  if (findings == document.end() || !findings->is_array())
    throw InputError(fmt::format("{}: \"findings\" must be an array", source));
  std::vector<InputFinding> out;
  std::size_t index = 0;
  for (const auto& item : *findings)
    out.push_back(finding_from_json(item, fmt::format("{}: findings[{}]", source, index++)));
  return out;
}

constexpr std::string_view kFindingsProducer = "kvlint check --format json";

}  // namespace

std::vector<InputFinding> parse_findings_json(std::string_view text, std::string_view source) {
  return findings_of(parse_document(text, source, "kvlint-findings", kFindingsProducer), source);
}

std::vector<InputFinding> load_findings_file(const std::filesystem::path& file) {
  return findings_of(read_document(file, "kvlint-findings", kFindingsProducer), file.string());
}

}  // namespace kvlint::confirm
