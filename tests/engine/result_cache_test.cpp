// The result cache under hostile or failing conditions: corrupt, truncated,
// tampered and foreign-version files, malformed entries, deep CBOR nesting,
// pruning, symbolic links, unwritable directories.
#include "tools/kvlint/engine/result_cache.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <fstream>
#include <set>
#include <sstream>

#include "tests/engine/temp_dir.hpp"
#include "tools/kvlint/engine/engine.hpp"

namespace kvlint {
namespace {

namespace fs = std::filesystem;
using kvlint::testing::TempDir;
using nlohmann::json;
using ::testing::HasSubstr;

// A suppression without a reason and one that suppresses nothing: KV901 and
// KV903 findings from the engine, whatever the rules do.
constexpr std::string_view kSuppressions =
    "x = compute()  # kvlint: ignore[KV101]\n"
    "y = 2\n";
constexpr std::string_view kCacheBuilder =
    "from transformers import DynamicCache\n"
    "class A:\n"
    "    def __init__(self):\n"
    "        self.c = DynamicCache()\n";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const fs::path& p, std::string_view content) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

CheckResult check_tree(const fs::path& root, bool use_cache, const fs::path& cache_dir = {},
                       std::vector<fs::path> paths = {}) {
  CheckOptions options;
  options.paths = paths.empty() ? std::vector<fs::path>{root} : std::move(paths);
  options.config.root = root;
  options.use_cache = use_cache;
  options.cache_dir = cache_dir;
  options.jobs = 1;
  return run_check(options);
}

// Findings and diagnostics as comparable text.
std::string summary(const CheckResult& r) {
  std::string out = fmt::format("suppressed={}\n", r.suppressed);
  for (const auto& f : r.findings)
    out += fmt::format("{} {}:{}:{} {} {}\n", f.code, f.loc.file, f.loc.line, f.loc.column, f.message,
                       f.fingerprint);
  for (const auto& d : r.diagnostics) out += fmt::format("{} {}:{} {}\n", d.kind, d.path, d.line, d.message);
  return out;
}

void write_tree(const TempDir& dir) {
  dir.write("m.py", kSuppressions);
  dir.write("model.py", kCacheBuilder);
  dir.write("plain.py", "print('nothing to see')\n");
}

// A sealed cache file around `payload` with a correct checksum, as an attacker
// who knows the format could commit it.
std::string sealed(std::string_view payload) {
  return seal_cache_payload(payload);
}

std::set<std::string> cached_paths(const fs::path& cache_file) {
  const auto contents = decode_result_cache(slurp(cache_file));
  EXPECT_TRUE(contents);
  std::set<std::string> paths;
  if (contents)
    for (const auto& [key, entry] : contents->entries) paths.insert(entry.path);
  return paths;
}

ResultCacheContents one_entry_contents(json data) {
  ResultCacheContents contents;
  contents.tool_version = "v1";
  contents.entries.emplace(
      "0123", ResultCacheContents::Entry{
                  "/src/m.py", std::make_shared<const std::vector<std::uint8_t>>(json::to_cbor(data))});
  return contents;
}

TEST(ResultCacheDecoder, DeeplyNestedCborIsRejectedWithoutRecursing) {
  // Two million nested one-element arrays: a recursive decoder overflows the stack.
  const std::string nested = std::string(2'000'000, '\x81') + '\xf6';
  EXPECT_FALSE(decode_result_cache(nested));
  EXPECT_FALSE(decode_result_cache(sealed(nested)));  // checksum right, nesting still bounded
  // A little nesting is fine; deeper than anything kvlint writes is not.
  json shallow = json::array({1});
  for (int i = 0; i < 10; ++i) shallow = json::array({shallow});
  json deep = json::array({1});
  for (int i = 0; i < 100; ++i) deep = json::array({deep});
  EXPECT_TRUE(decode_result_cache(encode_result_cache(one_entry_contents({{"facts", shallow}}))));
  // Each entry's data stays bytes until a lookup decodes it (binary facts, read without
  // recursion): the file loads, the entries are refused (and dropped).
  ResultCacheContents nested_entries = one_entry_contents({{"facts", deep}});
  nested_entries.entries.emplace(
      "4567", ResultCacheContents::Entry{"/src/n.py", std::make_shared<const std::vector<std::uint8_t>>(
                                                          nested.begin(), nested.end())});
  TempDir dir;
  spit(dir.path() / "facts-cache.cbor", encode_result_cache(nested_entries));
  ResultCache cache(dir.path(), "v1");
  EXPECT_TRUE(cache.note().empty());
  EXPECT_FALSE(cache.lookup("0123"));
  EXPECT_FALSE(cache.lookup("4567"));
}

TEST(ResultCacheDecoder, TruncatedCorruptedAndForeignFilesDecodeToNothing) {
  const std::string good = encode_result_cache(one_entry_contents({{"facts", {{"path", "m.py"}}}}));
  const auto decoded = decode_result_cache(good);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->tool_version, "v1");
  ASSERT_EQ(decoded->entries.size(), 1u);
  EXPECT_EQ(decoded->entries.begin()->second.path, "/src/m.py");
  for (std::size_t length = 0; length < good.size(); ++length)
    EXPECT_FALSE(decode_result_cache(good.substr(0, length))) << "truncated to " << length;
  for (std::size_t i = 0; i < good.size(); ++i) {
    std::string flipped = good;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x01);
    EXPECT_FALSE(decode_result_cache(flipped)) << "byte " << i << " flipped";
  }
  std::string other_format = good;
  other_format.replace(0, std::string_view("kvlint-cache 3").size(), "kvlint-cache 2");
  EXPECT_FALSE(decode_result_cache(other_format));
  EXPECT_FALSE(decode_result_cache(good.substr(good.find('\n') + 1)));  // bare CBOR, as format 2 wrote
  // Well-formed and sealed, but not a cache's shape.
  EXPECT_FALSE(decode_result_cache(sealed(std::string(1, '\xf6'))));
}

