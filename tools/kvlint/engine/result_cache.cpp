#include "tools/kvlint/engine/result_cache.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "analyzers/facts/facts_binary.hpp"
#include "analyzers/facts/facts_json.hpp"
#include "tools/kvlint/engine/bounded_json.hpp"

namespace kvlint {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// 2: CBOR; 3: sealed (header with checksum); 4: findings' fixes; 5: each entry's data a CBOR byte string;
// 6: each entry's data in the binary facts form (facts_binary.hpp), not CBOR; 7: keyed by the
// content's XXH3-64, not the content
constexpr int kCacheFormat = 7;

void add_field(std::string& out, std::string_view field) {
  // Length-prefixed so fields cannot run into each other.
  out += std::to_string(field.size());
  out += ':';
  out += field;
}

json diagnostic_to_json(const Diagnostic& d) {
  return json{
      {"path", d.path}, {"line", d.line}, {"column", d.column}, {"kind", d.kind}, {"message", d.message}};
}

Diagnostic diagnostic_from_json(const json& j) {
  Diagnostic d;
  d.path = j.at("path").get<std::string>();
  d.line = j.at("line").get<uint32_t>();
  d.column = j.at("column").get<uint32_t>();
  d.kind = j.at("kind").get<std::string>();
  d.message = j.at("message").get<std::string>();
  return d;
}

json location_to_json(const facts::Location& l) {
  return json::array({l.file, l.line, l.column, l.end_line, l.end_column});
}

facts::Location location_from_json(const json& j) {
  return facts::Location{j.at(0).get<std::string>(), j.at(1).get<uint32_t>(), j.at(2).get<uint32_t>(),
                         j.at(3).get<uint32_t>(), j.at(4).get<uint32_t>()};
}

json fix_to_json(const std::optional<Fix>& fix) {
  if (!fix) return nullptr;
  json edits = json::array();
  for (const auto& e : fix->edits) edits.push_back(json::array({e.begin, e.end, e.replacement}));
  return json{{"description", fix->description}, {"safe", fix->safe}, {"edits", std::move(edits)}};
}

std::optional<Fix> fix_from_json(const json& j) {
  if (j.is_null()) return std::nullopt;
  Fix fix;
  fix.description = j.at("description").get<std::string>();
  fix.safe = j.at("safe").get<bool>();
  for (const auto& e : j.at("edits"))
    fix.edits.push_back(
        FixEdit{e.at(0).get<uint32_t>(), e.at(1).get<uint32_t>(), e.at(2).get<std::string>()});
  return fix;
}

json finding_to_json(const Finding& f) {
  json related = json::array();
  for (const auto& r : f.related)
    related.push_back(json{{"loc", location_to_json(r.loc)}, {"message", r.message}});
  return json{{"code", f.code},
              {"severity", static_cast<int>(f.severity)},
              {"loc", location_to_json(f.loc)},
              {"owner", f.owner_class},
              {"message", f.message},
              {"related", std::move(related)},
              {"member", f.member},
              {"fingerprint", f.fingerprint},
              {"fix", fix_to_json(f.fix)}};
}

Finding finding_from_json(const json& j) {
  Finding f;
  f.code = j.at("code").get<std::string>();
  f.severity = static_cast<Severity>(j.at("severity").get<int>());
  f.loc = location_from_json(j.at("loc"));
  f.owner_class = j.at("owner").get<std::string>();
  f.message = j.at("message").get<std::string>();
  for (const auto& r : j.at("related"))
    f.related.push_back(RelatedLocation{location_from_json(r.at("loc")), r.at("message").get<std::string>()});
  f.member = j.at("member").get<std::string>();
  f.fingerprint = j.at("fingerprint").get<std::string>();
  f.fix = fix_from_json(j.at("fix"));
  return f;
}

fs::path run_memo_file(const fs::path& directory) {
  return directory / "last-run.cbor";
}

std::string seal(const json& document) {
  const std::vector<std::uint8_t> payload = json::to_cbor(document);
  return seal_cache_payload(std::string_view(reinterpret_cast<const char*>(payload.data()), payload.size()));
}

// The payload of a sealed file, decoded, or nullopt (see unseal_cache_payload).
std::optional<json> unseal(std::string_view bytes) {
  const std::optional<std::string_view> payload = unseal_cache_payload(bytes);
  if (!payload) return std::nullopt;
  std::string ignored;  // a cache file that cannot be read is rebuilt
  return parse_json_bounded(*payload, ignored, JsonEncoding::Cbor);
}

// [[path, "hash in hex"], [path, null], ...]: null for a path that must stay absent.
json dependencies_to_json(const std::vector<FileDependency>& dependencies) {
  json out = json::array();
  for (const auto& d : dependencies)
    out.push_back(
        json::array({d.path, d.content_hash ? json(fmt::format("{:016x}", *d.content_hash)) : json()}));
  return out;
}

std::vector<FileDependency> dependencies_from_json(const json& in) {
  std::vector<FileDependency> out;
  for (const auto& d : in) {
    FileDependency dependency;
    dependency.path = d.at(0).get<std::string>();
    if (!d.at(1).is_null()) dependency.content_hash = std::stoull(d.at(1).get<std::string>(), nullptr, 16);
    out.push_back(std::move(dependency));
  }
  return out;
}

}  // namespace

