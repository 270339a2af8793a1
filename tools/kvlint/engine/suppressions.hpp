// Applying `# kvlint: ignore[...]` / `ignore-file[...]` suppressions and
// per-file-ignores to findings, and the engine's own suppression hygiene
// findings: KV901 (no reason), KV902 (unknown code), KV903 (suppressed nothing),
// KV904 (malformed: suppresses nothing).
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "analyzers/facts/facts.hpp"
#include "rules/finding.hpp"
#include "tools/kvlint/config/config.hpp"

namespace kvlint {

struct SuppressionOutcome {
  std::vector<Finding> kept;  // rule findings not suppressed, plus KV901-904 findings
  std::size_t suppressed = 0;
};

// `files` holds the suppressions of every analysed file (FileFacts::path equals
// Finding::loc.file). `match_paths` maps a display path to the path used for
// per-file-ignores (absolute or relative to the config root); a path missing
// from it is matched as written.
SuppressionOutcome apply_suppressions(std::vector<Finding> findings,
                                      const std::vector<const facts::FileFacts*>& files, const Config& config,
                                      const std::map<std::string, std::filesystem::path>& match_paths = {});

}  // namespace kvlint
