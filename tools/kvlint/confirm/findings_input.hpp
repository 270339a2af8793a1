// Reads the findings JSON written by `kvlint check --format json`
// (schema "kvlint-findings", version 1).
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "tools/kvlint/confirm/reconcile.hpp"

namespace kvlint::confirm {

// A usage or input problem: the command exits 2 with this message.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The largest findings or confirm document read (a regular file only).
inline constexpr std::size_t kMaxDocumentBytes = std::size_t{256} << 20;

// Throws InputError naming `source` and what is wrong (not JSON, other schema or
// version, a finding without code/path/line).
// A JSON document of schema `schema_name`, version 1; `producer` is the
// command that writes it, named in the error for a document of another kind.
nlohmann::json parse_document(std::string_view text, std::string_view source, std::string_view schema_name,
                              std::string_view producer);
nlohmann::json read_document(const std::filesystem::path& file, std::string_view schema_name,
                             std::string_view producer);

// One finding object (the shape of `kvlint check --format json` findings and
// of `kvlint confirm --format json` results); `where` names it in errors.
InputFinding finding_from_json(const nlohmann::json& item, const std::string& where);

std::vector<InputFinding> parse_findings_json(std::string_view text, std::string_view source);
std::vector<InputFinding> load_findings_file(const std::filesystem::path& file);

}  // namespace kvlint::confirm