TEST(CacheKey, DependsOnWhereTheConfigurationLives) {
  const facts::Vocabulary vocab;
  EXPECT_NE(cache_key({1, "v1", "cfg", facts::signature(vocab), "m.py", "m", "/a/kvlint.toml"}),
            cache_key({1, "v1", "cfg", facts::signature(vocab), "m.py", "m", "/b/kvlint.toml"}));
}

TEST(Pipeline, CacheFileThatOverflowsARecursiveDecoderIsIgnored) {
  TempDir dir;
  write_tree(dir);
  const CheckResult expected = check_tree(dir.path(), false);
  dir.write(".kvlint_cache/facts-cache.cbor", std::string(2'000'000, '\x81') + '\xf6');
  const CheckResult result = check_tree(dir.path(), true);
  EXPECT_EQ(summary(result), summary(expected));
  EXPECT_EQ(result.stats.files_parsed, 2u);
  ASSERT_EQ(result.notes.size(), 1u);
  EXPECT_THAT(result.notes[0], HasSubstr("ignoring unreadable cache"));
  // Rebuilt: the next run uses it.
  EXPECT_EQ(check_tree(dir.path(), true).notes.size(), 0u);
}

// Replaces every `from` (same length) in the file; the count replaced.
int tamper(const fs::path& file, std::string_view from, std::string_view to) {
  std::string bytes = slurp(file);
  int count = 0;
  for (std::size_t at = bytes.find(from); at != std::string::npos; at = bytes.find(from, at + 1)) {
    bytes.replace(at, to.size(), to);
    ++count;
  }
  spit(file, bytes);
  return count;
}

TEST(Pipeline, TamperedCacheEntriesAreReanalysedNeverReused) {
  TempDir dir;
  write_tree(dir);
  const CheckResult cold = check_tree(dir.path(), true);
  ASSERT_FALSE(cold.findings.empty());
  const fs::path cache = dir.path() / ".kvlint_cache";
  // The per-file facts: the suppression's code becomes another one.
  ASSERT_GT(tamper(cache / "facts-cache.cbor", "KV101", "KV999"), 0);
  fs::remove(cache / "last-run.cbor");
  const CheckResult facts_tampered = check_tree(dir.path(), true);
  EXPECT_EQ(summary(facts_tampered), summary(cold));
  EXPECT_EQ(facts_tampered.stats.files_parsed, 2u);
  // The last run's result: a finding's message changes.
  ASSERT_GT(tamper(cache / "last-run.cbor", "reason", "REASON"), 0);
  const CheckResult memo_tampered = check_tree(dir.path(), true);
  EXPECT_EQ(summary(memo_tampered), summary(cold));
}

