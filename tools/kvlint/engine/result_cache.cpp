#include "tools/kvlint/engine/result_cache.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "analyzers/facts/facts_json.hpp"

namespace kvlint {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kCacheFormat = 1;

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

}  // namespace

std::string vocabulary_signature(const facts::Vocabulary& v) {
  std::string out;
  auto list = [&](std::string_view tag, const std::vector<std::string>& items) {
    add_field(out, tag);
    for (const auto& i : items) add_field(out, i);
  };
  list("cache", v.cache_classes);
  list("spec", v.spec_constructors);
  list("bases", v.module_bases);
  list("names",
       {v.declaration_method, v.collector, v.unwrap, v.runnable, v.row_driver, v.row_fixed,
        v.row_max_num_seqs, v.fixed_call, v.fixed_reason_keyword, v.max_num_seqs_call, v.scope_enum});
  for (const auto& [written, canonical] : v.field_aliases) list("alias", {written, canonical});
  return out;
}

std::string cache_key(const CacheKeyInputs& in) {
  std::string header;
  add_field(header, std::to_string(kCacheFormat));
  add_field(header, std::to_string(facts::kFactsJsonVersion));
  add_field(header, in.tool_version);
  add_field(header, in.config_fingerprint);
  add_field(header, in.vocabulary ? vocabulary_signature(*in.vocabulary) : std::string());
  add_field(header, in.path);
  add_field(header, in.module_name);
  XXH3_state_t* state = XXH3_createState();
  if (!state) throw std::bad_alloc();
  XXH3_128bits_reset(state);
  XXH3_128bits_update(state, header.data(), header.size());
  XXH3_128bits_update(state, in.content.data(), in.content.size());
  const XXH128_hash_t digest = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  return fmt::format("{:016x}{:016x}", digest.high64, digest.low64);
}

ResultCache::ResultCache(fs::path directory, std::string tool_version)
    : directory_(std::move(directory)), tool_version_(std::move(tool_version)) {
  std::error_code ec;
  if (!fs::exists(file(), ec)) return;
  try {
    std::ifstream in(file(), std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const json doc = json::parse(buffer.str());
    if (doc.at("format").get<int>() != kCacheFormat ||
        doc.at("tool_version").get<std::string>() != tool_version_) {
      note_ = fmt::format("cache {} is from another kvlint version; rebuilding it", file().string());
      dirty_ = true;
      return;
    }
    for (const auto& [key, value] : doc.at("entries").items())
      entries_[key] = Entry{value.at("path").get<std::string>(), value.at("data").dump(), false};
  } catch (const std::exception& e) {
    entries_.clear();
    dirty_ = true;
    note_ = fmt::format("ignoring unreadable cache {}: {}", file().string(), e.what());
  }
}

std::optional<CachedAnalysis> ResultCache::lookup(const std::string& key) {
  std::string payload;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    it->second.touched = true;
    payload = it->second.payload;
  }
  try {
    const json data = json::parse(payload);
    CachedAnalysis out;
    out.facts = facts::file_facts_from_json(data.at("facts"));
    for (const auto& d : data.at("diagnostics")) out.diagnostics.push_back(diagnostic_from_json(d));
    return out;
  } catch (const std::exception&) {
    std::lock_guard lock(mutex_);
    entries_.erase(key);  // a bad entry is re-analysed and replaced
    dirty_ = true;
    return std::nullopt;
  }
}

void ResultCache::store(const std::string& key, const std::string& path, const CachedAnalysis& analysis) {
  json data;
  data["facts"] = facts::to_json(analysis.facts);
  data["diagnostics"] = json::array();
  for (const auto& d : analysis.diagnostics) data["diagnostics"].push_back(diagnostic_to_json(d));
  std::string payload = data.dump();
  std::lock_guard lock(mutex_);
  entries_[key] = Entry{path, std::move(payload), true};
  dirty_ = true;
}

bool ResultCache::save() {
  std::lock_guard lock(mutex_);
  // Entries for paths analysed this run but not used are stale (the file changed).
  std::set<std::string> seen_paths;
  for (const auto& [key, entry] : entries_)
    if (entry.touched) seen_paths.insert(entry.path);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (!it->second.touched && seen_paths.count(it->second.path)) {
      it = entries_.erase(it);
      dirty_ = true;
    } else {
      ++it;
    }
  }
  if (!dirty_) return true;
  json doc;
  doc["format"] = kCacheFormat;
  doc["tool_version"] = tool_version_;
  json entries = json::object();
  for (const auto& [key, entry] : entries_)
    entries[key] = json{{"path", entry.path}, {"data", json::parse(entry.payload)}};
  doc["entries"] = std::move(entries);
  std::error_code ec;
  fs::create_directories(directory_, ec);
  if (ec) {
    note_ = fmt::format("cannot create cache directory {}: {}", directory_.string(), ec.message());
    return false;
  }
  // Tell git to leave the cache alone.
  const fs::path gitignore = directory_ / ".gitignore";
  if (!fs::exists(gitignore, ec)) {
    std::string ignored_error;
    write_file_atomically(gitignore, "# created by kvlint\n*\n", ignored_error);
  }
  std::string error;
  if (!write_file_atomically(file(), doc.dump(), error)) {
    note_ = fmt::format("cannot write cache: {}", error);
    return false;
  }
  dirty_ = false;
  return true;
}

bool write_file_atomically(const fs::path& target, std::string_view content, std::string& error) {
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string templ = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(templ.data());
  if (fd < 0) {
    error = fmt::format("{}: cannot create a temporary file in {}: {}", target.string(), dir.string(),
                        std::strerror(errno));
    return false;
  }
  auto fail = [&](std::string_view what) {
    error = fmt::format("{}: {}: {}", target.string(), what, std::strerror(errno));
    ::close(fd);
    ::unlink(templ.c_str());
    return false;
  };
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t w = ::write(fd, content.data() + written, content.size() - written);
    if (w < 0) {
      if (errno == EINTR) continue;
      return fail("write failed");
    }
    written += static_cast<std::size_t>(w);
  }
  // mkstemp creates 0600; give the file the usual mode.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::fsync(fd) != 0) return fail("fsync failed");
  if (::close(fd) != 0) {
    error = fmt::format("{}: close failed: {}", target.string(), std::strerror(errno));
    ::unlink(templ.c_str());
    return false;
  }
  if (::rename(templ.c_str(), target.c_str()) != 0) {
    error = fmt::format("{}: cannot replace: {}", target.string(), std::strerror(errno));
    ::unlink(templ.c_str());
    return false;
  }
  // Make the rename durable.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return true;
}

}  // namespace kvlint
