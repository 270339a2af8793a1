// run_check end to end in-process: fingerprints, the result cache, the fixpoint.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "analyzers/facts/facts_json.hpp"
#include "tests/engine/check_tree.hpp"
#include "tests/engine/temp_dir.hpp"
#include "tools/kvlint/engine/engine.hpp"
#include "tools/kvlint/engine/result_cache.hpp"

namespace kvlint {
namespace {

namespace fs = std::filesystem;
using kvlint::testing::quote;
using kvlint::testing::TempDir;

CheckResult check(const TempDir& dir, bool use_cache = false, unsigned jobs = 1) {
  CheckOptions options = kvlint::testing::tree_options(dir);
  options.use_cache = use_cache;
  options.jobs = jobs;
  return run_check(options);
}

std::vector<std::string> fingerprints(const CheckResult& r, std::string_view code) {
  std::vector<std::string> out;
  for (const auto& f : r.findings)
    if (f.code == code) out.push_back(f.fingerprint);
  return out;
}

// Suppressions without a reason give engine findings (KV901) whatever the rules do.
constexpr std::string_view kTwoSuppressions =
    "x = compute()  # kvlint: ignore[KV101]\n"
    "y = 2\n"
    "x = compute()  # kvlint: ignore[KV101]\n";

// The KV101 fixture where a base class in one file declares for the subclass in another
// that builds the cache.
const fs::path kInheritedDeclaration =
    fs::path(KVLINT_SOURCE_DIR) / "rules/kv101_undeclared_cache/fixtures/silent_inherited_declaration";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// a/ reports suppressions without a reason (KV901) and fails only on errors;
// b/ reports unused suppressions (KV903) and fails on warnings.
void write_two_projects(const TempDir& dir) {
  dir.write("a/kvlint.toml", "select = [\"KV901\"]\nfail-on = \"error\"\n");
  dir.write("a/m.py", kTwoSuppressions);
  dir.write("b/kvlint.toml", "ignore = [\"KV901\"]  # KV903 stays\n");
  dir.write("b/m.py", kTwoSuppressions);
}

CheckResult check_nearest(const std::vector<fs::path>& paths) {
  CheckOptions options;
  options.paths = paths;
  options.nearest_config = true;
  options.use_cache = false;
  return run_check(options);
}

std::vector<std::string> codes_in(const CheckResult& r, std::string_view file_suffix) {
  std::vector<std::string> out;
  for (const auto& f : r.findings)
    if (std::string_view(f.loc.file).ends_with(file_suffix)) out.push_back(f.code);
  return out;
}

TEST(Project, CheckingOneFileResolvesItWithinItsWholeProject) {
  TempDir dir;
  dir.write("kvlint.toml", "select = [\"KV\"]\n");
  dir.write("pkg/__init__.py", "");
  dir.write("pkg/base.py", slurp(kInheritedDeclaration / "base.py") + "x = 1  # kvlint: ignore[KV101]\n");
  const fs::path child = dir.write(
      "pkg/child.py", slurp(kInheritedDeclaration / "codec.py") + "y = 2  # kvlint: ignore[KV101]\n");
  const auto whole = check_nearest({dir.path()});
  const auto one = check_nearest({child});
  EXPECT_THAT(codes_in(whole, "pkg/child.py"), ::testing::ElementsAre("KV901", "KV903"));
  EXPECT_THAT(codes_in(whole, "pkg/base.py"), ::testing::ElementsAre("KV901", "KV903"));
  // The base class in the unnamed file covers the cache: no KV101; base.py itself is not reported.
  ASSERT_EQ(one.findings.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(one.findings[i].loc.file, child.generic_string());
    EXPECT_EQ(one.findings[i].code, whole.findings[i + 2].code);
    EXPECT_EQ(one.findings[i].fingerprint, whole.findings[i + 2].fingerprint);
  }
  EXPECT_EQ(one.stats.files_found, 1u);
  EXPECT_EQ(one.stats.files_context, 2u);
  EXPECT_EQ(one.suppressed, 0u);
}

TEST(Project, CheckingASubdirectoryOfAnUnconfiguredCheckoutReadsOnlyItsPythonProject) {
  TempDir dir;
  if (std::system(("git init -q " + quote(dir.path().string()) + " 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "git is not available";
  for (int i = 0; i < 40; ++i) dir.write("vendor/lib" + std::to_string(i) + ".py", "import os\n");
  dir.write("pkg/setup.py", "");
  const std::string base = slurp(kInheritedDeclaration / "base.py");
  dir.write("pkg/base.py", base);
  const std::string child = slurp(kInheritedDeclaration / "codec.py");
  dir.write("pkg/models/child.py", child);
  const auto r = check_nearest({dir.path() / "pkg/models"});
  EXPECT_EQ(r.stats.files_found, 1u);
  EXPECT_EQ(r.stats.files_context, 2u);  // pkg/base.py and pkg/setup.py; nothing of vendor/ is read
  EXPECT_EQ(r.stats.bytes_read, base.size() + child.size());
  EXPECT_THAT(codes_in(r, "child.py"), ::testing::IsEmpty());  // still covered by the base's declaration
}

TEST(Project, EachFileGetsItsNearestConfigurationWhateverTheArgumentOrder) {
  TempDir dir;
  write_two_projects(dir);
  const auto ab = check_nearest({dir.path() / "a", dir.path() / "b"});
  const auto ba = check_nearest({dir.path() / "b", dir.path() / "a"});
  EXPECT_THAT(codes_in(ab, "a/m.py"), ::testing::ElementsAre("KV901", "KV901"));
  EXPECT_THAT(codes_in(ab, "b/m.py"), ::testing::ElementsAre("KV903", "KV903"));
  ASSERT_EQ(ab.findings.size(), ba.findings.size());
  for (std::size_t i = 0; i < ab.findings.size(); ++i) {
    EXPECT_EQ(ab.findings[i].loc.file, ba.findings[i].loc.file);
    EXPECT_EQ(ab.findings[i].fingerprint, ba.findings[i].fingerprint);
  }
  // a/ fails only on errors, b/ on warnings: only b's two KV903 warnings fail the run.
  EXPECT_EQ(ab.findings_failing, 2u);
  EXPECT_EQ(ba.findings_failing, 2u);
}

TEST(Project, NestedConfigGovernsItsSubtreeAndOnlyItsSubtree) {
  TempDir dir;
  dir.write("kvlint.toml", "select = [\"KV901\"]\n");
  dir.write("m.py", kTwoSuppressions);
  dir.write("sub/kvlint.toml", "ignore = [\"KV901\"]  # KV903 stays\n");
  dir.write("sub/m.py", kTwoSuppressions);
  const auto result = check_nearest({dir.path()});
  EXPECT_THAT(codes_in(result, "/m.py"), ::testing::Contains("KV901"));
  EXPECT_THAT(codes_in(result, "sub/m.py"), ::testing::ElementsAre("KV903", "KV903"));
}

TEST(Project, WarmRunMemoServesSeveralProjects) {
  TempDir dir;
  write_two_projects(dir);
  CheckOptions options;
  options.paths = {dir.path() / "a", dir.path() / "b"};
  options.nearest_config = true;
  const auto cold = run_check(options);
  const auto warm = run_check(options);
  EXPECT_EQ(cold.stats.files_parsed, 2u);
  EXPECT_EQ(warm.stats.files_parsed, 0u);
  ASSERT_EQ(warm.findings.size(), cold.findings.size());
  for (std::size_t i = 0; i < warm.findings.size(); ++i)
    EXPECT_EQ(warm.findings[i].fingerprint, cold.findings[i].fingerprint);
  EXPECT_EQ(warm.findings_failing, cold.findings_failing);
  // A change in one project's configuration is seen.
  dir.write("b/kvlint.toml", "select = [\"KV901\"]\n");
  EXPECT_THAT(codes_in(run_check(options), "b/m.py"), ::testing::ElementsAre("KV901", "KV901"));
}

TEST(Fingerprint, StableWhenALineIsInsertedAboveAndDistinctForIdenticalLines) {
  TempDir dir;
  dir.write("m.py", kTwoSuppressions);
  const auto before = fingerprints(check(dir), "KV901");
  ASSERT_EQ(before.size(), 2u);
  EXPECT_NE(before[0], before[1]);  // identical tuples get an occurrence index
  dir.write("m.py", std::string("import os\n\n") + std::string(kTwoSuppressions));
  const auto after = check(dir);
  EXPECT_EQ(fingerprints(after, "KV901"), before);
  EXPECT_EQ(after.findings[0].loc.line, 3u);
  // Whitespace changes on the line do not matter either.
  dir.write("m.py",
            "x  =  compute()   # kvlint: ignore[KV101]\ny = 2\nx = compute()  # kvlint: ignore[KV101]\n");
  EXPECT_EQ(fingerprints(check(dir), "KV901"), before);
  // Another path gives another fingerprint.
  fs::rename(dir.path() / "m.py", dir.path() / "n.py");
  EXPECT_NE(fingerprints(check(dir), "KV901"), before);
}

TEST(Pipeline, SuppressionWithoutBracketsHidesNothingAndIsReported) {
  TempDir dir;
  dir.write("m.py",
            "from torch import nn\n"
            "from transformers import DynamicCache\n"
            "class M(nn.Module):\n"
            "    def __init__(self):\n"
            "        self.cache = DynamicCache()  # kvlint: ignore KV999\n");
  const auto result = check(dir);
  std::vector<std::string> codes;
  for (const auto& f : result.findings) codes.push_back(f.code + "@" + std::to_string(f.loc.line));
  EXPECT_EQ(codes, (std::vector<std::string>{"KV101@5", "KV904@5"}));
  EXPECT_EQ(result.suppressed, 0u);
}

TEST(Fingerprint, DependsOnCodePathOwnerAndText) {
  Finding f;
  f.code = "KV101";
  f.loc.file = "a.py";
  f.owner_class = "A";
  const std::string base = fingerprint_of(f, "self.c = DynamicCache()");
  EXPECT_EQ(base, fingerprint_of(f, "  self.c   =  DynamicCache()  "));
  EXPECT_NE(base, fingerprint_of(f, "self.d = DynamicCache()"));
  Finding other = f;
  other.owner_class = "B";
  EXPECT_NE(base, fingerprint_of(other, "self.c = DynamicCache()"));
  other = f;
  other.loc.line = 99;
  EXPECT_EQ(base, fingerprint_of(other, "self.c = DynamicCache()"));  // no line numbers
}

TEST(ResultCache, RoundTripsFactsAndDiagnostics) {
  TempDir dir;
  facts::FileFacts facts;
  facts.path = "pkg/m.py";
  facts.module_name = "pkg.m";
  facts::ClassFact cls;
  cls.name = "Decoder";
  cls.bases.push_back({"nn.Module", "torch.nn.Module"});
  facts.classes.push_back(cls);
  facts::Suppression s;
  s.codes = {"KV101"};
  s.reason = "why";
  s.applies_to_line = 4;
  facts.suppressions.push_back(s);
  Diagnostic d;
  d.path = "pkg/m.py";
  d.line = 3;
  d.column = 7;
  d.kind = "parse-error";
  d.message = "missing ')'";
  const facts::Vocabulary vocab;
  const std::string key =
      cache_key({1, "v1", "cfg", facts::signature(vocab), "pkg/m.py", "pkg.m", "/p/kvlint.toml"});
  EXPECT_EQ(key.size(), 32u);
  EXPECT_NE(key, cache_key({2, "v1", "cfg", facts::signature(vocab), "pkg/m.py", "pkg.m", "/p/kvlint.toml"}));
  EXPECT_NE(key, cache_key({1, "v2", "cfg", facts::signature(vocab), "pkg/m.py", "pkg.m", "/p/kvlint.toml"}));
  EXPECT_NE(key,
            cache_key({1, "v1", "cfg2", facts::signature(vocab), "pkg/m.py", "pkg.m", "/p/kvlint.toml"}));
  facts::Vocabulary wider = vocab;
  wider.cache_classes.push_back("MyCache");
  EXPECT_NE(key, cache_key({1, "v1", "cfg", facts::signature(wider), "pkg/m.py", "pkg.m", "/p/kvlint.toml"}));
  {
    ResultCache cache(dir.path() / "cache", "v1");
    EXPECT_FALSE(cache.lookup(key));
    cache.store(key, "pkg/m.py", CachedAnalysis{facts, {d}, {}});
    ASSERT_TRUE(cache.save({})) << cache.note();
  }
  ResultCache reloaded(dir.path() / "cache", "v1");
  EXPECT_TRUE(reloaded.note().empty());
  const auto hit = reloaded.lookup(key);
  ASSERT_TRUE(hit);
  EXPECT_EQ(facts::to_json(hit->facts), facts::to_json(facts));
  ASSERT_EQ(hit->diagnostics.size(), 1u);
  EXPECT_EQ(hit->diagnostics[0].message, "missing ')'");
  EXPECT_EQ(hit->diagnostics[0].column, 7u);
  // Another tool version ignores the file.
  ResultCache other_version(dir.path() / "cache", "v2");
  EXPECT_FALSE(other_version.lookup(key));
}

TEST(ResultCache, CorruptFileIsIgnoredWithANote) {
  TempDir dir;
  dir.write("cache/facts-cache.cbor", "{ not cbor");
  ResultCache cache(dir.path() / "cache", "v1");
  EXPECT_THAT(cache.note(), ::testing::HasSubstr("ignoring unreadable cache"));
  EXPECT_FALSE(cache.lookup("00"));
  EXPECT_TRUE(cache.save({}));  // replaced by a valid (empty) cache
  ResultCache again(dir.path() / "cache", "v1");
  EXPECT_TRUE(again.note().empty());
}

TEST(Pipeline, WarmCacheParsesNothingAndGivesTheSameResult) {
  TempDir dir;
  dir.write("m.py", kTwoSuppressions);
  dir.write("other.py", "print('nothing to see')\n");
  const auto cold = check(dir, true);
  EXPECT_EQ(cold.stats.files_found, 2u);
  EXPECT_EQ(cold.stats.files_parsed, 1u);
  EXPECT_EQ(cold.stats.files_skipped, 1u);  // the prefilter: no anchor in other.py
  const std::size_t m_bytes = kTwoSuppressions.size();
  EXPECT_EQ(cold.stats.bytes_read, m_bytes + std::string_view("print('nothing to see')\n").size());
  EXPECT_EQ(cold.stats.bytes_parsed, m_bytes);
  EXPECT_TRUE(fs::exists(dir.path() / ".kvlint_cache/facts-cache.cbor"));
  const auto warm = check(dir, true);
  EXPECT_EQ(warm.stats.files_parsed, 0u);
  EXPECT_EQ(warm.stats.files_cached, 1u);
  EXPECT_EQ(warm.stats.bytes_parsed, 0u);
  ASSERT_EQ(warm.findings.size(), cold.findings.size());
  for (std::size_t i = 0; i < warm.findings.size(); ++i) {
    EXPECT_EQ(warm.findings[i].fingerprint, cold.findings[i].fingerprint);
    EXPECT_EQ(warm.findings[i].message, cold.findings[i].message);
  }
  // An edit re-parses exactly that file.
  dir.write("m.py", std::string(kTwoSuppressions) + "z = 3\n");
  EXPECT_EQ(check(dir, true).stats.files_parsed, 1u);
}

TEST(Pipeline, ProjectCacheSubclassesWidenTheVocabulary) {
  TempDir dir;
  // base.py mentions a vocabulary class; user.py only the project subclass.
  const std::string base =
      "from transformers import DynamicCache\nclass RingCache(DynamicCache):\n    pass\n";
  const std::string user =
      "from base import RingCache\nclass Owner:\n    def __init__(self):\n        self.c = RingCache()\n";
  dir.write("base.py", base);
  dir.write("user.py", user);
  const auto result = check(dir, false, 2);
  EXPECT_EQ(result.stats.files_parsed, 2u);
  EXPECT_EQ(result.stats.files_skipped, 0u);
  // base.py names the new subclass too, so the widened vocabulary parses it again: every parse counts.
  EXPECT_EQ(result.stats.bytes_parsed, 2 * base.size() + user.size());
}

TEST(Pipeline, SkippedFilesDefiningBaseClassesAreParsed) {
  TempDir dir;
  dir.write("declarer.py",
            "from base import Base\nclass Holder(Base):\n"
            "    def model_local_kv_specs(self):\n        return []\n");
  dir.write("base.py", "import torch\nclass Base(Middle):\n    pass\n");               // no anchor
  dir.write("middle.py", "import torch\nclass Middle(torch.nn.Module):\n    pass\n");  // no anchor
  dir.write("unrelated.py", "class Other:\n    pass\n");
  const auto result = check(dir, false, 2);
  EXPECT_EQ(result.stats.files_parsed, 3u);  // two base rounds: Base, then Middle
  EXPECT_EQ(result.stats.files_skipped, 1u);
}

// A Python file defines a class only with `class` first on its line (indented, after a tab, in
// a file with a byte order mark); prose that writes "class Base" is not a definition.
TEST(Pipeline, BaseClassSearchReadsOnlyClassStatementsInPython) {
  TempDir dir;
  dir.write("declarer.py",
            "from lib import Base, Tabbed, Marked\nclass Holder(Base, Tabbed, Marked):\n"
            "    def model_local_kv_specs(self):\n        return []\n");
  dir.write("lib/__init__.py", "");  // the base is named `lib.Base`: looked for in package lib
  dir.write("lib/indented.py", "import torch\nif torch:\n    class Base(torch.nn.Module):\n        pass\n");
  dir.write("lib/tabbed.py", "class\tTabbed:\n    pass\n");
  dir.write("lib/marked.py",
            "\xEF\xBB\xBF"
            "class Marked:\n    pass\n");
  dir.write("lib/prose.py",
            "\"\"\"Each class Base has a class Tabbed; a struct Marked.\"\"\"\nx = 1  # class Base\n");
  const auto result = check(dir, false, 2);
  std::set<std::string> parsed;
  for (const auto& f : result.parsed_files) parsed.insert(f.path.filename().string());
  EXPECT_EQ(parsed, (std::set<std::string>{"declarer.py", "indented.py", "tabbed.py", "marked.py"}));
}

// The base-class search parses a skipped file for a base named by an absolute dotted name
// only when its module may be that name's (as find_class resolves it): `lib.base.Base` is
// looked for in lib/base.py, not in other/base.py, which defines a `Base` too. A bare base
// (a builtin, a star import) is looked for in every file.
TEST(Pipeline, BaseClassSearchParsesOnlyModulesTheDottedNameMayName) {
  TempDir dir;
  dir.write("holder.py",
            "from lib.base import Base\nclass Holder(Base):\n    def model_local_kv_specs(self):\n"
            "        return []\nclass Bare(Anywhere):\n    pass\n");
  dir.write("lib/__init__.py", "");
  dir.write("lib/base.py", "class Base:\n    pass\n");
  dir.write("other/__init__.py", "");
  dir.write("other/base.py", "class Base:\n    pass\n");
  dir.write("other/anywhere.py", "class Anywhere:\n    pass\n");
  const auto result = check(dir, false, 2);
  std::set<std::string> parsed;
  for (const auto& f : result.parsed_files)
    parsed.insert(f.path.lexically_relative(dir.path()).generic_string());
  EXPECT_EQ(parsed, (std::set<std::string>{"holder.py", "lib/base.py", "other/anywhere.py"}));
}

// Past the kept-bytes budget a file is read again only by a phase that needs it whole. Only the
// files the prefilter passes for parsing are kept: the others (the fillers: no anchor) are
// summarised as they are read and take no room, and the prefilter and the base-class search
// (run here: Holder's base is defined nowhere) answer from that first read. Three models do not
// fit in the budget together: with one worker reading in path order the last is read again
// once, to be parsed or, when the cache holds its facts, checked.
TEST(Pipeline, FilesPastTheKeptBudgetAreReadAgainOnlyToBeParsed) {
  TempDir dir;
  std::string filler;
  while (filler.size() < (std::size_t{1} << 20)) filler += "value = 12345  # no anchor, no class statement\n";
  for (int i = 0; i < 8; ++i) dir.write("filler_" + std::to_string(i) + ".py", filler);
  // Two fit in the budget, not three.
  const std::string model =
      "from elsewhere import Base\nclass Holder(Base):\n    def model_local_kv_specs(self):\n"
      "        return []\n#" +
      std::string(kKeptBytesBudget / 3 + 1024, 'x') + "\n";
  for (int i = 0; i < 3; ++i) dir.write("a_model_" + std::to_string(i) + ".py", model);
  const auto result = check(dir, false, 1);
  ASSERT_GT(result.stats.bytes_read, kKeptBytesBudget);
  ASSERT_EQ(result.parsed_files.size(), 3u);
  EXPECT_EQ(result.stats.bytes_reread, model.size());
  // Two workers read in another order; still only one model can be read again.
  EXPECT_EQ(check(dir, false, 2).stats.bytes_reread, model.size());
  // Once the cache holds the models' facts, a run (here one the run memo cannot answer: another
  // file changed) takes them by the hash the file index holds and checks each file still has the
  // stamp the index knew, reading none.
  ASSERT_EQ(check(dir, true, 1).stats.files_parsed, 3u);
  dir.write("filler_0.py", filler + "# edited\n");
  const auto warm = check(dir, true, 1);
  EXPECT_EQ(warm.stats.files_cached, 3u);
  EXPECT_EQ(warm.stats.bytes_reread, 0u);
}

// The capture-holder round parses a skipped Python file that constructs a capturing class,
// found by its whole name; not one naming a longer class that ends in it, nor a lowercase
// capturing class (which the Python front end never reads as constructed).
TEST(Pipeline, SkippedFilesConstructingCapturingClassesAreParsedByWholeName) {
  TempDir dir;
  dir.write(
      "graphs.py",
      "import torch\nclass Graph:\n    def capture(self):\n        with torch.cuda.graph(self.g):\n"
      "            pass\nclass graph:\n    def __enter__(self):\n        with torch.cuda.graph(self.g):\n"
      "            pass\n");
  dir.write("holder.py",
            "from graphs import Graph\nclass Holder:\n    def __init__(self):\n        self.g = Graph()\n");
  dir.write("longer_name.py", "class Other:\n    def __init__(self):\n        self.g = BigGraph()\n");
  dir.write("lowercase.py",
            "from graphs import graph\ndef run(g):\n    with graph(g):\n        return graph.x\n");
  const auto result = check(dir, false, 2);
  std::set<std::string> parsed;
  for (const auto& f : result.parsed_files) parsed.insert(f.path.filename().string());
  EXPECT_EQ(parsed, (std::set<std::string>{"graphs.py", "holder.py"}));
}

TEST(Pipeline, DiagnosticsForBadFilesAndParseErrors) {
  TempDir dir;
  dir.write("bin.py", std::string("a\0b", 3));
  dir.write("latin1.py", "s = '\xE9'\n");
  dir.write("broken.py", "def model_local_kv_specs(:\n    return [\n");
  const auto result = check(dir);
  std::set<std::string> kinds;
  for (const auto& d : result.diagnostics) {
    kinds.insert(d.kind);
    if (d.kind == "parse-error") {
      EXPECT_THAT(d.path, ::testing::EndsWith("broken.py"));
      EXPECT_GE(d.line, 1u);
    }
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"binary", "invalid-utf8", "parse-error"}));
  EXPECT_EQ(result.stats.files_failed, 2u);
  EXPECT_EQ(result.stats.files_parsed, 1u);
}

}  // namespace
}  // namespace kvlint