TEST(Pipeline, TruncatedCacheFilesFromARealRunAreReanalysedWithOneNote) {
  TempDir dir;
  write_tree(dir);
  const CheckResult expected = check_tree(dir.path(), false);
  const fs::path cache = dir.path() / ".kvlint_cache";
  ASSERT_EQ(summary(check_tree(dir.path(), true)), summary(expected));
  const std::string whole = slurp(cache / "facts-cache.cbor"), memo = slurp(cache / "last-run.cbor");
  ASSERT_GT(whole.size(), 100u);
  // The last run's memo cut short: the per-file cache answers, silently.
  spit(cache / "last-run.cbor", memo.substr(0, memo.size() / 2));
  const CheckResult memo_cut = check_tree(dir.path(), true);
  EXPECT_EQ(summary(memo_cut), summary(expected));
  EXPECT_EQ(memo_cut.stats.files_parsed, 0u);
  EXPECT_TRUE(memo_cut.notes.empty());
  // The per-file cache cut short (an interrupted copy, a disk that filled in a
  // copy made without kvlint): in the header, the payload, one byte short.
  for (const std::size_t length : {std::size_t{0}, std::size_t{20}, whole.size() / 2, whole.size() - 1}) {
    spit(cache / "facts-cache.cbor", whole.substr(0, length));
    spit(cache / "last-run.cbor", memo.substr(0, memo.size() - 1));
    const CheckResult result = check_tree(dir.path(), true);
    EXPECT_EQ(summary(result), summary(expected)) << length;
    EXPECT_EQ(result.stats.files_parsed, 2u) << length;
    ASSERT_EQ(result.notes.size(), 1u) << length;
    EXPECT_THAT(result.notes[0], HasSubstr("ignoring unreadable cache")) << length;
  }
  // The last one rebuilt the cache whole: the next run parses nothing.
  const CheckResult warm = check_tree(dir.path(), true);
  EXPECT_EQ(summary(warm), summary(expected));
  EXPECT_EQ(warm.stats.files_parsed, 0u);
  EXPECT_TRUE(warm.notes.empty());
}

// A cache file like `cache_bytes` with every entry's KV101 turned into KV999 (strings in an
// entry's binary facts are length-prefixed, so an equal-length edit keeps the entry well-formed),
// sealed properly: a stale result under the keys this kvlint computes. An empty
// `tool_version` keeps the file's.
std::string with_stale_entries(std::string_view cache_bytes, const std::string& tool_version) {
  auto contents = decode_result_cache(cache_bytes);
  EXPECT_TRUE(contents);
  if (!contents) return {};
  int replaced = 0;
  for (auto& [key, entry] : contents->entries) {
    std::string data(entry.data->begin(), entry.data->end());
    for (std::size_t at = data.find("KV101"); at != std::string::npos; at = data.find("KV101", at + 1)) {
      data.replace(at, 5, "KV999");
      ++replaced;
    }
    entry.data = std::make_shared<const std::vector<std::uint8_t>>(data.begin(), data.end());
  }
  EXPECT_GT(replaced, 0);
  if (!tool_version.empty()) contents->tool_version = tool_version;
  return encode_result_cache(*contents);
}

TEST(Pipeline, CacheFromAnotherKvlintVersionIsNeverReusedEvenUnderTheSameKeys) {
  TempDir dir;
  write_tree(dir);
  const CheckResult expected = check_tree(dir.path(), false);
  const fs::path cache = dir.path() / ".kvlint_cache";
  check_tree(dir.path(), true);
  const std::string current = slurp(cache / "facts-cache.cbor");
  // Control: with this kvlint's version the doctored entries are used, so a
  // stale result would show in the findings.
  spit(cache / "facts-cache.cbor", with_stale_entries(current, ""));
  fs::remove(cache / "last-run.cbor");
  const CheckResult stale = check_tree(dir.path(), true);
  EXPECT_EQ(stale.stats.files_parsed, 0u);
  EXPECT_NE(summary(stale), summary(expected));
  // The same entries from another version: ignored whole, with one note.
  spit(cache / "facts-cache.cbor", with_stale_entries(current, "0.0.1-another-kvlint"));
  fs::remove(cache / "last-run.cbor");
  const CheckResult result = check_tree(dir.path(), true);
  EXPECT_EQ(summary(result), summary(expected));
  EXPECT_EQ(result.stats.files_parsed, 2u);
  ASSERT_EQ(result.notes.size(), 1u);
  EXPECT_THAT(result.notes[0], HasSubstr("from another kvlint version"));
  const CheckResult warm = check_tree(dir.path(), true);
  EXPECT_EQ(summary(warm), summary(expected));
  EXPECT_TRUE(warm.notes.empty());
}