std::optional<std::string> read_regular_file(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string content;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (ok) content.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[1 << 16];
  while (ok) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      ok = false;
      break;
    }
    content.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (!ok) return std::nullopt;
  return content;
}

std::optional<std::string_view> unseal_cache_payload(std::string_view bytes) {
  const std::string header = fmt::format("kvlint-cache {} ", kCacheFormat);
  constexpr std::size_t kDigestLength = 32;
  if (!bytes.starts_with(header) || bytes.size() < header.size() + kDigestLength + 1 ||
      bytes[header.size() + kDigestLength] != '\n')
    return std::nullopt;
  const std::string_view digest_text = bytes.substr(header.size(), kDigestLength);
  const std::string_view payload = bytes.substr(header.size() + kDigestLength + 1);
  const XXH128_hash_t digest = XXH3_128bits(payload.data(), payload.size());
  if (digest_text != fmt::format("{:016x}{:016x}", digest.high64, digest.low64)) return std::nullopt;
  return payload;
}

std::optional<RunMemo> load_run_memo(const fs::path& directory, const std::string& key) {
  const std::optional<std::string> bytes = read_regular_file(run_memo_file(directory));
  if (!bytes) return std::nullopt;
  const std::optional<json> doc = unseal(*bytes);
  if (!doc) return std::nullopt;
  try {
    if (doc->at("key").get<std::string>() != key) return std::nullopt;
    RunMemo memo;
    for (const auto& f : doc->at("findings")) memo.findings.push_back(finding_from_json(f));
    for (const auto& d : doc->at("diagnostics")) memo.diagnostics.push_back(diagnostic_from_json(d));
    memo.suppressed = doc->at("suppressed").get<std::size_t>();
    memo.files_analysed = doc->at("files_analysed").get<std::size_t>();
    memo.files_skipped = doc->at("files_skipped").get<std::size_t>();
    memo.files_deferred = doc->at("files_deferred").get<std::size_t>();
    memo.files_failed = doc->at("files_failed").get<std::size_t>();
    memo.dependencies = dependencies_from_json(doc->at("dependencies"));
    return memo;
  } catch (const std::exception&) {
    return std::nullopt;  // foreign shape: the run simply computes the result
  }
}

