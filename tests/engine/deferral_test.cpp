// Deferred files (CheckOptions::defer_context): files that name the vocabulary but can only give
// context are analysed when a rule's question needs them, and a run finds exactly what it finds
// analysing all of them up front. Each test builds the case the deferral could get wrong and
// compares the whole JSON report with `defer_context = false`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/engine/check_tree.hpp"
#include "tests/engine/temp_dir.hpp"
#include "tools/kvlint/engine/engine.hpp"
#include "tools/kvlint/reporters/reporters.hpp"

namespace kvlint {
namespace {

namespace fs = std::filesystem;
using kvlint::testing::TempDir;
using kvlint::testing::tree_options;
using ::testing::HasSubstr;

CheckResult check(const TempDir& dir, bool defer) {
  CheckOptions options = tree_options(dir);
  options.defer_context = defer;
  return run_check(options);
}

std::string json_of(const CheckResult& result) {
  return render_report(result, OutputFormat::Json, ReportOptions{});
}

bool parsed(const CheckResult& result, std::string_view file_name) {
  return std::any_of(result.parsed_files.begin(), result.parsed_files.end(),
                     [&](const ParsedFile& f) { return f.path.filename() == file_name; });
}

// A module that builds a cache nothing declares (KV101), and what it imports.
constexpr std::string_view kDecoder =
    "from torch import nn\n"
    "from transformers import DynamicCache\n"
    "class Decoder(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.cache = DynamicCache()\n";

// A class that builds a cache and is no module (KV101 names the modules that hold it), and a
// module that holds it and passes `use_cache` on: context only, so deferred.
constexpr std::string_view kGenerator =
    "from transformers import StaticCache\n"
    "class AudioGenerator:\n"
    "    def __init__(self, config):\n"
    "        self.cache = StaticCache(config=config, max_batch_size=1, max_cache_len=2048)\n";
constexpr std::string_view kTalker =
    "from torch import nn\n"
    "from .generator import AudioGenerator\n"
    "class Talker(nn.Module):\n"
    "    def __init__(self, config):\n"
    "        super().__init__()\n"
    "        self.gen = AudioGenerator(config)\n"
    "    def forward(self, x, use_cache=False):\n"
    "        return self.gen(x, use_cache=use_cache)\n";

TEST(Deferral, AContextFileNoRuleNeedsIsNotParsed) {
  TempDir dir;
  dir.write("decoder.py", kDecoder);
  // Names `use_cache`, but only as a default and a setting: it can give no seed.
  dir.write("config.py",
            "class DecoderConfig:\n"
            "    def __init__(self, use_cache=True):\n"
            "        self.use_cache = use_cache\n");
  const CheckResult deferred = check(dir, true);
  const CheckResult all = check(dir, false);
  EXPECT_EQ(json_of(deferred), json_of(all));
  ASSERT_EQ(deferred.findings.size(), 1u);
  EXPECT_EQ(deferred.stats.files_deferred, 1u);
  EXPECT_EQ(deferred.stats.files_parsed, 1u);
  EXPECT_FALSE(parsed(deferred, "config.py"));
  EXPECT_EQ(all.stats.files_deferred, 0u);
  EXPECT_TRUE(parsed(all, "config.py"));
}

TEST(Deferral, AHolderInAContextFileIsAnalysedForTheFindingThatNamesIt) {
  TempDir dir;
  dir.write("pkg/__init__.py", "");
  dir.write("pkg/generator.py", kGenerator);
  dir.write("pkg/talker.py", kTalker);
  const CheckResult deferred = check(dir, true);
  EXPECT_EQ(json_of(deferred), json_of(check(dir, false)));
  ASSERT_EQ(deferred.findings.size(), 1u);
  EXPECT_THAT(deferred.findings.front().message, HasSubstr("`Talker` holds it as `self.gen`"));
  EXPECT_TRUE(parsed(deferred, "talker.py"));
}

TEST(Deferral, TheClassACallGoesToIsAnalysedBeforeTheCallIsJudged) {
  TempDir dir;
  // A plain class whose method takes a `use_cache` keyword: no transformers model, so passing
  // it True builds nothing (KV102 stays silent). Its file can give no seed by itself.
  dir.write("client.py",
            "class MemcacheClient:\n"
            "    def get(self, key, use_cache=False):\n"
            "        return None\n");
  dir.write("store.py",
            "from torch import nn\n"
            "from client import MemcacheClient\n"
            "class FeatureStore(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.client = MemcacheClient()\n"
            "        self.values = {}\n"
            "    def fetch(self, key):\n"
            "        self.values[key] = self.client.get(key, use_cache=True)\n"
            "        return self.values[key]\n");
  const CheckResult deferred = check(dir, true);
  EXPECT_EQ(json_of(deferred), json_of(check(dir, false)));
  EXPECT_TRUE(deferred.findings.empty()) << deferred.findings.front().message;
  EXPECT_TRUE(parsed(deferred, "client.py"));
}

// Deferring saves parsing, not the cache's facts: a deferred file analysed once (a rule needed
// it) comes from the cache up front the next time, and one never needed is never stored.
TEST(Deferral, ADeferredFileTheCacheHoldsIsTakenUpFront) {
  TempDir dir;
  TempDir cache;
  dir.write("pkg/__init__.py", "");
  dir.write("pkg/generator.py", kGenerator);
  dir.write("pkg/talker.py", kTalker);
  dir.write("pkg/config.py", "class TalkerConfig:\n    def __init__(self, use_cache=True):\n        pass\n");
  CheckOptions options = tree_options(dir);
  options.use_cache = true;
  options.cache_dir = cache.path();
  const CheckResult cold = run_check(options);
  EXPECT_EQ(cold.stats.files_parsed, 2u);  // generator.py, and talker.py when KV101 asked
  EXPECT_EQ(cold.stats.files_deferred, 1u);
  EXPECT_EQ(cold.stats.rule_rounds, 2u);
  // Another file changes, so the run memo does not answer: the rest come from the cache.
  dir.write("pkg/__init__.py", "# changed\n");
  const CheckResult warm = run_check(options);
  EXPECT_EQ(json_of(warm), json_of(cold));
  EXPECT_EQ(warm.stats.files_parsed, 0u);
  EXPECT_EQ(warm.stats.files_cached, 2u);    // talker.py among them, up front
  EXPECT_EQ(warm.stats.files_deferred, 1u);  // config.py: never needed, never stored
  EXPECT_EQ(warm.stats.rule_rounds, 1u);     // nothing more to ask for
}

}  // namespace
}  // namespace kvlint
