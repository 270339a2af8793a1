// Per-file analysis cache: key = xxh3-128 of (the file content's XXH3-64, tool version,
// config fingerprint and location, vocabulary, path, module name); value = the
// file's facts (their binary form, facts_binary.hpp) and its analysis diagnostics.
// One file, loaded once, written atomically (temp + rename) at the end and only
// when something changed.
//
// Files in the cache directory are sealed: a header line with the format and an
// xxh3-128 checksum of the CBOR payload that follows. Anything truncated,
// corrupted, foreign or nested too deeply decodes to nothing and is rebuilt.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzers/facts/facts.hpp"
#include "analyzers/facts/vocabulary.hpp"
#include "rules/finding.hpp"
#include "tools/kvlint/engine/file_writes.hpp"

namespace kvlint {

struct CacheKeyInputs {
  // XXH3-64 of the file's bytes, as the run (or the file index) hashed them: a lookup needs no
  // second read of a file whose facts the cache holds.
  std::uint64_t content_hash = 0;
  std::string_view tool_version;
  std::string_view config_fingerprint;
  std::string_view vocabulary_signature;  // facts::signature of the vocabulary analysed with
  std::string_view path;
  std::string_view module_name;
  // Where the configuration lives (its file, or its root directory): the same
  // settings in two directories resolve paths differently, so they never share.
  std::string_view config_location;
};

// 32 hex digits.
std::string cache_key(const CacheKeyInputs& inputs);

// A file other than the analysed one that its result depends on (a header a C++ file
// includes), or a path where a missing header was looked for: the result holds while each
// keeps its bytes, or stays absent (no regular file there).
struct FileDependency {
  std::string path;                           // absolute
  std::optional<std::uint64_t> content_hash;  // XXH3-64 of the bytes; nullopt: must stay absent
  bool operator==(const FileDependency&) const = default;
};

struct CachedAnalysis {
  facts::FileFacts facts;
  std::vector<Diagnostic> diagnostics;
  // Checked by the engine on lookup (the key covers the file's own bytes and command only).
  std::vector<FileDependency> dependencies;
};

// The decoded contents of facts-cache.cbor.
struct ResultCacheContents {
  struct Entry {
    std::string path;  // absolute path of the file the entry was computed from
    // The facts, diagnostics and dependencies in the binary facts form (facts_binary.hpp),
    // decoded only by a lookup, straight into the facts. Shared so a lookup decodes it
    // outside the lock.
    std::shared_ptr<const std::vector<std::uint8_t>> data;
  };
  std::string tool_version;
  std::map<std::string, Entry> entries;
};

// Decodes the bytes of a facts-cache.cbor file. Safe on any input (a libFuzzer
// target calls it): nullopt unless the bytes are a whole, intact cache file of
// this format; nesting is bounded, nothing recurses with the input's depth.
std::optional<ResultCacheContents> decode_result_cache(std::string_view bytes);
// A cache file around `payload`: "kvlint-cache <format> <xxh3-128 of payload>\n" + payload.
std::string seal_cache_payload(std::string_view payload);
// The payload of such a file, or nullopt when the header, the format or the checksum does not
// match (truncated, corrupted, foreign).
std::optional<std::string_view> unseal_cache_payload(std::string_view bytes);
// The whole content of a regular file, not following a symbolic link and never blocking on a
// FIFO; nullopt when absent or anything else. For the cache's own files.
std::optional<std::string> read_regular_file(const std::filesystem::path& path);
std::string encode_result_cache(const ResultCacheContents& contents);

class ResultCache {
 public:
  // Loads `directory`/facts-cache.cbor when present. A corrupt or foreign
  // file is ignored; `note()` then says why.
  ResultCache(std::filesystem::path directory, std::string tool_version);

  // Thread-safe. `path` is the file's absolute path.
  std::optional<CachedAnalysis> lookup(const std::string& key);
  void store(const std::string& key, const std::string& path, const CachedAnalysis& analysis);

  // Writes the file (temp + rename) when something changed. Pruning: an entry
  // not used this run goes when its path was part of the run (the file changed
  // or no longer needs analysis) or no longer exists on disk (deleted or
  // renamed); entries for other files that still exist stay, so checking a
  // subset of a tree keeps the rest of the tree's entries. Returns false with
  // `note()` set on failure.
  bool save(const std::vector<std::string>& paths_in_run);

  const std::string& note() const { return note_; }
  // CBOR, not JSON text: the warm run's cost is mostly loading this file.
  std::filesystem::path file() const { return directory_ / "facts-cache.cbor"; }

 private:
  struct Entry {
    std::string path;  // absolute path of the file the entry was computed from
    // The entry's bytes (ResultCacheContents::Entry::data) as a view into `owner`: the loaded
    // file's bytes, shared by every entry loaded from it (one copy each was 4% of a
    // pre-commit-sized run), or the bytes store() wrote.
    std::shared_ptr<const std::string> owner;
    std::string_view data;
    bool touched = false;
  };
  std::filesystem::path directory_;
  std::string tool_version_;
  std::map<std::string, Entry> entries_;
  std::mutex mutex_;
  bool dirty_ = false;
  std::string note_;
};

// Creates the cache directory with a .gitignore that keeps git away from it; false with
// `error` set when it cannot be created.
bool prepare_cache_directory(const std::filesystem::path& directory, std::string& error);

// Why `directory` must not be used as a cache directory (a symbolic link: a
// committed `.kvlint_cache` link would redirect writes), or nullopt.
std::optional<std::string> cache_directory_problem(const std::filesystem::path& directory);

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
  std::size_t files_deferred = 0;
  std::size_t files_failed = 0;  // could not be analysed at all (a C++ file whose compile failed)
  // Every analysed file's dependencies (FileDependency): the memo holds while they do.
  std::vector<FileDependency> dependencies;
};
std::optional<RunMemo> load_run_memo(const std::filesystem::path& directory, const std::string& key);
// A memo that cannot be written only costs the next run its shortcut; false
// with `error` set says why.
bool save_run_memo(const std::filesystem::path& directory, const std::string& key, const RunMemo& memo,
                   std::string& error);

}  // namespace kvlint
