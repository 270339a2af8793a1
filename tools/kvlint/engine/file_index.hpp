// The file index (.kvlint_cache/file-index.bin): for each file a run read, its stat stamp
// (device, inode, size, modification and change times), the XXH3-64 hash of its bytes, and
// what the run's text scans (the prefilter, the widening rounds' searches, the class-name
// scan) found in them. A later run that finds the same stamp takes the hash and the scan
// results from here instead of reading the file: a pre-commit-sized run then reads only the
// files it analyses, not the whole project (1,600 files, 24 MB, on vllm-omni 0.30.0), as
// git's index and ruff's cache trust a file's stat.
//
// A stamp is trusted only when the file's modification and change times lie at least
// kRacyWindow before the run that recorded it began: a write in the same clock tick as that
// run's read could otherwise leave the stamp unchanged (git's "racily clean" entries). Bytes
// read later in a run are checked against the hash, so an index that is wrong all the same
// (a clock set back, a filesystem that keeps no change time) shows as "changed while being
// checked", never as facts of other bytes.
//
// Sealed like the other cache files (seal_cache_payload); anything truncated, corrupted or
// from another build decodes to nothing, and the run reads every file.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/kvlint/engine/token_summary.hpp"

namespace kvlint {

struct FileStamp {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::uint64_t size = 0;
  std::int64_t modified_ns = 0;  // st_mtim, nanoseconds since the epoch
  std::int64_t changed_ns = 0;   // st_ctim: a write that restores the modification time still moves it
  bool operator==(const FileStamp&) const = default;
};

// The stamp of a file from its stat (symbolic links followed, as reading does).
FileStamp stamp_from(const struct stat& st);

// Both of the stamp's times lie at least kRacyWindow before `run_start`.
inline constexpr std::chrono::nanoseconds kRacyWindow = std::chrono::seconds(2);
bool settled_before(const FileStamp& stamp, std::chrono::system_clock::time_point run_start);

// One text scan of a file: `scan` names what was looked for (the engine's hash of the
// search's kind and needles), `hit` whether it was found.
struct ScanRecord {
  std::uint64_t scan = 0;
  bool hit = false;
  bool operator==(const ScanRecord&) const = default;
};

struct FileIndexEntry {
  FileStamp stamp;
  std::uint64_t content_hash = 0;                       // XXH3-64 of the bytes
  std::vector<ScanRecord> scans;                        // sorted by scan
  std::optional<std::vector<std::string>> class_names;  // the engine's class-name scan, when it ran
  std::optional<TokenSummary> tokens;                   // its token summary (token_summary.hpp), when made
  // Python, beside `tokens`: the names its bytes hand self to (python::names_handed_self), when
  // made and exact; the demand search answers from them instead of reading the file again.
  std::optional<std::vector<std::string>> handed_self;
  bool operator==(const FileIndexEntry&) const = default;
};

struct FileIndexContents {
  std::string tool_version;
  std::map<std::string, FileIndexEntry> entries;  // by absolute path
};

// Safe on any bytes (the result-cache fuzzer calls it): nullopt unless they are a whole,
// intact index file of this format.
std::optional<FileIndexContents> decode_file_index(std::string_view bytes);
std::string encode_file_index(const FileIndexContents& contents);

class FileIndex {
 public:
  // Loads `directory`/file-index.bin when present and written by `tool_version`.
  FileIndex(std::filesystem::path directory, std::string tool_version);

  // The entry of `path` when its stamp is still `now`. Safe to call from several threads
  // (nothing is recorded before the run's end).
  const FileIndexEntry* unchanged(const std::string& path, const FileStamp& now) const;
  // What this run learnt of `path` (absolute); replaces the loaded entry.
  void record(const std::string& path, FileIndexEntry entry);
  // Writes the file when an entry changed. Entries of files outside the run stay while the
  // file exists (checking a subset keeps the rest of the tree's); those of files in the run
  // that were not recorded again go. False with `error` set when it cannot be written.
  bool save(const std::vector<std::string>& paths_in_run, std::string& error);

  std::filesystem::path file() const { return directory_ / "file-index.bin"; }

 private:
  std::filesystem::path directory_;
  std::string tool_version_;
  std::map<std::string, FileIndexEntry> loaded_;
  std::map<std::string, FileIndexEntry> recorded_;
};

}  // namespace kvlint
