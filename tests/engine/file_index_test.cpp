// The file index (file_index.hpp): its file format, which stamps it trusts, and runs that take
// unchanged files' hashes and text-scan results from it instead of reading them, with the
// findings of a run that reads everything.
#include "tools/kvlint/engine/file_index.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/engine/temp_dir.hpp"
#include "tools/kvlint/engine/engine.hpp"
#include "tools/kvlint/engine/result_cache.hpp"
#include "tools/kvlint/engine/token_summary.hpp"

namespace kvlint {
namespace {

namespace fs = std::filesystem;
using kvlint::testing::TempDir;
using Clock = std::chrono::system_clock;

FileIndexEntry sample_entry(std::uint64_t hash) {
  FileIndexEntry e;
  e.stamp = FileStamp{64769, 1234567, 4096, 1'700'000'000'123'456'789, 1'700'000'001'000'000'000};
  e.content_hash = hash;
  e.scans = {{7, true}, {0xffffffffffffffffull, false}};
  e.class_names = std::vector<std::string>{"Decoder", "GraphRunner"};
  e.tokens = TokenSummary(std::string("\0Decoder\0GraphRunner\0self\0", 26));
  e.handed_self = std::vector<std::string>{"_graph_wrapper", "owner"};
  return e;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(FileIndexFile, RoundTripsAndRejectsDamagedOrForeignBytes) {
  FileIndexContents contents;
  contents.tool_version = "v1";
  contents.entries["/a/m.py"] = sample_entry(42);
  FileIndexEntry no_scans = sample_entry(43);
  no_scans.scans.clear();
  no_scans.class_names.reset();
  no_scans.tokens.reset();
  no_scans.handed_self.reset();
  contents.entries["/a/b/n.py"] = no_scans;
  const std::string bytes = encode_file_index(contents);
  const auto decoded = decode_file_index(bytes);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->tool_version, "v1");
  EXPECT_EQ(decoded->entries, contents.entries);

  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x20;
  EXPECT_FALSE(decode_file_index(flipped));
  EXPECT_FALSE(decode_file_index(bytes.substr(0, bytes.size() - 1)));
  EXPECT_FALSE(decode_file_index(""));
  // Intact seal, other payload (the facts cache's): no index.
  ResultCacheContents cache;
  cache.tool_version = "v1";
  EXPECT_FALSE(decode_file_index(encode_result_cache(cache)));
}

TEST(FileIndexFile, TrustsOnlyTheStampItRecordedAndOnlyFromTheSameBuild) {
  TempDir dir;
  {
    FileIndex index(dir.path(), "v1");
    index.record("/a/m.py", sample_entry(42));
    std::string error;
    ASSERT_TRUE(index.save({"/a/m.py"}, error)) << error;
  }
  const FileStamp recorded = sample_entry(42).stamp;
  FileIndex same(dir.path(), "v1");
  ASSERT_NE(same.unchanged("/a/m.py", recorded), nullptr);
  EXPECT_EQ(same.unchanged("/a/m.py", recorded)->content_hash, 42u);
  EXPECT_EQ(same.unchanged("/a/other.py", recorded), nullptr);
  for (auto change :
       {+[](FileStamp& s) { ++s.device; }, +[](FileStamp& s) { ++s.inode; }, +[](FileStamp& s) { --s.size; },
        +[](FileStamp& s) { s.modified_ns += 1; }, +[](FileStamp& s) { s.changed_ns += 1; }}) {
    FileStamp now = recorded;
    change(now);
    EXPECT_EQ(same.unchanged("/a/m.py", now), nullptr);
  }
  FileIndex other_build(dir.path(), "v2");
  EXPECT_EQ(other_build.unchanged("/a/m.py", recorded), nullptr);
}

TEST(FileIndexFile, AStampIsSettledOnlyOutsideTheRacyWindow) {
  const Clock::time_point run_start = Clock::time_point(std::chrono::seconds(1'700'000'010));
  const std::int64_t start_ns = 1'700'000'010'000'000'000;
  const std::int64_t window_ns = std::chrono::nanoseconds(kRacyWindow).count();
  FileStamp s;
  s.modified_ns = s.changed_ns = start_ns - window_ns - 1;
  EXPECT_TRUE(settled_before(s, run_start));
  s.changed_ns = start_ns - window_ns;  // a chmod or rewrite just before the run
  EXPECT_FALSE(settled_before(s, run_start));
  s.changed_ns = s.modified_ns;
  s.modified_ns = start_ns + 5;  // written during the run
  EXPECT_FALSE(settled_before(s, run_start));
}

TEST(FileIndexFile, SavingKeepsOtherFilesWhileTheyExistAndDropsWhatTheRunDidNotRecordAgain) {
  TempDir dir;
  const std::string kept = dir.write("tree/kept.py", "").string();    // outside the next run, exists
  const std::string gone = (dir.path() / "tree/gone.py").string();    // outside the run, deleted
  const std::string stale = dir.write("tree/stale.py", "").string();  // in the run, not recorded
  const std::string fresh = dir.write("tree/fresh.py", "").string();  // in the run, recorded
  {
    FileIndex index(dir.path() / "cache", "v1");
    for (const auto& p : {kept, gone, stale, fresh}) index.record(p, sample_entry(1));
    std::string error;
    ASSERT_TRUE(index.save({kept, gone, stale, fresh}, error)) << error;
  }
  EXPECT_TRUE(fs::exists(dir.path() / "cache/.gitignore"));  // as the facts cache's directory has
  const FileStamp stamp = sample_entry(1).stamp;
  {
    FileIndex index(dir.path() / "cache", "v1");
    index.record(fresh, sample_entry(2));
    std::string error;
    ASSERT_TRUE(index.save({stale, fresh}, error)) << error;
  }
  FileIndex after(dir.path() / "cache", "v1");
  EXPECT_NE(after.unchanged(kept, stamp), nullptr);
  EXPECT_EQ(after.unchanged(gone, stamp), nullptr);
  EXPECT_EQ(after.unchanged(stale, stamp), nullptr);
  ASSERT_NE(after.unchanged(fresh, stamp), nullptr);
  EXPECT_EQ(after.unchanged(fresh, stamp)->content_hash, 2u);

  // Nothing new: the file is not written again.
  const auto written = fs::last_write_time(after.file());
  std::string error;
  FileIndex again(dir.path() / "cache", "v1");
  again.record(fresh, sample_entry(2));
  ASSERT_TRUE(again.save({fresh}, error));
  EXPECT_EQ(fs::last_write_time(after.file()), written);
}

// Token summaries are stored once per distinct token, not once per file: an index of many
// files naming the same long identifiers stays small, and a summary read back answers every
// search as the summary made from the bytes.
TEST(FileIndexFile, ATokenManyFilesHoldIsStoredOnceAndReadsBackAsItsSummary) {
  const std::string shared = "ModelLocalKeyValueCacheDeclaration";
  const std::string text = token_summary(shared + " = Qwen3OmniMoeTalkerForConditionalGeneration(x)");
  FileIndexContents contents;
  contents.tool_version = "v1";
  for (int i = 0; i < 200; ++i) {
    FileIndexEntry e = sample_entry(static_cast<std::uint64_t>(i));
    e.tokens = TokenSummary(text);
    contents.entries["/a/m" + std::to_string(i) + ".py"] = e;
  }
  const std::string bytes = encode_file_index(contents);
  FileIndexContents without_tokens = contents;
  for (auto& [path, e] : without_tokens.entries) e.tokens.reset();
  EXPECT_LT(bytes.size() - encode_file_index(without_tokens).size(), 200 * text.size() / 10);
  const auto decoded = decode_file_index(bytes);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->entries, contents.entries);
  std::string scratch;
  const FileIndexEntry& back = decoded->entries.at("/a/m7.py");
  ASSERT_TRUE(back.tokens && back.tokens->is_packed());
  EXPECT_EQ(back.tokens->text(scratch), text);
}

// A run that changed a few files saves summaries read back packed beside new ones made from the
// bytes: the packed ones keep their tokens (ids renumbered where a token no file holds any more
// is dropped), the new ones gain theirs.
TEST(FileIndexFile, PackedAndNewSummariesSaveTogetherAndReadBackAsTheirText) {
  TempDir dir;
  auto entry = [](std::uint64_t hash, std::string_view source) {
    FileIndexEntry e = sample_entry(hash);
    e.tokens = TokenSummary(token_summary(source));
    return e;
  };
  {
    FileIndex index(dir.path(), "v1");
    index.record("/a/one.py", entry(1, "alpha beta gamma"));
    index.record("/a/two.py", entry(2, "only_in_two beta"));
    std::string error;
    ASSERT_TRUE(index.save({"/a/one.py", "/a/two.py"}, error)) << error;
  }
  {
    FileIndex index(dir.path(), "v1");
    const FileIndexEntry* one = index.unchanged("/a/one.py", sample_entry(1).stamp);
    ASSERT_NE(one, nullptr);
    ASSERT_TRUE(one->tokens && one->tokens->is_packed());
    index.record("/a/one.py", *one);
    index.record("/a/two.py", entry(3, "delta alpha"));  // rewritten: `only_in_two` is gone
    std::string error;
    ASSERT_TRUE(index.save({"/a/one.py", "/a/two.py"}, error)) << error;
  }
  const auto decoded = decode_file_index(slurp(dir.path() / "file-index.bin"));
  ASSERT_TRUE(decoded);
  std::string scratch;
  EXPECT_EQ(decoded->entries.at("/a/one.py").tokens->text(scratch), token_summary("alpha beta gamma"));
  EXPECT_EQ(decoded->entries.at("/a/two.py").tokens->text(scratch), token_summary("delta alpha"));
  EXPECT_EQ(slurp(dir.path() / "file-index.bin").find("only_in_two"), std::string::npos);
}

// ---- runs through the index

// examples/models (Python and C++, findings of most rules) and a KV105 fixture whose graph
// runner the capture-holder round finds by its class name (a widening scan).
const fs::path kExamples = fs::path(KVLINT_SOURCE_DIR) / "examples/models";
const fs::path kHolderFixture =
    fs::path(KVLINT_SOURCE_DIR) /
    "rules/kv105_unreachable_declarer/fixtures/fire_held_only_through_reverse_assignment";

void copy_tree(const TempDir& dir) {
  fs::copy(kExamples, dir.path() / "models", fs::copy_options::recursive);
  fs::copy(kHolderFixture, dir.path() / "models/holder", fs::copy_options::recursive);
}

std::size_t files_in(const TempDir& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir.path() / "models"))
    n += e.is_regular_file() && (e.path().extension() == ".py" || e.path().extension() == ".cpp");
  return n;
}

// `later`: the run begins well after the files were written, so their stamps count as
// settled (file_index.hpp); otherwise now, as a run right after writing them.
CheckResult check(const TempDir& dir, bool use_cache, bool later = true) {
  CheckOptions options;
  options.paths = {dir.path() / "models"};
  options.config.root = dir.path() / "models";
  options.use_cache = use_cache;
  options.cache_dir = dir.path() / "cache";
  options.jobs = 2;
  if (later) options.started_at = Clock::now() + std::chrono::hours(1);
  return run_check(options);
}

std::vector<std::string> rendered(const CheckResult& r) {
  std::vector<std::string> out;
  for (const auto& f : r.findings)
    out.push_back(f.code + " " + f.loc.file.str() + ":" + std::to_string(f.loc.line) + ":" +
                  std::to_string(f.loc.column) + " " + f.message + " " + f.fingerprint);
  for (const auto& d : r.diagnostics) out.push_back(d.kind + " " + d.path + " " + d.message);
  return out;
}

void remove_run_memo(const TempDir& dir) {
  fs::remove(dir.path() / "cache/last-run.cbor");
}

TEST(FileIndexRun, UnchangedFilesAreNotReadAndTheFindingsAreThoseOfAFullRead) {
  TempDir dir;
  copy_tree(dir);
  const std::size_t files = files_in(dir);
  const CheckResult uncached = check(dir, false);
  ASSERT_FALSE(uncached.findings.empty());
  ASSERT_THAT(rendered(uncached), ::testing::Contains(::testing::HasSubstr("KV105")));

  const CheckResult first = check(dir, true);
  EXPECT_EQ(first.stats.files_unread, 0u);
  EXPECT_TRUE(fs::exists(dir.path() / "cache/file-index.bin"));
  remove_run_memo(dir);  // the per-file path, not the whole-run shortcut
  const CheckResult second = check(dir, true);
  EXPECT_EQ(second.stats.files_unread, files);
  EXPECT_EQ(second.stats.files_skipped, uncached.stats.files_skipped);  // the prefilter's verdicts, recalled
  EXPECT_EQ(rendered(second), rendered(uncached));

  // One edit: that file alone is read (with the bytes the analysed files' cache keys need).
  std::ofstream(dir.path() / "models/holder/stage.py", std::ios::app) << "\n# edited\n";
  const CheckResult edited = check(dir, true);
  EXPECT_EQ(edited.stats.files_unread, files - 1);
  EXPECT_EQ(rendered(edited), rendered(check(dir, false)));
}

TEST(FileIndexRun, AFileRewrittenKeepingItsSizeAndModificationTimeIsReadAgain) {
  TempDir dir;
  copy_tree(dir);
  // No anchor: skipped by the prefilter, a verdict the index keeps.
  const std::string before =
      "from torch import nn\nfrom transformers import DynamicKache\n\n\nclass Plain(nn.Module):\n"
      "    def __init__(self):\n        super().__init__()\n        self.cache = DynamicKache()\n";
  const fs::path plain = dir.write("models/plain.py", before);
  check(dir, true);
  const auto modified = fs::last_write_time(plain);
  std::string after = before;
  for (std::size_t at; (at = after.find("Kache")) != std::string::npos;)
    after.replace(at, 5, "Cache");  // the same size, now an anchor
  dir.write("models/plain.py", after);
  fs::last_write_time(plain, modified);  // the change time still moves
  remove_run_memo(dir);
  const CheckResult rerun = check(dir, true);
  EXPECT_EQ(rerun.stats.files_unread, files_in(dir) - 1);
  EXPECT_THAT(rendered(rerun), ::testing::Contains(::testing::AllOf(::testing::HasSubstr("KV101"),
                                                                    ::testing::HasSubstr("plain.py"))));
  EXPECT_EQ(rendered(rerun), rendered(check(dir, false)));
}

// In a tree larger than the kept-bytes budget, a file the prefilter skips keeps its identifier
// tokens in the index: a later run whose widening searches for a name no earlier run looked for
// (the capturing class was renamed) answers it for that file from the summary, without reading it.
TEST(FileIndexRun, ANewWideningSearchOnAnUnchangedFileIsAnsweredByItsTokensWithoutReadingIt) {
  TempDir dir;
  std::string filler;
  while (filler.size() < (std::size_t{1} << 20)) filler += "value = 12345  # no anchor, no class statement\n";
  const std::size_t fillers = kKeptBytesBudget / filler.size() + 1;
  for (std::size_t i = 0; i < fillers; ++i) dir.write("models/filler_" + std::to_string(i) + ".py", filler);
  auto wrapper = [&](std::string_view name) {
    dir.write("models/wrapper.py",
              "import torch\nclass " + std::string(name) +
                  ":\n    def warmup(self, fn):\n        graph = torch.cuda.CUDAGraph()\n"
                  "        with torch.cuda.graph(graph):\n            fn()\n");
  };
  wrapper("GraphWrapper");
  dir.write("models/plain.py", "class Plain:\n    def run(self):\n        return OtherWrapper()\n");
  check(dir, true);
  wrapper("GraphWrapper2");
  remove_run_memo(dir);
  const CheckResult rerun = check(dir, true);
  EXPECT_EQ(rerun.stats.files_unread, fillers + 1);  // and plain.py
  EXPECT_EQ(rerun.stats.bytes_reread, 0u);  // nor read for the search for `GraphWrapper2(`
  EXPECT_EQ(rendered(rerun), rendered(check(dir, false)));
}

// In a tree larger than the kept-bytes budget, a deferred file that names an attribute and
// `self` apart, without handing self to it, keeps the names it hands self to in the index: a
// later run's demand search for what `decoder._graph_wrapper` may be answers from them, without
// reading the file, as the run that summarised it did.
TEST(FileIndexRun, TheDemandSearchForHandedSelfIsAnsweredFromTheIndexWithoutReadingTheFile) {
  TempDir dir;
  std::string filler;
  while (filler.size() < (std::size_t{1} << 20)) filler += "value = 12345  # no anchor, no class statement\n";
  for (std::size_t i = 0; i <= kKeptBytesBudget / filler.size(); ++i)
    dir.write("models/filler_" + std::to_string(i) + ".py", filler);
  // The declaration reads self._graph_wrapper, which nothing in its class builds: the rules ask
  // who hands self to `_graph_wrapper`.
  const fs::path decoder = dir.write(
      "models/decoder.py",
      "from torch import nn\nfrom transformers import DynamicCache\n"
      "from kv_protocol import ModelLocalKVScope, RowDriver, spec_from_hf_config\n\n\n"
      "class Decoder(nn.Module):\n    def __init__(self, config):\n        super().__init__()\n"
      "        self.config = config\n        self.cache = DynamicCache()\n"
      "        self._graph_wrapper = None\n\n"
      "    def model_local_kv_specs(self):\n        wrapper = self._graph_wrapper\n"
      "        if wrapper is None:\n            return []\n"
      "        return [spec_from_hf_config(self.config, name=\"decoder\", scope=ModelLocalKVScope.REQUEST,\n"
      "                                    rows=RowDriver.MAX_NUM_SEQS)]\n");
  // `use_cache` only: deferred. Its tokens hold `self` and `_graph_wrapper`; it hands self to neither.
  dir.write("models/runner.py",
            "class Runner:\n    def run(self, decoder, use_cache=True):\n        self.decoder = decoder\n"
            "        _graph_wrapper = use_cache\n        return _graph_wrapper\n");
  const CheckResult first = check(dir, true);
  ASSERT_EQ(first.stats.files_deferred, 1u);
  EXPECT_EQ(first.stats.bytes_reread, 0u);
  remove_run_memo(dir);
  const CheckResult rerun = check(dir, true);
  EXPECT_EQ(rerun.stats.files_unread, files_in(dir));
  EXPECT_EQ(rerun.stats.files_deferred, 1u);
  // Neither is read: decoder.py's cached facts are taken by the stamp the index knew (a stat),
  // and runner.py's search is answered by the index.
  EXPECT_EQ(rerun.stats.bytes_reread, 0u);
  EXPECT_TRUE(fs::exists(decoder));
  EXPECT_EQ(rendered(rerun), rendered(check(dir, false)));
}

TEST(FileIndexRun, FilesWrittenJustBeforeARunAreReadAgainByTheNext) {
  TempDir dir;
  copy_tree(dir);
  check(dir, true, /*later=*/false);  // within the racy window of every file it read
  remove_run_memo(dir);
  EXPECT_EQ(check(dir, true).stats.files_unread, 0u);
}

TEST(FileIndexRun, ARunTheMemoAnswersKeepsWhatTheIndexKnew) {
  TempDir dir;
  copy_tree(dir);
  const std::size_t files = files_in(dir);
  check(dir, true);
  const fs::path index_file = dir.path() / "cache/file-index.bin";
  const std::string recorded = slurp(index_file);
  const CheckResult memo = check(dir, true);  // the run memo answers: no scan runs
  EXPECT_EQ(memo.stats.files_unread, files);
  EXPECT_EQ(slurp(index_file), recorded);
  std::ofstream(dir.path() / "models/boot.py", std::ios::app) << "\n# edited\n";
  const CheckResult edited = check(dir, true);
  EXPECT_EQ(edited.stats.files_unread, files - 1);  // the scan results survived the memo run
  EXPECT_EQ(rendered(edited), rendered(check(dir, false)));
}

}  // namespace
}  // namespace kvlint