bool save_run_memo(const fs::path& directory, const std::string& key, const RunMemo& memo,
                   std::string& error) {
  json findings = json::array(), diagnostics = json::array();
  for (const auto& f : memo.findings) findings.push_back(finding_to_json(f));
  for (const auto& d : memo.diagnostics) diagnostics.push_back(diagnostic_to_json(d));
  const json doc{{"key", key},
                 {"findings", std::move(findings)},
                 {"diagnostics", std::move(diagnostics)},
                 {"suppressed", memo.suppressed},
                 {"files_analysed", memo.files_analysed},
                 {"files_skipped", memo.files_skipped},
                 {"files_deferred", memo.files_deferred},
                 {"files_failed", memo.files_failed},
                 {"dependencies", dependencies_to_json(memo.dependencies)}};
  // The result cache may have had nothing to write (every file too new to cache, so younger
  // than the mtime granularity), leaving the directory uncreated.
  if (!prepare_cache_directory(directory, error)) return false;
  return write_file_atomically(run_memo_file(directory), seal(doc), error, Durability::Unsynced);
}

std::string cache_key(const CacheKeyInputs& in) {
  std::string header;
  add_field(header, std::to_string(kCacheFormat));
  add_field(header, std::to_string(facts::kFactsJsonVersion));
  add_field(header, in.tool_version);
  add_field(header, in.config_fingerprint);
  add_field(header, in.config_location);
  add_field(header, in.vocabulary_signature);
  add_field(header, in.path);
  add_field(header, in.module_name);
  add_field(header, fmt::format("{:016x}", in.content_hash));
  const XXH128_hash_t digest = XXH3_128bits(header.data(), header.size());
  return fmt::format("{:016x}{:016x}", digest.high64, digest.low64);
}

namespace {

// A sealed file is built in one buffer: the header with room for the digest, the payload
// written after it, then the digest filled in (no copy of the payload to put a header before it).
std::string start_sealed(std::size_t payload_size) {
  std::string sealed = fmt::format("kvlint-cache {} {}\n", kCacheFormat, std::string(32, '0'));
  sealed.reserve(sealed.size() + payload_size);
  return sealed;
}

// The payload's digest into the placeholder at the end of the header line `sealed` starts with.
void put_seal_digest(std::string& sealed, const XXH128_hash_t& digest) {
  const std::string digest_text = fmt::format("{:016x}{:016x}", digest.high64, digest.low64);
  sealed.replace(sealed.find('\n') - digest_text.size(), digest_text.size(), digest_text);
}

void finish_sealed(std::string& sealed) {
  const std::size_t payload_start = sealed.find('\n') + 1;
  put_seal_digest(sealed, XXH3_128bits(sealed.data() + payload_start, sealed.size() - payload_start));
}

}  // namespace

std::string seal_cache_payload(std::string_view payload) {
  std::string sealed = start_sealed(payload.size());
  sealed += payload;
  finish_sealed(sealed);
  return sealed;
}

namespace {

// Reads what encode_result_cache writes: CBOR items of definite length, in its order. Anything
// else is not a cache of this format. Bounds-checked and flat (nothing nests deeper than the
// fixed shape), so safe on any input; byte strings are taken whole, not byte by byte as
// nlohmann's CBOR reader takes them (that was a tenth of a pre-commit run).
class CacheReader {
 public:
  explicit CacheReader(std::string_view bytes) : bytes_(bytes) {}

  // The length (or count) in the head of an item of major type `major`.
  std::optional<std::uint64_t> head(unsigned major) {
    if (at_ >= bytes_.size()) return std::nullopt;
    const auto first = static_cast<unsigned char>(bytes_[at_++]);
    if (first >> 5 != major) return std::nullopt;
    const unsigned info = first & 31u;
    if (info < 24) return info;
    if (info > 27) return std::nullopt;  // indefinite lengths and reserved values
    const std::size_t width = std::size_t{1} << (info - 24);
    if (bytes_.size() - at_ < width) return std::nullopt;
    std::uint64_t length = 0;
    for (std::size_t k = 0; k < width; ++k) length = length << 8 | static_cast<unsigned char>(bytes_[at_++]);
    return length;
  }
  // A text string (major 2 for a byte string).
  std::optional<std::string_view> string(unsigned major = 3) {
    const std::optional<std::uint64_t> length = head(major);
    if (!length || *length > bytes_.size() - at_) return std::nullopt;
    const std::string_view out = bytes_.substr(at_, static_cast<std::size_t>(*length));
    at_ += out.size();
    return out;
  }
  bool key(std::string_view expected) { return string() == std::optional<std::string_view>(expected); }
  bool at_end() const { return at_ == bytes_.size(); }

