// One in-process run over a test tree, as the engine tests make it: the tree is the project
// root and the only path, without the cache (each run reads and analyses everything), on one
// worker (the order in which files are pulled in is then the same on every run).
#pragma once

#include "tests/engine/temp_dir.hpp"
#include "tools/kvlint/engine/engine.hpp"

namespace kvlint::testing {

// The options of such a run; a test sets what it varies (cache, workers, deferral) on them.
inline CheckOptions tree_options(const TempDir& dir) {
  CheckOptions options;
  options.paths = {dir.path()};
  options.config.root = dir.path();
  options.use_cache = false;
  options.jobs = 1;
  return options;
}

inline CheckResult check_tree(const TempDir& dir) {
  return run_check(tree_options(dir));
}

}  // namespace kvlint::testing
