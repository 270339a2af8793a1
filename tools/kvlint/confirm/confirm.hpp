// `kvlint confirm`: boots the models whose owner classes were flagged, in
// child processes running the Python harness (runtime/python/kvlint_runtime),
// and reconciles each finding into confirmed / refuted / not-exercised /
// inconclusive with declared and observed bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tools/kvlint/config/config.hpp"

namespace kvlint {

struct ConfirmOptions {
  std::vector<std::filesystem::path> paths;   // checked when no findings file is given
  std::filesystem::path findings_file;        // JSON from `kvlint check --format json`; empty: run the check
  Config config;
  std::string format = "text";                // text | json | sarif | markdown | html
  std::optional<int64_t> max_num_seqs;        // markdown/html: project the memory to this engine setting
  std::filesystem::path output;               // empty: stdout (written atomically otherwise)
  std::vector<std::string> models;            // restrict to these boot entries
  bool all = false;                           // boot every configured entry, flagged or not
  std::string device_override;                // "", "cpu", "cuda"
};

// Returns the process exit code: 0 when nothing is confirmed, 1 when a finding is
// confirmed or a runtime-only finding exists, 2 on usage or configuration errors.
int run_confirm(const ConfirmOptions& options);

}  // namespace kvlint