 private:
  std::string_view bytes_;
  std::size_t at_ = 0;
};

}  // namespace

namespace {

// The entries of a facts-cache.cbor file, in file order, as views into `bytes`: `add(key, path,
// data)` for each; false (after some calls, maybe) unless the bytes are a whole, intact cache
// file of this format. `version` gets the tool version it names.
template <typename Add>
bool read_cache_entries(std::string_view bytes, std::string_view& version, const Add& add) {
  const std::optional<std::string_view> payload = unseal_cache_payload(bytes);
  if (!payload) return false;
  CacheReader in(*payload);
  if (in.head(5) != 2u || !in.key("tool_version")) return false;
  const std::optional<std::string_view> named = in.string();
  if (!named || !in.key("entries")) return false;
  version = *named;
  const std::optional<std::uint64_t> count = in.head(5);
  if (!count) return false;
  // Each entry is read before the next is counted: a huge count fails on the bytes, not a reserve.
  for (std::uint64_t k = 0; k < *count; ++k) {
    const std::optional<std::string_view> key = in.string();
    if (!key || in.head(5) != 2u || !in.key("path")) return false;
    const std::optional<std::string_view> path = in.string();
    if (!path || !in.key("data")) return false;
    const std::optional<std::string_view> data = in.string(2);
    if (!data) return false;
    add(*key, *path, *data);
  }
  return in.at_end();
}

}  // namespace

std::optional<ResultCacheContents> decode_result_cache(std::string_view bytes) {
  ResultCacheContents out;
  std::string_view version;
  const bool whole = read_cache_entries(
      bytes, version, [&](std::string_view key, std::string_view path, std::string_view data) {
        out.entries.emplace(
            std::string(key),
            ResultCacheContents::Entry{std::string(path), std::make_shared<const std::vector<std::uint8_t>>(
                                                              data.begin(), data.end())});
      });
  if (!whole) return std::nullopt;
  out.tool_version = version;
  return out;
}

namespace {

// The head of a CBOR data item (RFC 8949 3): major type and length, big endian.
void append_cbor_head(std::string& out, unsigned major, std::uint64_t length) {
  const auto type = static_cast<char>(major << 5);
  if (length < 24) {
    out += static_cast<char>(type | static_cast<char>(length));
    return;
  }
  const int bytes = length <= 0xff ? 1 : length <= 0xffff ? 2 : length <= 0xffffffffu ? 4 : 8;
  out += static_cast<char>(type | static_cast<char>(bytes == 1   ? 24
                                                    : bytes == 2 ? 25
                                                    : bytes == 4 ? 26
                                                                 : 27));
  for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8)
    out += static_cast<char>((length >> shift) & 0xff);
}

void append_cbor_text(std::string& out, std::string_view text) {
  append_cbor_head(out, 3, text.size());
  out += text;
}

// A sealed cache file as the pieces to write in order: the framing (header, CBOR heads, keys,
// paths) in one buffer, the entries' bytes where they already are. Not one buffer of the whole
// file: copying every entry into it, and its page faults, were a tenth of a pre-commit-sized run.
class SealedPieces {
 public:
  SealedPieces() : framing_(start_sealed(0)) { pieces_.push_back({nullptr, 0, framing_.size()}); }
  std::string& framing() { return framing_; }
  // Marks the framing appended since the last call as the next piece, then `bytes` (which must
  // outlive the pieces) as the one after.
  void add_bytes(std::string_view bytes) {
    close_framing();
    if (!bytes.empty()) pieces_.push_back({bytes.data(), 0, bytes.size()});
  }
  // The pieces, the header's digest filled in; views into this object and the added bytes.
  std::vector<std::string_view> finish() {
    close_framing();
    std::vector<std::string_view> out;
    out.reserve(pieces_.size());
    for (const Piece& p : pieces_) out.emplace_back(p.bytes ? p.bytes : framing_.data() + p.at, p.size);
    XXH3_state_t state;
    XXH3_INITSTATE(&state);
    XXH3_128bits_reset(&state);
    for (std::size_t k = 1; k < out.size(); ++k) XXH3_128bits_update(&state, out[k].data(), out[k].size());
    put_seal_digest(framing_, XXH3_128bits_digest(&state));  // same size: the views stay valid
    return out;
  }

