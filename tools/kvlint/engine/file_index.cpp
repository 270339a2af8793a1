#include "tools/kvlint/engine/file_index.hpp"

#include <algorithm>
#include <deque>
#include <set>
#include <unordered_map>

#include "analyzers/facts/facts_binary.hpp"
#include "tools/kvlint/engine/result_cache.hpp"
#include "tools/kvlint/engine/token_summary.hpp"

namespace kvlint {
namespace fs = std::filesystem;

namespace {

// The payload's own tag and layout version, inside the seal (which names the cache format).
constexpr std::string_view kIndexTag = "kvlint file index";
// 2: token summaries; 3: packed against one dictionary; 4: the names handed self
constexpr std::uint64_t kIndexLayout = 4;

std::int64_t nanoseconds(const struct timespec& t) {
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + static_cast<std::int64_t>(t.tv_nsec);
}

// The tokens of every entry's summary as ids of one dictionary, and each entry's ids packed.
// Summaries already packed against `reused` keep their ids' order, so a save after a run
// that changed a few files spells out only those; a token no entry holds any more is dropped.
struct PackedTokens {
  TokenDictionary dictionary;
  std::map<std::string_view, std::string> ids;  // by path
};

PackedTokens pack_tokens(const FileIndexContents& contents) {
  const TokenDictionary* reused = nullptr;
  for (const auto& [path, entry] : contents.entries)
    if (entry.tokens && entry.tokens->is_packed()) {
      reused = entry.tokens->dictionary().get();
      break;
    }
  // Per entry, its tokens: ids of `reused`, or spelled out (string_views into `texts`).
  std::vector<char> used(reused ? reused->size() : 0, 0);
  std::deque<std::string> texts;  // stable addresses for the views into them
  std::vector<std::pair<std::string_view, std::vector<std::string_view>>> spelled;
  std::unordered_map<std::string_view, std::size_t> frequency;
  for (const auto& [path, entry] : contents.entries) {
    if (!entry.tokens) continue;
    if (reused && entry.tokens->dictionary().get() == reused) {
      each_packed_id(entry.tokens->ids(), reused->size(), [&](std::size_t id) { used[id] = 1; });
      continue;
    }
    // A text summary is the entry's own; one packed against another dictionary is spelled out.
    std::string scratch;
    std::string_view all = entry.tokens->text(scratch);
    if (entry.tokens->is_packed()) all = texts.emplace_back(std::move(scratch));
    std::vector<std::string_view> tokens;
    for (std::size_t at = 1; at < all.size();) {
      const std::size_t end = all.find('\0', at);
      if (end == std::string_view::npos) break;
      tokens.push_back(all.substr(at, end - at));
      ++frequency[tokens.back()];
      at = end + 1;
    }
    spelled.emplace_back(path, std::move(tokens));
  }
  PackedTokens out;
  std::vector<std::size_t> renumbered(used.size(), 0);
  std::unordered_map<std::string_view, std::size_t> id_of;
  for (std::size_t id = 0; id < used.size(); ++id)
    if (used[id]) {
      renumbered[id] = out.dictionary.size();
      out.dictionary.add(reused->token(id));
      if (!spelled.empty()) id_of.emplace(reused->token(id), renumbered[id]);
    }
  // New tokens, the commonest first: their gaps in the packed ids are then mostly one byte.
  std::vector<std::pair<std::size_t, std::string_view>> added;
  for (const auto& [token, count] : frequency)
    if (!id_of.count(token)) added.emplace_back(count, token);
  std::sort(added.begin(), added.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (const auto& [count, token] : added) {
    id_of.emplace(token, out.dictionary.size());
    out.dictionary.add(token);
  }
  auto pack = [](std::vector<std::size_t>& ids) {
    std::sort(ids.begin(), ids.end());
    std::string packed;
    std::size_t previous = 0;
    for (std::size_t id : ids) {
      append_packed_id(packed, id - previous);
      previous = id;
    }
    return packed;
  };
  std::vector<std::size_t> ids;
  for (const auto& [path, entry] : contents.entries)
    if (entry.tokens && reused && entry.tokens->dictionary().get() == reused) {
      ids.clear();
      each_packed_id(entry.tokens->ids(), reused->size(),
                     [&](std::size_t id) { ids.push_back(renumbered[id]); });
      out.ids.emplace(path, pack(ids));
    }
  for (const auto& [path, tokens] : spelled) {
    ids.clear();
    for (std::string_view token : tokens) ids.push_back(id_of.at(token));
    out.ids.emplace(path, pack(ids));
  }
  return out;
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
  const PackedTokens tokens = pack_tokens(contents);
  out.varint(tokens.dictionary.size());
  for (std::size_t id = 0; id < tokens.dictionary.size(); ++id) out.text(tokens.dictionary.token(id));
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
    for (const auto* names : {&entry.class_names, &entry.handed_self}) {
      out.varint(*names ? 1 : 0);
      if (!*names) continue;
      out.varint((*names)->size());
      for (const auto& name : **names) out.text(name);
    }
    out.varint(entry.tokens ? 1 : 0);
    if (entry.tokens) out.text(tokens.ids.at(path));
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
    auto dictionary = std::make_shared<TokenDictionary>();
    for (std::size_t n = in.count(), id = 0; id < n; ++id) dictionary->add(in.text());
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
      for (auto* names : {&entry.class_names, &entry.handed_self}) {
        if (!in.flag()) continue;
        names->emplace(in.count());
        for (auto& name : **names) name = in.text();
      }
      if (in.flag()) {
        const std::string_view ids = in.text();
        if (!each_packed_id(ids, dictionary->size(), [](std::size_t) {})) return std::nullopt;
        entry.tokens = TokenSummary::packed(dictionary, std::string(ids));
      }
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