TEST(Pipeline, MalformedEntryInAnIntactCacheFileIsReanalysedAndReplaced) {
  TempDir dir;
  write_tree(dir);
  const CheckResult expected = check_tree(dir.path(), false);
  const fs::path cache = dir.path() / ".kvlint_cache";
  check_tree(dir.path(), true);
  auto contents = decode_result_cache(slurp(cache / "facts-cache.cbor"));
  ASSERT_TRUE(contents);
  ASSERT_EQ(contents->entries.size(), 2u);
  // Sealed and of this version, but one entry's facts are cut short.
  auto& entry = contents->entries.begin()->second;
  entry.data = std::make_shared<const std::vector<std::uint8_t>>(
      entry.data->begin(), entry.data->begin() + static_cast<std::ptrdiff_t>(entry.data->size() / 2));
  spit(cache / "facts-cache.cbor", encode_result_cache(*contents));
  fs::remove(cache / "last-run.cbor");
  const CheckResult result = check_tree(dir.path(), true);
  EXPECT_EQ(summary(result), summary(expected));
  EXPECT_EQ(result.stats.files_parsed, 1u);  // that file alone
  EXPECT_EQ(result.stats.files_cached, 1u);
  fs::remove(cache / "last-run.cbor");
  const CheckResult warm = check_tree(dir.path(), true);
  EXPECT_EQ(summary(warm), summary(expected));
  EXPECT_EQ(warm.stats.files_parsed, 0u);  // replaced by the good entry
}

TEST(Pipeline, CacheDropsEntriesOfDeletedAndRenamedFilesButKeepsTheRestOnASubsetRun) {
  TempDir dir;
  dir.write("a.py", kSuppressions);
  dir.write("b.py", std::string(kSuppressions) + "# b\n");
  dir.write("c.py", std::string(kSuppressions) + "# c\n");
  const fs::path cache_file = dir.path() / ".kvlint_cache/facts-cache.cbor";
  const std::string a = (dir.path() / "a.py").string(), b = (dir.path() / "b.py").string(),
                    c = (dir.path() / "c.py").string(), d = (dir.path() / "d.py").string();
  check_tree(dir.path(), true);
  EXPECT_EQ(cached_paths(cache_file), (std::set<std::string>{a, b, c}));
  // A run over one file keeps the entries of the others, which still exist.
  dir.write("a.py", std::string(kSuppressions) + "# edited\n");
  check_tree(dir.path(), true, {}, {dir.path() / "a.py"});
  EXPECT_EQ(cached_paths(cache_file), (std::set<std::string>{a, b, c}));
  // Deleted and renamed files lose theirs whenever the cache is written, by a
  // subset run (here a.py changed again) or a whole-tree run alike. A subset
  // run loads the rest of its project as context, so the renamed file's new
  // name (d.py) is analysed and cached by it too.
  fs::remove(dir.path() / "c.py");
  fs::rename(dir.path() / "b.py", dir.path() / "d.py");
  dir.write("a.py", std::string(kSuppressions) + "# edited again\n");
  check_tree(dir.path(), true, {}, {dir.path() / "a.py"});
  EXPECT_EQ(cached_paths(cache_file), (std::set<std::string>{a, d}));
  check_tree(dir.path(), true);
  EXPECT_EQ(cached_paths(cache_file), (std::set<std::string>{a, d}));
  fs::remove(dir.path() / "d.py");
  check_tree(dir.path(), true);
  EXPECT_EQ(cached_paths(cache_file), (std::set<std::string>{a}));
}

TEST(FileWrites, PiecesAreWrittenInOrderPastOneWritevBatch) {
  TempDir dir;
  // More pieces than one writev takes (IOV_MAX, 1024 on Linux), empty ones among them.
  std::vector<std::string> texts;
  for (int k = 0; k < 3000; ++k) texts.push_back(k % 7 == 0 ? std::string() : fmt::format("<{}>", k));
  std::vector<std::string_view> pieces(texts.begin(), texts.end());
  std::string expected;
  for (const auto& t : texts) expected += t;
  std::string error;
  ASSERT_TRUE(write_file_atomically(dir.path() / "out", pieces, error, Durability::Unsynced)) << error;
  EXPECT_EQ(slurp(dir.path() / "out"), expected);
}