 private:
  struct Piece {
    const char* bytes;  // added bytes; null for framing, at `at` in framing_ (which may still grow)
    std::size_t at;
    std::size_t size;
  };
  void close_framing() {
    if (framing_.size() > framed_) pieces_.push_back({nullptr, framed_, framing_.size() - framed_});
    framed_ = framing_.size();
  }
  std::string framing_;
  std::size_t framed_ = framing_.size();
  std::vector<Piece> pieces_;
};

// Item by item, not through a DOM. `each(visit)` calls visit(key, path, data) per entry, in
// key order; `count` is how many.
template <typename Each>
void add_cache_items(SealedPieces& out, std::string_view tool_version, std::size_t count, const Each& each) {
  std::string& framing = out.framing();
  append_cbor_head(framing, 5, 2);
  append_cbor_text(framing, "tool_version");
  append_cbor_text(framing, tool_version);
  append_cbor_text(framing, "entries");
  append_cbor_head(framing, 5, count);
  each([&](std::string_view key, std::string_view path, std::string_view data) {
    append_cbor_text(framing, key);
    append_cbor_head(framing, 5, 2);
    append_cbor_text(framing, "path");
    append_cbor_text(framing, path);
    append_cbor_text(framing, "data");
    append_cbor_head(framing, 2, data.size());
    out.add_bytes(data);
  });
}

}  // namespace

std::string encode_result_cache(const ResultCacheContents& contents) {
  SealedPieces pieces;
  add_cache_items(pieces, contents.tool_version, contents.entries.size(), [&](const auto& visit) {
    for (const auto& [key, entry] : contents.entries)
      visit(key, entry.path,
            entry.data
                ? std::string_view(reinterpret_cast<const char*>(entry.data->data()), entry.data->size())
                : std::string_view());
  });
  std::string sealed;
  for (std::string_view piece : pieces.finish()) sealed += piece;
  return sealed;
}

ResultCache::ResultCache(fs::path directory, std::string tool_version)
    : directory_(std::move(directory)), tool_version_(std::move(tool_version)) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(file(), ec))) return;
  std::optional<std::string> bytes = read_regular_file(file());
  dirty_ = true;  // whatever was there is replaced unless it loads below
  // The entries keep views into the file's bytes, held once for all of them.
  auto owner = std::make_shared<const std::string>(bytes ? std::move(*bytes) : std::string());
  std::map<std::string, Entry> loaded;
  std::string_view version;
  const bool whole =
      bytes && read_cache_entries(
                   *owner, version, [&](std::string_view key, std::string_view path, std::string_view data) {
                     loaded.emplace(std::string(key), Entry{std::string(path), owner, data, false});
                   });
  if (!whole) {
    note_ = fmt::format(
        "ignoring unreadable cache {} (truncated, corrupted or from another kvlint); rebuilding it",
        file().string());
    return;
  }
  if (version != tool_version_) {
    note_ = fmt::format("cache {} is from another kvlint version; rebuilding it", file().string());
    return;
  }
  dirty_ = false;
  entries_ = std::move(loaded);
}

