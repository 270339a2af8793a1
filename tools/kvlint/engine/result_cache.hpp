// Per-file analysis cache: key = xxh3-128 of (file content, tool version,
// config fingerprint, vocabulary, path, module name); value = the file's facts
// (JSON) and its analysis diagnostics. One file, loaded once, written
// atomically at the end and only when something changed.
#pragma once

#include <filesystem>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzers/facts/facts.hpp"
#include "analyzers/facts/vocabulary.hpp"
#include "rules/finding.hpp"

namespace kvlint {

struct CacheKeyInputs {
  std::string_view content;
  std::string_view tool_version;
  std::string_view config_fingerprint;
  const facts::Vocabulary* vocabulary = nullptr;
  std::string_view path;
  std::string_view module_name;
};

// 32 hex digits.
std::string cache_key(const CacheKeyInputs& inputs);

struct CachedAnalysis {
  facts::FileFacts facts;
  std::vector<Diagnostic> diagnostics;
};

class ResultCache {
 public:
  // Loads `directory`/facts-cache.cbor when present. A corrupt or foreign
  // file is ignored; `note()` then says why.
  ResultCache(std::filesystem::path directory, std::string tool_version);

  // Thread-safe.
  std::optional<CachedAnalysis> lookup(const std::string& key);
  void store(const std::string& key, const std::string& path, const CachedAnalysis& analysis);

  // Writes the file (temp + rename) when an entry was added or when entries for
  // paths seen this run went stale. Returns false with `note()` set on failure.
  bool save();

  const std::string& note() const { return note_; }
  // CBOR, not JSON text: the warm run's cost is mostly loading this file.
  std::filesystem::path file() const { return directory_ / "facts-cache.cbor"; }

 private:
  struct Entry {
    std::string path;
    // {"facts": ..., "diagnostics": [...]}, shared so a lookup converts it outside the lock.
    std::shared_ptr<const nlohmann::json> data;
    bool touched = false;
  };
  std::filesystem::path directory_;
  std::string tool_version_;
  std::map<std::string, Entry> entries_;
  std::mutex mutex_;
  bool dirty_ = false;
  std::string note_;
};

// The whole result of the last run, keyed by everything it was computed from
// (tool, configuration, every file's path and content hash, input diagnostics).
// Rules are project-wide, so a re-run over an unchanged tree reuses it instead of
// loading every file's facts; any change falls back to the per-file cache.
struct RunMemo {
  std::vector<Finding> findings;
  std::vector<Diagnostic> diagnostics;
  std::size_t suppressed = 0;
  std::size_t files_analysed = 0;  // parsed or cached in the run that produced it
  std::size_t files_skipped = 0;
};
std::optional<RunMemo> load_run_memo(const std::filesystem::path& directory, const std::string& key);
// Best effort: a memo that cannot be written only costs the next run its shortcut.
void save_run_memo(const std::filesystem::path& directory, const std::string& key, const RunMemo& memo);

// Writes `content` to `target` atomically: a temp file in the same directory,
// fsync, rename. On failure nothing is left behind and the message says why.
bool write_file_atomically(const std::filesystem::path& target, std::string_view content, std::string& error);

}  // namespace kvlint