TEST(Pipeline, CacheSavedAfterALoadIsTheEncodingOfItsEntries) {
  TempDir dir;
  write_tree(dir);
  const fs::path cache_file = dir.path() / ".kvlint_cache/facts-cache.cbor";
  check_tree(dir.path(), true);
  // The second run keeps the loaded entries (written from the loaded file's bytes) and adds one.
  dir.write("m.py", std::string(kSuppressions) + "# edited\n");
  check_tree(dir.path(), true);
  const std::string saved = slurp(cache_file);
  const auto contents = decode_result_cache(saved);
  ASSERT_TRUE(contents);
  EXPECT_EQ(encode_result_cache(*contents), saved);
  EXPECT_EQ(cached_paths(cache_file),
            (std::set<std::string>{(dir.path() / "m.py").string(), (dir.path() / "model.py").string()}));
}

TEST(Pipeline, RunStateIsHandedToTheResultOnlyWhenAskedAndChangesNoFinding) {
  TempDir dir;
  write_tree(dir);
  CheckOptions options;
  options.paths = {dir.path()};
  options.config.root = dir.path();
  options.use_cache = false;
  options.jobs = 1;
  const CheckResult freed = run_check(options);
  EXPECT_EQ(freed.run_state, nullptr);
  options.retain_run_state = true;
  const CheckResult retained = run_check(options);
  EXPECT_NE(retained.run_state, nullptr);
  EXPECT_EQ(summary(retained), summary(freed));
  EXPECT_FALSE(freed.findings.empty());
}

TEST(Pipeline, SymlinkedCacheDirectoryIsNotFollowed) {
  TempDir dir, elsewhere;
  write_tree(dir);
  const CheckResult expected = check_tree(dir.path(), false);
  fs::create_directory_symlink(elsewhere.path(), dir.path() / ".kvlint_cache");
  const CheckResult result = check_tree(dir.path(), true);
  EXPECT_EQ(summary(result), summary(expected));
  ASSERT_EQ(result.notes.size(), 1u);
  EXPECT_THAT(result.notes[0], HasSubstr("symbolic link"));
  EXPECT_TRUE(fs::is_empty(elsewhere.path()));
  EXPECT_TRUE(fs::is_symlink(dir.path() / ".kvlint_cache"));
}

TEST(Pipeline, UnwritableCacheDirectoryDegradesToNoCachingWithOneNote) {
  TempDir dir;
  write_tree(dir);
  dir.write("not-a-dir", "a regular file\n");
  const CheckResult expected = check_tree(dir.path(), false);
  // Tests run as root, so permissions stop nothing: use places no one can write.
  for (const fs::path& cache_dir :
       {dir.path() / "not-a-dir" / "cache", dir.path() / "not-a-dir", fs::path("/proc/self/kvlint-cache")}) {
    for (int run = 0; run < 2; ++run) {
      const CheckResult result = check_tree(dir.path(), true, cache_dir);
      EXPECT_EQ(summary(result), summary(expected)) << cache_dir;
      ASSERT_EQ(result.notes.size(), 1u) << cache_dir;
      EXPECT_THAT(result.notes[0], HasSubstr("caching disabled")) << cache_dir;
    }
  }
  EXPECT_EQ(slurp(dir.path() / "not-a-dir"), "a regular file\n");
}

// Lowers the file size limit (EFBIG on writes past it, as ENOSPC on a full
// disk) for the scope, with SIGXFSZ ignored so the write fails instead of the process.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    previous_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    ::signal(SIGXFSZ, previous_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  sighandler_t previous_{};
};

TEST(Pipeline, FullDiskDegradesToNoCachingWithOneNote) {
  TempDir dir;
  write_tree(dir);
  const CheckResult expected = check_tree(dir.path(), false);
  CheckResult result;
  {
    const FileSizeLimit limit(64);  // room for the cache's .gitignore, not for the cache
    result = check_tree(dir.path(), true);
  }
  EXPECT_EQ(summary(result), summary(expected));
  ASSERT_EQ(result.notes.size(), 1u);
  EXPECT_THAT(result.notes[0], HasSubstr("caching disabled: cannot write the cache"));
  // Nothing half-written is left to be read back.
  EXPECT_FALSE(fs::exists(dir.path() / ".kvlint_cache/facts-cache.cbor"));
  for (const auto& entry : fs::directory_iterator(dir.path() / ".kvlint_cache"))
    EXPECT_EQ(entry.path().filename(), ".gitignore");
  const CheckResult after = check_tree(dir.path(), true);
  EXPECT_EQ(summary(after), summary(expected));
  EXPECT_TRUE(after.notes.empty());
}

}  // namespace
}  // namespace kvlint
