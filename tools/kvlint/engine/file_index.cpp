#include "tools/kvlint/engine/file_index.hpp"

#include <set>

#include "analyzers/facts/facts_binary.hpp"
#include "tools/kvlint/engine/result_cache.hpp"

namespace kvlint {
namespace fs = std::filesystem;

namespace {

// The payload's own tag and layout version, inside the seal (which names the cache format).
constexpr std::string_view kIndexTag = "kvlint file index";
constexpr std::uint64_t kIndexLayout = 2;  // 2: token summaries

std::int64_t nanoseconds(const struct timespec& t) {
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + static_cast<std::int64_t>(t.tv_nsec);
}

}  // namespace

FileStamp stamp_from(const struct stat& st) {
  return FileStamp{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
                   static_cast<std::uint64_t>(st.st_size), nanoseconds(st.st_mtim), nanoseconds(st.st_ctim)};
}

bool settled_before(const FileStamp& stamp, std::chrono::system_clock::time_point run_start) {
  const std::int64_t limit =
      std::chrono::duration_cast<std::chrono::nanoseconds>((run_start - kRacyWindow).time_since_epoch())
          .count();
  return stamp.modified_ns < limit && stamp.changed_ns < limit;
}

std::string encode_file_index(const FileIndexContents& contents) {
  facts::BinaryWriter out;
  out.text(kIndexTag);
  out.varint(kIndexLayout);
  out.text(contents.tool_version);
  out.varint(contents.entries.size());
  for (const auto& [path, entry] : contents.entries) {
    out.text(path);
    out.varint(entry.stamp.device);
    out.varint(entry.stamp.inode);
    out.varint(entry.stamp.size);
    out.varint(static_cast<std::uint64_t>(entry.stamp.modified_ns));
    out.varint(static_cast<std::uint64_t>(entry.stamp.changed_ns));
    out.varint(entry.content_hash);
    out.varint(entry.scans.size());
    for (const ScanRecord& scan : entry.scans) {
      out.varint(scan.scan);
      out.varint(scan.hit ? 1 : 0);
    }
    out.varint(entry.class_names ? 1 : 0);
    if (entry.class_names) {
      out.varint(entry.class_names->size());
      for (const auto& name : *entry.class_names) out.text(name);
    }
    out.varint(entry.tokens ? 1 : 0);
    if (entry.tokens) out.text(*entry.tokens);
  }
  return seal_cache_payload(out.bytes());
}

std::optional<FileIndexContents> decode_file_index(std::string_view bytes) {
  const std::optional<std::string_view> payload = unseal_cache_payload(bytes);
  if (!payload) return std::nullopt;
  try {
    facts::BinaryReader in(*payload);
    if (in.text() != kIndexTag || in.varint() != kIndexLayout) return std::nullopt;
    FileIndexContents contents;
    contents.tool_version = in.text();
    const std::size_t entries = in.count();
    for (std::size_t e = 0; e < entries; ++e) {
      std::string path(in.text());
      FileIndexEntry entry;
      entry.stamp.device = in.varint();
      entry.stamp.inode = in.varint();
      entry.stamp.size = in.varint();
      entry.stamp.modified_ns = static_cast<std::int64_t>(in.varint());
      entry.stamp.changed_ns = static_cast<std::int64_t>(in.varint());
      entry.content_hash = in.varint();
      entry.scans.resize(in.count());
      for (ScanRecord& scan : entry.scans) {
        scan.scan = in.varint();
        scan.hit = in.flag();
      }
      if (in.flag()) {
        entry.class_names.emplace(in.count());
        for (auto& name : *entry.class_names) name = in.text();
      }
      if (in.flag()) entry.tokens.emplace(in.text());
      if (!contents.entries.emplace(std::move(path), std::move(entry)).second) return std::nullopt;
    }
    if (in.left() != 0) return std::nullopt;
    return contents;
  } catch (const std::exception&) {
    return std::nullopt;  // truncated or malformed: the run reads every file
  }
}

FileIndex::FileIndex(fs::path directory, std::string tool_version)
    : directory_(std::move(directory)), tool_version_(std::move(tool_version)) {
  const std::optional<std::string> bytes = read_regular_file(file());
  if (!bytes) return;
  std::optional<FileIndexContents> contents = decode_file_index(*bytes);
  if (contents && contents->tool_version == tool_version_) loaded_ = std::move(contents->entries);
}

const FileIndexEntry* FileIndex::unchanged(const std::string& path, const FileStamp& now) const {
  auto it = loaded_.find(path);
  return it != loaded_.end() && it->second.stamp == now ? &it->second : nullptr;
}

void FileIndex::record(const std::string& path, FileIndexEntry entry) {
  recorded_.insert_or_assign(path, std::move(entry));
}

bool FileIndex::save(const std::vector<std::string>& paths_in_run, std::string& error) {
  const std::set<std::string> in_run(paths_in_run.begin(), paths_in_run.end());
  FileIndexContents contents;
  contents.tool_version = tool_version_;
  bool changed = false;
  for (auto& [path, entry] : loaded_) {
    if (recorded_.count(path)) continue;
    std::error_code ec;
    if (!in_run.count(path) && fs::is_regular_file(path, ec))
      contents.entries.emplace(path, std::move(entry));
    else
      changed = true;  // in the run but not recorded again (changed, racy, unreadable), or gone
  }
  for (auto& [path, entry] : recorded_) {
    auto it = loaded_.find(path);
    changed = changed || it == loaded_.end() || !(it->second == entry);
    contents.entries.insert_or_assign(path, std::move(entry));
  }
  loaded_.clear();
  recorded_.clear();
  if (!changed) return true;
  return prepare_cache_directory(directory_, error) &&
         write_file_atomically(file(), encode_file_index(contents), error, Durability::Unsynced);
}

}  // namespace kvlint
