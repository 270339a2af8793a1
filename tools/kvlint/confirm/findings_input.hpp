// Reads the findings JSON written by `kvlint check --format json`
// (schema "kvlint-findings", version 1).
#pragma once

#include <filesystem>
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

// Throws InputError naming `source` and what is wrong (not JSON, other schema or
// version, a finding without code/path/line).
std::vector<InputFinding> parse_findings_json(std::string_view text, std::string_view source);
std::vector<InputFinding> load_findings_file(const std::filesystem::path& file);

}  // namespace kvlint::confirm
