// `kvlint check --diff REF`, `--baseline FILE` and `--write-baseline FILE`, end to
// end: the kvlint binary on real git repositories with real commits.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/engine/temp_dir.hpp"
#include "tools/kvlint/confirm/child_process.hpp"
#include "tools/kvlint/review/changed_lines.hpp"

extern char** environ;  // NOLINT: POSIX

namespace {

namespace fs = std::filesystem;
using kvlint::testing::TempDir;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct ProcessRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs argv (no shell) with the caller's environment plus `extra_env`.
ProcessRun run(std::vector<std::string> argv, const std::vector<std::string>& extra_env = {}) {
  kvlint::confirm::ChildSpec spec;
  spec.argv = std::move(argv);
  for (char** item = environ; item != nullptr && *item != nullptr; ++item) spec.env.emplace_back(*item);
  spec.env.insert(spec.env.end(), extra_env.begin(), extra_env.end());
  spec.stderr_tail_bytes = 1 << 16;
  spec.timeout = std::chrono::seconds(60);
  ProcessRun result;
  kvlint::confirm::ChildCallbacks callbacks;
  callbacks.on_line = [&](std::string_view line, bool) {
    result.out += line;
    result.out += '\n';
  };
  const auto exit = kvlint::confirm::run_child(spec, callbacks);
  EXPECT_TRUE(exit.spawned) << exit.spawn_error;
  result.exit_code = exit.exit_code;
  result.err = exit.stderr_tail;
  return result;
}

// A git repository in a temporary directory, isolated from the user's git configuration.
class Repo {
 public:
  Repo() {
    git({"init", "-q", "-b", "main"});
    git({"config", "user.name", "kvlint test"});
    git({"config", "user.email", "kvlint@example.invalid"});
  }
  const fs::path& path() const { return dir_.path(); }
  void write(const std::string& relative, std::string_view content) const { dir_.write(relative, content); }
  ProcessRun git(std::vector<std::string> args) const {
    args.insert(args.begin(), {"git", "-C", dir_.path().string()});
    ProcessRun r = run(std::move(args), {"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r;
  }
  void commit(const std::string& message) const {
    git({"add", "-A"});
    git({"commit", "-q", "-m", message});
  }
  // `kvlint check <repo> --no-cache args...`.
  ProcessRun kvlint(std::vector<std::string> args) const {
    std::vector<std::string> argv{KVLINT_BINARY, "check", dir_.path().string(), "--no-cache"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(std::move(argv));
  }

 private:
  TempDir dir_;
};

json findings_of(const ProcessRun& r) {
  try {
    return json::parse(r.out).at("findings");
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a JSON report (" << e.what() << "): " << r.out << "\nstderr: " << r.err;
    return json::array();
  }
}

// "KV101 model.py:12" for each finding, paths relative to the repository.
std::vector<std::string> summary(const Repo& repo, const ProcessRun& r) {
  std::vector<std::string> out;
  for (const auto& f : findings_of(r))
    out.push_back(fmt::format("{} {}:{}", f["code"].get<std::string>(),
                              fs::path(f["path"].get<std::string>()).lexically_relative(repo.path()).string(),
                              f["line"].get<int>()));
  return out;
}

// Each class's lines differ, so git's diff cannot align a new class with an old one.
std::string undeclared_cache_class(const std::string& name) {
  return "class " + name +
         "(nn.Module):\n"
         "    def forward(self, x):\n"
         "        self." +
         name +
         "_cache = DynamicCache()\n"
         "        return x\n";
}

constexpr const char* kImports = "from torch import nn\nfrom transformers import DynamicCache\n\n\n";

TEST(Diff, ReportsOnlyFindingsOnChangedLinesAndExitsOnThemAlone) {
  Repo repo;
  repo.write("model.py", std::string(kImports) + undeclared_cache_class("Old"));
  repo.write("other.py", "def helper(a):\n    return a\n");
  repo.write("broken.py", "from transformers import DynamicCache\ncache = DynamicCache()\ndef f(:\n");
  repo.commit("base");
  repo.git({"checkout", "-q", "-b", "pr"});

  // A PR that touches nothing kvlint judges: silent and clean, though the tree has a finding.
  repo.write("other.py", "def helper(a):\n    return a + 1\n");
  repo.commit("unrelated");
  EXPECT_THAT(summary(repo, repo.kvlint({"--format", "json"})), ElementsAre("KV101 model.py:7"));
  ProcessRun unrelated = repo.kvlint({"--diff", "main", "--format", "json"});
  EXPECT_EQ(unrelated.exit_code, 0) << unrelated.err;
  EXPECT_THAT(findings_of(unrelated), IsEmpty());
  EXPECT_THAT(unrelated.err,
              HasSubstr("--diff main: 1 finding on lines this change did not touch not shown"));
  // The untouched file's syntax error stays silent too; the whole check reports it.
  EXPECT_THAT(json::parse(unrelated.out).at("diagnostics"), IsEmpty());
  EXPECT_EQ(json::parse(repo.kvlint({"--format", "json"}).out).at("diagnostics").size(), 1u);

  // A PR that adds a cache: only its finding, and it fails the run.
  repo.write("model.py",
             std::string(kImports) + undeclared_cache_class("Old") + "\n\n" + undeclared_cache_class("New"));
  repo.commit("new cache");
  ProcessRun added = repo.kvlint({"--diff", "main", "--format", "json"});
  EXPECT_EQ(added.exit_code, 1);
  EXPECT_THAT(summary(repo, added), ElementsAre("KV101 model.py:13"));
  // Text output counts what it reports.
  EXPECT_THAT(repo.kvlint({"--diff", "main"}).out, HasSubstr("Found 1 finding"));
}

TEST(Diff, CountsUncommittedEditsAndUntrackedFiles) {
  Repo repo;
  repo.write("model.py", std::string(kImports) + undeclared_cache_class("Old"));
  repo.commit("base");
  EXPECT_THAT(findings_of(repo.kvlint({"--diff", "main", "--format", "json"})), IsEmpty());

  repo.write("model.py", std::string(kImports) + undeclared_cache_class("Old") + "\n\n" +
                             undeclared_cache_class("Edited"));
  repo.write("fresh/new_model.py", std::string(kImports) + undeclared_cache_class("Untracked"));
  repo.write(".gitignore", "ignored/\n");
  repo.write("ignored/gen.py", std::string(kImports) + undeclared_cache_class("Ignored"));
  // HEAD is main itself: the merge base is HEAD and only the working tree differs.
  EXPECT_THAT(summary(repo, repo.kvlint({"--diff", "HEAD", "--format", "json"})),
              ElementsAre("KV101 fresh/new_model.py:7", "KV101 model.py:13"));
}

// The holder declares the spec for the generator it holds; the PR edits only that
// declaration, in model.py, and the generator's cache in generator.py loses its
// coverage. The finding sits in the untouched file; its related location, the
// holder's declaration, is on the changed line.
TEST(Diff, AnEditedDeclarationReportsTheCacheItStopsCoveringInAnotherFile) {
  Repo repo;
  repo.write("generator.py",
             "from transformers import StaticCache\n"
             "\n"
             "\n"
             "class Generator:\n"
             "    def __init__(self, llm, config):\n"
             "        self.llm = llm\n"
             "        self.config = config\n"
             "\n"
             "    def generate(self, embeds):\n"
             "        cache = StaticCache(config=self.config, max_batch_size=1, max_cache_len=2048)\n"
             "        return self.llm(inputs_embeds=embeds, past_key_values=cache)\n");
  const std::string model_head =
      "from torch import nn\n"
      "\n"
      "from vllm_omni.model_local_kv import ModelLocalKVScope, RowDriver, spec_from_hf_config\n"
      "\n"
      "from .generator import Generator\n"
      "\n"
      "\n"
      "class Talker(nn.Module):\n"
      "    def __init__(self, config, llm):\n"
      "        super().__init__()\n"
      "        self.config = config\n"
      "        self.gen = Generator(llm, config)\n"
      "\n"
      "    def model_local_kv_specs(self):\n";
  repo.write("model.py", model_head +
                             "        return [\n"
                             "            spec_from_hf_config(\n"
                             "                self.config,\n"
                             "                name=\"talker\",\n"
                             "                physical_capacity_positions=2048,\n"
                             "                capacity_source=\"max_cache_len=2048\",\n"
                             "                scope=ModelLocalKVScope.INVOCATION,\n"
                             "                dtype=self.config.torch_dtype,\n"
                             "                rows=RowDriver.MAX_NUM_SEQS,\n"
                             "            )\n"
                             "        ]\n");
  repo.commit("base");
  EXPECT_THAT(summary(repo, repo.kvlint({"--format", "json", "--select", "KV101"})), IsEmpty());

  repo.git({"checkout", "-q", "-b", "pr"});
  repo.write("model.py", model_head + "        return []\n");
  repo.commit("drop the spec");
  ProcessRun pr = repo.kvlint({"--diff", "main", "--format", "json", "--select", "KV101"});
  EXPECT_EQ(pr.exit_code, 1) << pr.err;
  EXPECT_THAT(summary(repo, pr), ElementsAre("KV101 generator.py:10"));
  bool declaration_related = false;
  const json findings = findings_of(pr);
  for (const auto& r : findings.at(0).at("related"))
    declaration_related =
        declaration_related ||
        (fs::path(r["path"].get<std::string>()).filename() == "model.py" && r["line"].get<int>() == 14);
  EXPECT_TRUE(declaration_related) << pr.out;
}

TEST(Diff, OutsideARepositoryOrWithAnUnknownRefExitsTwo) {
  TempDir plain;
  plain.write("m.py", "x = 1\n");
  ProcessRun outside = run({KVLINT_BINARY, "check", plain.path().string(), "--diff", "main"});
  EXPECT_EQ(outside.exit_code, 2);
  EXPECT_THAT(outside.err, HasSubstr("not inside"));
  EXPECT_THAT(outside.out, IsEmpty());

  Repo repo;
  repo.write("m.py", "x = 1\n");
  repo.commit("base");
  for (const std::string ref : {"no-such-branch", "main..HEAD", ""}) {
    ProcessRun unknown = repo.kvlint({"--diff", ref});
    EXPECT_EQ(unknown.exit_code, 2) << ref;
    EXPECT_THAT(unknown.err, HasSubstr("unknown revision")) << ref;
    EXPECT_THAT(unknown.out, IsEmpty());
  }
}

TEST(Diff, UnifiedDiffParsingHandlesQuotedPathsDeletionsAndContentThatLooksLikeAHeader) {
  const fs::path root = "/repo";
  const std::string diff =
      "diff --git a/a.py b/a.py\n"
      "--- a/a.py\n"
      "+++ b/a.py\n"
      "@@ -3,0 +4,2 @@ def f():\n"
      "+++ b/not-a-header.py\n"
      "+x = 1\n"
      "@@ -10,2 +11,0 @@\n"
      "-gone\n"
      "-gone too\n"
      "diff --git \"a/tab\\there.py\" \"b/tab\\there.py\"\n"
      "--- \"a/tab\\there.py\"\n"
      "+++ \"b/tab\\there.py\"\n"
      "@@ -1 +1 @@\n"
      "-old\n"
      "\\ No newline at end of file\n"
      "+new\n"
      "diff --git a/deleted.py b/deleted.py\n"
      "--- a/deleted.py\n"
      "+++ /dev/null\n"
      "@@ -1 +0,0 @@\n"
      "-x\n";
  const auto changed = kvlint::review::parse_unified_diff(diff, root);
  auto at = [](const char* file, uint32_t line, uint32_t end_line = 0) {
    kvlint::facts::Location loc;
    loc.file = file;
    loc.line = line;
    loc.end_line = end_line;
    return loc;
  };
  EXPECT_EQ(changed.file_count(), 2u);
  EXPECT_FALSE(changed.touches(at("/repo/a.py", 3)));
  EXPECT_TRUE(changed.touches(at("/repo/a.py", 4)));
  EXPECT_TRUE(changed.touches(at("/repo/a.py", 5)));
  EXPECT_FALSE(changed.touches(at("/repo/not-a-header.py", 1)));
  // Lines 10-11 of the old file were deleted after new line 11: a span around it changed,
  // a line next to it did not.
  EXPECT_TRUE(changed.touches(at("/repo/a.py", 8, 14)));
  EXPECT_FALSE(changed.touches(at("/repo/a.py", 11)));
  EXPECT_FALSE(changed.touches(at("/repo/a.py", 12, 14)));
  EXPECT_TRUE(changed.touches(at("/repo/tab\there.py", 1)));
  EXPECT_FALSE(changed.touches(at("/repo/deleted.py", 1)));
}

// git ends a `---`/`+++` name holding a space with a TAB (GNU diff's convention); the TAB is
// not part of the name.
TEST(Diff, UnifiedDiffParsingDropsTheTabAfterANameWithASpace) {
  const std::string diff =
      "diff --git a/my model.py b/my model.py\n"
      "--- a/my model.py\t\n"
      "+++ b/my model.py\t\n"
      "@@ -1,0 +2 @@\n"
      "+x = 1\n";
  const auto changed = kvlint::review::parse_unified_diff(diff, "/repo");
  kvlint::facts::Location loc;
  loc.file = "/repo/my model.py";
  loc.line = 2;
  EXPECT_TRUE(changed.touches(loc));
  EXPECT_TRUE(changed.touches_file("/repo/my model.py"));
  EXPECT_FALSE(changed.touches_file("/repo/my model.py\t"));
}

TEST(Diff, ReportsFindingsInAChangedFileWhoseNameHasASpace) {
  Repo repo;
  repo.write("my model.py", std::string(kImports) + undeclared_cache_class("Old"));
  repo.commit("base");
  repo.git({"checkout", "-q", "-b", "pr"});
  repo.write("my model.py",
             std::string(kImports) + undeclared_cache_class("Old") + "\n\n" + undeclared_cache_class("New"));
  repo.commit("new cache");
  const ProcessRun run = repo.kvlint({"--diff", "main", "--format", "json"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(summary(repo, run), ElementsAre("KV101 my model.py:13"));
}

// `.gitattributes` marking files `-diff` makes git print "Binary files differ" without hunks; a
// pull request must not switch the gate off that way.
TEST(Diff, FilesMarkedMinusDiffInGitattributesStillCount) {
  Repo repo;
  repo.write("model.py", std::string(kImports) + undeclared_cache_class("Old"));
  repo.commit("base");
  repo.git({"checkout", "-q", "-b", "pr"});
  repo.write(".gitattributes", "*.py -diff\n");
  repo.write("model.py",
             std::string(kImports) + undeclared_cache_class("Old") + "\n\n" + undeclared_cache_class("New"));
  repo.commit("new cache, diff turned off");
  const ProcessRun run = repo.kvlint({"--diff", "main", "--format", "json"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(summary(repo, run), ElementsAre("KV101 model.py:13"));
}

TEST(Baseline, SurvivesLineShiftsAndRenamesReportsNewFindingsAndCountsFixes) {
  Repo repo;
  const std::string model = std::string(kImports) + undeclared_cache_class("Kept") + "\n\n" +
                            undeclared_cache_class("ToFix") + "\n\ndef unrelated(a):\n    return a\n";
  repo.write("model.py", model);
  repo.commit("base");
  const fs::path baseline = repo.path() / ".." / (repo.path().filename().string() + "-baseline.json");
  struct Cleanup {
    fs::path file;
    ~Cleanup() { fs::remove(file); }
  } cleanup{baseline};
  ProcessRun wrote = repo.kvlint({"--write-baseline", baseline.string(), "--format", "json"});
  EXPECT_EQ(wrote.exit_code, 0) << "writing a baseline records, it does not fail: " << wrote.err;
  EXPECT_THAT(wrote.err, HasSubstr("wrote a baseline of 2 findings"));
  EXPECT_EQ(json::parse(std::ifstream(baseline)).at("findings").size(), 2u);
  // A baseline that cannot be written: exit 2, nothing on stdout.
  ProcessRun unwritable =
      repo.kvlint({"--write-baseline", (repo.path() / "no-such-dir" / "b.json").string()});
  EXPECT_EQ(unwritable.exit_code, 2);
  EXPECT_THAT(unwritable.err, HasSubstr("--write-baseline"));
  EXPECT_THAT(unwritable.out, IsEmpty());

  // Unchanged: nothing new, nothing fixed.
  ProcessRun same = repo.kvlint({"--baseline", baseline.string(), "--format", "json"});
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_THAT(findings_of(same), IsEmpty());
  EXPECT_THAT(same.err, HasSubstr("0 of its 2 findings fixed, 2 still present"));

  // Lines inserted above both findings, an unrelated function renamed: still nothing new.
  std::string shifted = "# A header comment\n# over two lines\n" + model;
  shifted.replace(shifted.find("def unrelated"), 13, "def renamed_helper");
  repo.write("model.py", shifted);
  ProcessRun moved = repo.kvlint({"--baseline", baseline.string(), "--format", "json"});
  EXPECT_EQ(moved.exit_code, 0) << moved.out;
  EXPECT_THAT(findings_of(moved), IsEmpty());
  EXPECT_THAT(moved.err, HasSubstr("0 of its 2 findings fixed"));

  // A real fix and a new cache: the fix is counted, the new finding reported.
  std::string fixed = "# A header comment\n# over two lines\n" + std::string(kImports) +
                      undeclared_cache_class("Kept") + "\n\n" + undeclared_cache_class("Added");
  repo.write("model.py", fixed);
  ProcessRun after = repo.kvlint({"--baseline", baseline.string(), "--format", "json"});
  EXPECT_EQ(after.exit_code, 1);
  EXPECT_THAT(summary(repo, after), ElementsAre("KV101 model.py:15"));
  EXPECT_THAT(findings_of(after).at(0).at("owner"), "Added");
  EXPECT_THAT(after.err, HasSubstr("1 of its 2 findings fixed, 1 still present"));

  // A SARIF report is a baseline too (partialFingerprints), and --quiet keeps stderr empty.
  const fs::path sarif = baseline.string() + ".sarif";
  Cleanup sarif_cleanup{sarif};
  repo.write("model.py", model);
  EXPECT_EQ(repo.kvlint({"--format", "sarif", "-o", sarif.string()}).exit_code, 1);
  repo.write("model.py", shifted);
  ProcessRun from_sarif = repo.kvlint({"--baseline", sarif.string(), "--format", "json", "--quiet"});
  EXPECT_EQ(from_sarif.exit_code, 0) << from_sarif.out;
  EXPECT_THAT(findings_of(from_sarif), IsEmpty());
  EXPECT_THAT(from_sarif.err, IsEmpty());
}

TEST(Baseline, AFileThatIsNotAKvlintReportExitsTwo) {
  Repo repo;
  repo.write("m.py", "x = 1\n");
  repo.write("other.json", R"({"version": "2.1.0", "runs": [{"results": [{"ruleId": "X"}]}]})");
  repo.write("text.json", "not json");
  for (const char* name : {"other.json", "text.json", "missing.json"}) {
    ProcessRun r = repo.kvlint({"--baseline", (repo.path() / name).string()});
    EXPECT_EQ(r.exit_code, 2) << name;
    EXPECT_THAT(r.err, HasSubstr("--baseline")) << name;
    EXPECT_THAT(r.out, IsEmpty()) << name;
  }
}

// A field of the wrong type is named (not an internal JSON error), and only a regular file of
// bounded size is read: a FIFO would wait for a writer forever, /dev/zero never ends.
TEST(Baseline, WrongTypesAndFilesThatAreNotRegularExitTwoNamingTheProblem) {
  Repo repo;
  repo.write("m.py", "x = 1\n");
  const std::vector<std::pair<std::string, std::string>> documents = {
      {R"({"schema": 5})", "\"schema\""},
      {R"({"schema": "kvlint-findings", "findings": [{"fingerprint": 7}]})", "findings[0]"},
      {R"({"version": 2.1, "runs": []})", "\"version\""},
  };
  for (const auto& [text, named] : documents) {
    repo.write("b.json", text);
    ProcessRun r = repo.kvlint({"--baseline", (repo.path() / "b.json").string()});
    EXPECT_EQ(r.exit_code, 2) << text;
    EXPECT_THAT(r.err, HasSubstr(named)) << text;
    EXPECT_THAT(r.err, ::testing::Not(HasSubstr("json.exception"))) << text;
    EXPECT_THAT(r.err, ::testing::Not(HasSubstr("internal error"))) << text;
  }
  const fs::path fifo = repo.path() / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const fs::path& file : {fifo, fs::path("/dev/zero")}) {
    const auto start = std::chrono::steady_clock::now();
    ProcessRun r = repo.kvlint({"--baseline", file.string()});
    EXPECT_EQ(r.exit_code, 2) << file;
    EXPECT_THAT(r.err, HasSubstr("not a regular file")) << file;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30)) << file;
  }
  // A sparse 4 GiB file: refused by its size, never read.
  const fs::path huge = repo.path() / "huge.json";
  repo.write("huge.json", "{");
  fs::resize_file(huge, std::uintmax_t{4} << 30);
  ProcessRun r = repo.kvlint({"--baseline", huge.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("byte limit"));
}

// A 200 KB baseline of 100,000 nested arrays crashed kvlint (a recursive copy of the value);
// nesting is bounded as the document is read, and every field of a finding is read with its
// type checked, so a nested array where a string or number belongs is exit 2 wherever it is.
TEST(Baseline, DeeplyNestedOrWrongTypedFieldsExitTwoNamingTheProblem) {
  Repo repo;
  repo.write("m.py", "x = 1\n");
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string shallow = std::string(10, '[') + std::string(10, ']');
  // A finding whose `field` holds `value`, its other fields as kvlint writes them.
  auto with = [](const std::string& field, const std::string& value) {
    const std::vector<std::pair<std::string, std::string>> fields = {
        {"code", R"("KV101")"}, {"path", R"("m.py")"}, {"line", "1"}, {"fingerprint", R"("f")"}};
    std::string entry;
    for (const auto& [name, fine] : fields)
      entry += fmt::format("{}\"{}\": {}", entry.empty() ? "" : ", ", name, name == field ? value : fine);
    return R"({"schema": "kvlint-findings", "version": 1, "findings": [{)" + entry + "}]}";
  };
  for (const std::string field : {"fingerprint", "code", "path", "line"})
    for (const std::string* value : {&deep, &shallow}) {
      repo.write("b.json", with(field, *value));
      ProcessRun r = repo.kvlint({"--baseline", (repo.path() / "b.json").string()});
      const std::string what = field + (value == &deep ? " (deep)" : " (shallow)");
      EXPECT_EQ(r.exit_code, 2) << what << "\n" << r.err;
      EXPECT_THAT(r.err, HasSubstr("--baseline")) << what;
      EXPECT_THAT(r.err, HasSubstr(value == &deep ? "nested deeper than" : "\"" + field + "\"")) << what;
      EXPECT_THAT(r.out, IsEmpty()) << what;
    }
  // A SARIF baseline alike.
  repo.write("b.sarif",
             R"({"version": "2.1.0", "runs": [{"results": [{"partialFingerprints": )" + deep + "}]}]}");
  ProcessRun sarif = repo.kvlint({"--baseline", (repo.path() / "b.sarif").string()});
  EXPECT_EQ(sarif.exit_code, 2) << sarif.err;
  EXPECT_THAT(sarif.err, HasSubstr("nested deeper than"));
  // `kvlint report` reads its JSON inputs through the same bounded reader.
  repo.write("deep.json", with("fingerprint", deep));
  for (const char* input : {"--findings", "--confirm"}) {
    ProcessRun report = run({KVLINT_BINARY, "report", input, (repo.path() / "deep.json").string()});
    EXPECT_EQ(report.exit_code, 2) << input << report.err;
    EXPECT_THAT(report.err, HasSubstr("nested deeper than")) << input;
  }
}

TEST(Baseline, CombinesWithDiff) {
  Repo repo;
  repo.write("model.py", std::string(kImports) + undeclared_cache_class("Old"));
  repo.commit("base");
  const fs::path baseline = repo.path() / "baseline.json";
  repo.kvlint({"--write-baseline", baseline.string(), "-q"});
  repo.git({"checkout", "-q", "-b", "pr"});
  // The PR edits the old finding's line (so --diff alone would report it) and adds one.
  // Re-spacing keeps the fingerprint (it reads the line with whitespace runs collapsed).
  std::string edited =
      std::string(kImports) + undeclared_cache_class("Old") + "\n\n" + undeclared_cache_class("New");
  edited.replace(edited.find("self.Old_cache = DynamicCache()"), 31, "self.Old_cache  =  DynamicCache()");
  repo.write("model.py", edited);
  EXPECT_THAT(summary(repo, repo.kvlint({"--diff", "main", "--format", "json"})),
              ElementsAre("KV101 model.py:7", "KV101 model.py:13"));
  EXPECT_THAT(
      summary(repo, repo.kvlint({"--diff", "main", "--baseline", baseline.string(), "--format", "json"})),
      ElementsAre("KV101 model.py:13"));
}

}  // namespace
