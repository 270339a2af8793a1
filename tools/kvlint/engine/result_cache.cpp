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

constexpr int kCacheFormat = 2;  // 2: CBOR

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

json finding_to_json(const Finding& f) {
  json related = json::array();
  for (const auto& r : f.related) related.push_back(json{{"loc", location_to_json(r.loc)}, {"message", r.message}});
  return json{{"code", f.code},       {"severity", static_cast<int>(f.severity)}, {"loc", location_to_json(f.loc)},
              {"owner", f.owner_class}, {"message", f.message}, {"related", std::move(related)},
              {"fingerprint", f.fingerprint}};
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
  f.fingerprint = j.at("fingerprint").get<std::string>();
  return f;
}

fs::path run_memo_file(const fs::path& directory) { return directory / "last-run.json"; }

}  // namespace

std::optional<RunMemo> load_run_memo(const fs::path& directory, const std::string& key) {
  try {
    std::ifstream in(run_memo_file(directory), std::ios::binary);
    if (!in) return std::nullopt;
    std::stringstream buffer;
    buffer << in.rdbuf();
    const json doc = json::parse(buffer.str());
    if (doc.at("format").get<int>() != kCacheFormat || doc.at("key").get<std::string>() != key) return std::nullopt;
    RunMemo memo;
    for (const auto& f : doc.at("findings")) memo.findings.push_back(finding_from_json(f));
    for (const auto& d : doc.at("diagnostics")) memo.diagnostics.push_back(diagnostic_from_json(d));
    memo.suppressed = doc.at("suppressed").get<std::size_t>();
    memo.files_analysed = doc.at("files_analysed").get<std::size_t>();
    memo.files_skipped = doc.at("files_skipped").get<std::size_t>();
    return memo;
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable or foreign: the run simply computes the result
  }
}

void save_run_memo(const fs::path& directory, const std::string& key, const RunMemo& memo) {
  json findings = json::array(), diagnostics = json::array();
  for (const auto& f : memo.findings) findings.push_back(finding_to_json(f));
  for (const auto& d : memo.diagnostics) diagnostics.push_back(diagnostic_to_json(d));
  const json doc{{"format", kCacheFormat},           {"key", key},
                 {"findings", std::move(findings)},  {"diagnostics", std::move(diagnostics)},
                 {"suppressed", memo.suppressed},    {"files_analysed", memo.files_analysed},
                 {"files_skipped", memo.files_skipped}};
  std::error_code ec;
  fs::create_directories(directory, ec);
  std::string ignored_error;
  write_file_atomically(run_memo_file(directory), doc.dump(), ignored_error);
}

std::string cache_key(const CacheKeyInputs& in) {
  std::string header;
  add_field(header, std::to_string(kCacheFormat));
  add_field(header, std::to_string(facts::kFactsJsonVersion));
  add_field(header, in.tool_version);
  add_field(header, in.config_fingerprint);
  add_field(header, in.vocabulary ? facts::signature(*in.vocabulary) : std::string());
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
    json doc = json::from_cbor(buffer.str());
    if (doc.at("format").get<int>() != kCacheFormat ||
        doc.at("tool_version").get<std::string>() != tool_version_) {
      note_ = fmt::format("cache {} is from another kvlint version; rebuilding it", file().string());
      dirty_ = true;
      return;
    }
    for (auto& [key, value] : doc.at("entries").items())
      entries_[key] = Entry{value.at("path").get<std::string>(),
                            std::make_shared<const json>(std::move(value.at("data"))), false};
  } catch (const std::exception& e) {
    entries_.clear();
    dirty_ = true;
    note_ = fmt::format("ignoring unreadable cache {}: {}", file().string(), e.what());
  }
}

std::optional<CachedAnalysis> ResultCache::lookup(const std::string& key) {
  std::shared_ptr<const json> entry;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    it->second.touched = true;
    entry = it->second.data;
  }
  try {
    const json& data = *entry;
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
  auto shared = std::make_shared<const json>(std::move(data));
  std::lock_guard lock(mutex_);
  entries_[key] = Entry{path, std::move(shared), true};
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
    entries[key] = json{{"path", entry.path}, {"data", *entry.data}};
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
  const std::vector<std::uint8_t> bytes = json::to_cbor(doc);
  if (!write_file_atomically(file(), std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                             error)) {
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