std::optional<CachedAnalysis> ResultCache::lookup(const std::string& key) {
  std::shared_ptr<const std::string> owner;  // keeps `data` alive outside the lock
  std::string_view data;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    it->second.touched = true;
    owner = it->second.owner;
    data = it->second.data;
  }
  try {
    facts::BinaryReader in(data);
    CachedAnalysis out;
    out.facts = facts::read_file_facts(in);
    out.diagnostics.resize(in.count());
    for (Diagnostic& d : out.diagnostics) {
      d.path = in.text();
      d.line = in.u32();
      d.column = in.u32();
      d.kind = in.text();
      d.message = in.text();
    }
    out.dependencies.resize(in.count());
    for (FileDependency& d : out.dependencies) {
      d.path = in.text();
      if (in.flag()) d.content_hash = in.varint();
    }
    if (in.left() != 0) throw facts::BinaryFormatError("trailing bytes");
    return out;
  } catch (const std::exception&) {
    std::lock_guard lock(mutex_);
    entries_.erase(key);  // a bad entry is re-analysed and replaced
    dirty_ = true;
    return std::nullopt;
  }
}

void ResultCache::store(const std::string& key, const std::string& path, const CachedAnalysis& analysis) {
  facts::BinaryWriter out;
  facts::write_file_facts(out, analysis.facts);
  out.varint(analysis.diagnostics.size());
  for (const Diagnostic& d : analysis.diagnostics) {
    out.text(d.path);
    out.varint(d.line);
    out.varint(d.column);
    out.text(d.kind);
    out.text(d.message);
  }
  out.varint(analysis.dependencies.size());
  for (const FileDependency& d : analysis.dependencies) {
    out.text(d.path);
    out.varint(d.content_hash ? 1 : 0);
    if (d.content_hash) out.varint(*d.content_hash);
  }
  auto owner = std::make_shared<const std::string>(out.bytes());
  const std::string_view data = *owner;
  std::lock_guard lock(mutex_);
  entries_[key] = Entry{path, std::move(owner), data, true};
  dirty_ = true;
}

bool ResultCache::save(const std::vector<std::string>& paths_in_run) {
  std::lock_guard lock(mutex_);
  const std::set<std::string> in_run(paths_in_run.begin(), paths_in_run.end());
  std::map<std::string, bool> exists;  // several entries may share a path
  for (auto it = entries_.begin(); it != entries_.end();) {
    bool keep = it->second.touched;
    if (!keep && !in_run.count(it->second.path)) {
      auto [found, inserted] = exists.try_emplace(it->second.path, false);
      if (inserted) {
        std::error_code ec;
        found->second = fs::is_regular_file(fs::symlink_status(it->second.path, ec));
      }
      keep = found->second;
    }
    if (keep) {
      ++it;
    } else {
      it = entries_.erase(it);
      dirty_ = true;
    }
  }
  if (!dirty_) return true;
  SealedPieces pieces;  // the entries' bytes are written from where they are
  add_cache_items(pieces, tool_version_, entries_.size(), [&](const auto& visit) {
    for (const auto& [key, entry] : entries_) visit(key, entry.path, entry.data);
  });
  std::string error;
  if (!prepare_cache_directory(directory_, error)) {
    note_ = "caching disabled: " + error;
    return false;
  }
  if (!write_file_atomically(file(), pieces.finish(), error, Durability::Unsynced)) {
    note_ = fmt::format("caching disabled: cannot write the cache: {}", error);
    return false;
  }
  dirty_ = false;
  return true;
}

bool prepare_cache_directory(const fs::path& directory, std::string& error) {
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec) {
    error = fmt::format("cannot create cache directory {}: {}", directory.string(), ec.message());
    return false;
  }
  // Tell git to leave the cache alone.
  const fs::path gitignore = directory / ".gitignore";
  if (!fs::exists(fs::symlink_status(gitignore, ec))) {
    std::string ignored_error;
    write_file_atomically(gitignore, "# created by kvlint\n*\n", ignored_error, Durability::Unsynced);
  }
  return true;
}

std::optional<std::string> cache_directory_problem(const fs::path& directory) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(directory, ec))) return std::nullopt;
  const fs::path target = fs::read_symlink(directory, ec);
  return fmt::format("not using cache directory {}: it is a symbolic link (to {}); running without the cache",
                     directory.string(), ec ? std::string("?") : target.string());
}

}  // namespace kvlint
