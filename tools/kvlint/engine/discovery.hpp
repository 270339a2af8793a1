// Finding the files to check: explicit files, *.py under directories, with
// .gitignore files (nested, negation, anchoring), exclude globs, and no
// symlink-loop following. Iterative, deterministic (sorted) output.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "rules/finding.hpp"
#include "tools/kvlint/config/config.hpp"

namespace kvlint {

struct DiscoveredFile {
  std::filesystem::path path;  // as the user would name it: user path joined with the relative walk path
  std::string display;         // path.generic_string(), the name in findings
  std::filesystem::path absolute;
  bool explicit_file = false;  // named on the command line
};

struct DiscoveryOptions {
  bool force_exclude = false;
  std::filesystem::path cache_dir;  // absolute; skipped during the walk
};

struct DiscoveryResult {
  std::vector<DiscoveredFile> files;    // sorted by display path, unique
  std::vector<Diagnostic> diagnostics;  // unreadable directories, dangling links, missing paths
  std::size_t missing = 0;              // explicit paths that do not exist or are unreadable
};

DiscoveryResult discover_files(const std::vector<std::filesystem::path>& paths, const Config& config,
                               const DiscoveryOptions& options);

}  // namespace kvlint
