// Stage 6, record. Takes the project after the check; gives what the next run may reuse: each
// settled file's stamp, hash, scan results and class names for the file index, the project's
// part of the run memo's key, and the paths and dependencies the caches keep.
// Invariant: a stamp is recorded only once it settled (kRacyWindow before the run began) and
// only for a file whose bytes held still through the run; caches are written by rename.
#include <fmt/format.h>

#include <algorithm>
#include <new>

#include "tools/kvlint/engine/project_run.hpp"

namespace kvlint::pipeline {
namespace fs = std::filesystem;

void ProjectRun::add_content_hashes(std::map<std::string, std::uint64_t>& out) const {
  for (const auto& f : files_)
    if (f.readable && reported_.count(f.file.display)) out.emplace(f.file.display, f.content_hash);
}

// The dependencies of every C++ result of the run, for the run memo.
void ProjectRun::add_dependencies(std::vector<FileDependency>& out) const {
  for (const auto& f : files_) out.insert(out.end(), f.dependencies.begin(), f.dependencies.end());
}

// Absolute paths of every file of the project (reported or context), for cache pruning.
void ProjectRun::add_paths(std::vector<std::string>& paths) const {
  for (const auto& f : files_) paths.push_back(f.file.absolute);
}

// Everything this project's result depends on: configuration, vocabulary, and every
// file's name, module, content, reported flag and input diagnostics.
void ProjectRun::add_to_memo_key(XXH3_state_t* state) const {
  auto add = [&](std::string_view text) {
    const std::uint64_t size = text.size();
    XXH3_128bits_update(state, &size, sizeof size);
    XXH3_128bits_update(state, text.data(), text.size());
  };
  add(config_.root.string());
  add(config_fingerprint_);
  add(config_location_);
  add(facts::signature(vocabulary_));
  if (has_cpp_) {
    add(compile_database_.string());
    XXH3_128bits_update(state, &compile_database_hash_, sizeof compile_database_hash_);
    add(cpp_module_ && cpp_module_->loaded() ? cpp_module_->identity() : "no-cpp-frontend");
  }
  for (const auto& f : files_) {
    add(f.file.display);
    add(f.module_name);
    add(f.readable ? "r" : "-");
    add(f.file.reported ? "reported" : "context");
    XXH3_128bits_update(state, &f.content_hash, sizeof f.content_hash);
  }
  for (const auto& d : result_.diagnostics)
    add(fmt::format("{}:{}:{}:{}:{}", d.path, d.line, d.column, d.kind, d.message));
}

// Some file read differently later in the run than at first: the result is not one state of the tree.
bool ProjectRun::saw_changes() const {
  return std::any_of(files_.begin(), files_.end(), [](const FileState& f) { return f.changed; });
}

// What the run learnt of each file for the next one: its stamp, hash and scan results, when
// the stamp had settled before the run began (file_index.hpp) and the bytes held still.
void ProjectRun::record_in(FileIndex& index, std::chrono::system_clock::time_point run_start) const {
  for (const auto& f : files_) {
    if (!f.readable || f.changed || !settled_before(f.file.stamp, run_start)) continue;
    FileIndexEntry entry{f.file.stamp, f.content_hash, f.scans, f.defined_classes, f.tokens, f.handed_self};
    // No scan ran (the run memo answered): what the index held still holds.
    if (entry.scans.empty() && f.indexed_scans) entry.scans = *f.indexed_scans;
    std::sort(entry.scans.begin(), entry.scans.end(),
              [](const ScanRecord& a, const ScanRecord& b) { return a.scan < b.scan; });
    index.record(f.file.absolute, std::move(entry));
  }
}

// The whole-run memo's key: every project's part (add_to_memo_key) and the run's diagnostics
// so far, under this binary's identity.
std::string run_memo_key(const std::string& tool_identity,
                         const std::vector<std::unique_ptr<ProjectRun>>& projects,
                         const std::vector<Diagnostic>& diagnostics) {
  XXH3_state_t* state = XXH3_createState();
  if (!state) throw std::bad_alloc();
  XXH3_128bits_reset(state);
  XXH3_128bits_update(state, tool_identity.data(), tool_identity.size());
  for (const auto& project : projects) project->add_to_memo_key(state);
  for (const auto& d : diagnostics) {
    const std::string text = fmt::format("{}:{}:{}:{}", d.path, d.kind, d.message, d.line);
    XXH3_128bits_update(state, text.data(), text.size());
  }
  const XXH128_hash_t digest = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  return fmt::format("{:016x}{:016x}", digest.high64, digest.low64);
}

// What the run memo keeps of a finished run: its findings, diagnostics, counts and the C++
// dependencies that must still hold for it to answer.
RunMemo run_memo_of(const CheckResult& result, const std::vector<std::unique_ptr<ProjectRun>>& projects) {
  RunMemo memo{result.findings,
               result.diagnostics,
               result.suppressed,
               result.stats.files_parsed + result.stats.files_cached,
               result.stats.files_skipped,
               result.stats.files_deferred,
               0,
               {}};
  for (const auto& project : projects) {
    memo.files_failed += project->analysis_failures();
    project->add_dependencies(memo.dependencies);
  }
  std::sort(memo.dependencies.begin(), memo.dependencies.end(),
            [](const FileDependency& a, const FileDependency& b) { return a.path < b.path; });
  memo.dependencies.erase(std::unique(memo.dependencies.begin(), memo.dependencies.end()),
                          memo.dependencies.end());
  return memo;
}

}  // namespace kvlint::pipeline
