// Stage 1, read. Takes the project's discovered files; gives each its content hash, and its
// bytes while the run's kept bytes stay within kKeptBytesBudget: every file's when all fit, else
// only those the prefilter (run on them as they are read) passes for parsing (else a later stage reads them
// again, counted in CheckStats::bytes_reread); the other files get a summary (class names, identifier tokens)
// that answers the widening searches. A file the file index knows unchanged is not read: hash,
// scan results, class names, tokens and the names handed self come from the index, and a later
// phase that only needs to know it is unchanged (unchanged_on_disk) stats it again.
// Invariant: every later read of a file must give the bytes first hashed, else the file is
// marked changed and the run is not memoised (FileState::changed).
#include <sys/stat.h>
#include <xxhash.h>

#include "analyzers/python/text_scan.hpp"
#include "tools/kvlint/engine/project_run.hpp"
#include "tools/kvlint/engine/source_file.hpp"
#include "tools/kvlint/engine/token_summary.hpp"

namespace kvlint::pipeline {
namespace fs = std::filesystem;

// Reads and hashes every file, in parallel, keeping their bytes while the run's `kept_bytes`
// (shared by its projects) stays within kKeptBytesBudget. A file whose stamp `index` holds
// is not read: its hash and scan results come from there, its bytes when a phase needs them.
void ProjectRun::read_all(std::atomic<std::size_t>& kept_bytes, const FileIndex* index) {
  kept_bytes_ = &kept_bytes;
  std::vector<std::size_t> all(files_.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<std::optional<Diagnostic>> problems(files_.size());
  std::vector<std::size_t> sizes(files_.size());
  // When every file fits in what is left of the budget (discovery's stamps give the sizes),
  // each keeps its bytes and no summary is needed; the summaries cost more than the few
  // rereads they would save there.
  std::size_t total = 0;
  for (const FileState& f : files_) total += f.file.stamp.size;
  const bool all_fit = kept_bytes.load() + total <= kKeptBytesBudget;
  parallel_over(all, [&](std::size_t i) {
    if (index) {
      FileState& f = files_[i];
      // Seen by discovery, before the read: a later write moves it.
      if (const FileIndexEntry* entry = index->unchanged(f.file.absolute, f.file.stamp)) {
        f.readable = true;
        f.from_index = true;
        f.content_hash = entry->content_hash;
        f.indexed_scans = &entry->scans;
        f.defined_classes = entry->class_names;
        f.tokens = entry->tokens;
        f.handed_self = entry->handed_self;
        sizes[i] = f.file.stamp.size;
        return;
      }
    }
    ReadOutcome outcome = read_source(files_[i].file.absolute, files_[i].file.display);
    files_[i].readable = !outcome.problem;
    files_[i].content_hash = XXH3_64bits(outcome.content.data(), outcome.content.size());
    sizes[i] = outcome.content.size();
    problems[i] = std::move(outcome.problem);
    if (!files_[i].readable || (all_fit && keep_within_budget(files_[i], std::move(outcome.content)))) return;
    // The bytes in hand answer the prefilter now. Only a file it passes and does not defer is
    // parsed for sure: its bytes are kept, within the budget, for the parse. The others are
    // summarised (their class names and identifier tokens) for the widening searches, which then
    // read a file again only where the summary says it may match.
    FileState& f = files_[i];
    const bool hit = initial_prefilter_.found_in(f.is_cpp, outcome.content);
    f.scans.push_back({initial_prefilter_.id(f.is_cpp), hit});
    bool deferred = false;
    if (hit && !f.is_cpp && defer_context_) {
      deferred = !initial_prefilter_.may_hold_seed(outcome.content);
      f.scans.push_back({initial_prefilter_.seed_id(), !deferred});
    }
    if (hit && !deferred) {
      keep_within_budget(f, std::move(outcome.content));
      return;
    }
    f.defined_classes = scan_class_names(outcome.content, f.is_cpp);
    f.tokens = TokenSummary(token_summary(outcome.content));
    if (!f.is_cpp) f.handed_self = python::names_handed_self(outcome.content);
  });
  for (std::size_t i = 0; i < files_.size(); ++i) {
    result_.stats.bytes_read += sizes[i];
    if (files_[i].from_index) ++result_.stats.files_unread;
    if (problems[i] && is_reported(files_[i])) {
      result_.diagnostics.push_back(std::move(*problems[i]));
      ++result_.stats.files_failed;
    }
  }
}

// The bytes of `f` as first read: the kept copy, else read again (a phase keeps them only
// while it works on the file); empty, and `f.changed` set, when the file changed since or
// cannot be read any more. Each file is worked on by one worker at a time.
FileBytes ProjectRun::reread(FileState& f) {
  if (f.kept) return FileBytes::kept(*f.kept);
  ReadOutcome outcome = read_source(f.file.absolute, f.file.display);
  bytes_reread_.fetch_add(outcome.content.size(), std::memory_order_relaxed);
  if (outcome.problem || XXH3_64bits(outcome.content.data(), outcome.content.size()) != f.content_hash) {
    f.changed = true;
    return {};
  }
  // A file read again for the first time (one the index knew, or one read_all summarised
  // instead of keeping) is one a search may match or a parse needs: its bytes are kept for the
  // later phases, within the budget, rather than read once more by each.
  if (!f.read_once && keep_reads_) {
    f.read_once = true;
    if (keep_within_budget(f, std::move(outcome.content))) return FileBytes::kept(*f.kept);
  }
  return FileBytes::read(std::move(outcome.content));
}

// Whether `f` still holds the bytes first read, for a file whose facts come from the cache:
// hashed through a fixed buffer, not read into memory as reread() would. A file the file index
// knew is not read: the stamp the index took its hash by (discovery's stat; a write moves its
// change time) is taken again. Hashing those was 11 MB read, 5% of a pre-commit-sized run on
// vllm-omni 0.30.0. Sets `f.changed` when not.
bool ProjectRun::unchanged_on_disk(FileState& f) {
  if (f.kept) return true;
  if (f.from_index) {
    struct stat st {};
    if (::stat(f.file.absolute.c_str(), &st) != 0 || !(stamp_from(st) == f.file.stamp)) f.changed = true;
    return !f.changed;
  }
  const std::optional<FileHash> now = hash_regular_file(f.file.absolute);
  if (now) bytes_reread_.fetch_add(now->size, std::memory_order_relaxed);
  if (!now || now->hash != f.content_hash) f.changed = true;
  return !f.changed;
}

// Keeps `bytes` as `f`'s while the run's kept bytes stay within kKeptBytesBudget; `bytes` is
// left untouched otherwise.
bool ProjectRun::keep_within_budget(FileState& f, std::string&& bytes) {
  const std::size_t size = bytes.size();
  if (kept_bytes_->fetch_add(size, std::memory_order_relaxed) + size > kKeptBytesBudget) {
    kept_bytes_->fetch_sub(size, std::memory_order_relaxed);
    return false;
  }
  f.kept = std::move(bytes);
  return true;
}

}  // namespace kvlint::pipeline
