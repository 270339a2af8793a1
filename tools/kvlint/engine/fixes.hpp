// `kvlint check --fix`: applies the fixes findings carry (safe ones; unsafe ones too with
// --unsafe-fixes), or with --dry-run prints them as a unified diff and changes nothing.
// A file with parse problems is never touched; a file that changed since it was analysed
// is skipped with a note; each file is rewritten atomically.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tools/kvlint/engine/engine.hpp"

namespace kvlint {

struct FixOptions {
  bool unsafe = false;   // also apply fixes that write code a person must complete
  bool dry_run = false;  // only compute the diff
};

struct FixOutcome {
  std::size_t fixed = 0;          // findings whose fix was applied (or would be, in a dry run)
  std::size_t unsafe_hidden = 0;  // findings with an unsafe fix, not applied without --unsafe-fixes
  std::size_t files_changed = 0;
  std::string diff;                // unified diff of every change (`patch -p0` / `git apply -p0`)
  std::vector<std::string> notes;  // files skipped and why
};

FixOutcome apply_fixes(const CheckResult& result, const FixOptions& options);

// A unified diff (3 lines of context) from `before` to `after`, both named `path`; empty when equal.
std::string unified_diff(std::string_view path, std::string_view before, std::string_view after);

}  // namespace kvlint
