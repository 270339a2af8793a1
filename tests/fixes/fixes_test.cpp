// `kvlint check --fix`: fixture files fixed by the real binary and compared with their
// `.fixed.py`; the example tree fixed and re-checked; --dry-run diffs applied with patch(1);
// and apply_fixes / unified_diff directly for what the command line cannot reach.
#include "tools/kvlint/engine/fixes.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/engine/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using kvlint::testing::quote;
using kvlint::testing::slurp;
using kvlint::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

struct CommandRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

CommandRun shell(const fs::path& cwd, const std::string& command) {
  TempDir capture;
  const std::string full = "cd " + quote(cwd.string()) + " && " + command + " >" +
                           quote((capture.path() / "out").string()) + " 2>" +
                           quote((capture.path() / "err").string()) + " </dev/null";
  const int status = std::system(full.c_str());
  return CommandRun{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(capture.path() / "out"),
                    slurp(capture.path() / "err")};
}

CommandRun kvlint(const fs::path& cwd, const std::string& args) {
  return shell(cwd, quote(KVLINT_BINARY) + " check --no-cache " + args);
}

// Every regular file under `root` (relative path -> content).
std::map<std::string, std::string> snapshot(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) files[fs::relative(e.path(), root).string()] = slurp(e.path());
  return files;
}

std::vector<std::string> codes_in(const CommandRun& run) {
  std::vector<std::string> codes;
  const nlohmann::json report = nlohmann::json::parse(run.out);
  for (const auto& f : report.at("findings")) codes.push_back(f.at("code").get<std::string>());
  return codes;
}

const fs::path kFixtures = fs::path(KVLINT_SOURCE_DIR) / "tests/fixes/fixtures";

std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(kFixtures)) {
    const std::string name = e.path().filename().string();
    if (name.ends_with(".py") && !name.ends_with(".fixed.py")) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Each fixture alone in a directory: `--fix --unsafe-fixes` gives its `.fixed.py` (or leaves
// it unchanged when there is none), a second run changes nothing, and the --dry-run diff
// applied with patch(1) gives the same file.
TEST(FixFixtures, EachFixtureFixesToItsExpectedFile) {
  const auto names = fixture_names();
  ASSERT_GE(names.size(), 6u);
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    const std::string before = slurp(kFixtures / name);
    const fs::path expected_path = kFixtures / (name.substr(0, name.size() - 3) + ".fixed.py");
    const std::string expected = fs::exists(expected_path) ? slurp(expected_path) : before;

    TempDir preview;
    preview.write(name, before);
    const CommandRun dry = kvlint(preview.path(), "--fix --unsafe-fixes --dry-run -q " + name);
    EXPECT_EQ(slurp(preview.path() / name), before) << "--dry-run changed the file";
    EXPECT_EQ(dry.exit_code, expected == before ? 0 : 1) << dry.err;
    if (expected != before) {
      EXPECT_THAT(dry.out, HasSubstr("--- " + name + "\n+++ " + name + "\n"));
      preview.write("fix.diff", dry.out);
      const CommandRun patch = shell(preview.path(), "patch -p0 --quiet -i fix.diff");
      EXPECT_EQ(patch.exit_code, 0) << patch.out << patch.err << dry.out;
      EXPECT_EQ(slurp(preview.path() / name), expected) << "the diff does not give the fixed file";
    } else {
      EXPECT_EQ(dry.out, "");
    }

    TempDir dir;
    dir.write(name, before);
    const CommandRun first = kvlint(dir.path(), "--fix --unsafe-fixes " + name);
    EXPECT_EQ(slurp(dir.path() / name), expected) << first.err;
    const CommandRun second = kvlint(dir.path(), "--fix --unsafe-fixes " + name);
    EXPECT_EQ(slurp(dir.path() / name), expected) << "a second --fix changed the file";
    EXPECT_THAT(second.err, HasSubstr("fixed 0 findings"));
  }
}

// The fixtures again with every line ended by `\r\n`, then by a lone `\r` (both are Python line
// ends): the fixed file is the expected one with the same line ends, so a removed suppression
// neither takes its line's `\r` nor the line after a lone `\r`, and a skeleton is written with the
// file's own line ending.
TEST(FixFixtures, EachFixtureKeepsItsLineEndings) {
  auto with_ends = [](std::string_view text, std::string_view eol) {
    std::string out;
    for (char c : text) {
      if (c == '\n')
        out += eol;
      else
        out += c;
    }
    return out;
  };
  for (const std::string eol : {"\r\n", "\r"}) {
    for (const auto& name : fixture_names()) {
      SCOPED_TRACE(name + (eol == "\r" ? " (CR)" : " (CRLF)"));
      const std::string before = with_ends(slurp(kFixtures / name), eol);
      const fs::path expected_path = kFixtures / (name.substr(0, name.size() - 3) + ".fixed.py");
      const std::string expected = fs::exists(expected_path) ? with_ends(slurp(expected_path), eol) : before;
      TempDir dir;
      dir.write(name, before);
      const CommandRun first = kvlint(dir.path(), "--fix --unsafe-fixes " + name);
      EXPECT_EQ(slurp(dir.path() / name), expected) << first.err;
      const CommandRun second = kvlint(dir.path(), "--fix --unsafe-fixes " + name);
      EXPECT_THAT(second.err, HasSubstr("fixed 0 findings"));
    }
  }
}

// The reproduction: a lone `\r` ends the suppression comment (Python ends the line
// there), so removing the unused suppression keeps the statement after it.
TEST(FixFixtures, RemovingASuppressionKeepsTheStatementAfterALoneCarriageReturn) {
  TempDir dir;
  dir.write("m.py",
            "import os\n\n\nclass Talker:\n    def __init__(self):\n"
            "        self.x = 1  # kvlint: ignore[KV101] legacy\r"
            "        self.important = compute_everything()\n");
  const CommandRun run = kvlint(dir.path(), "--fix m.py");
  EXPECT_THAT(run.err, HasSubstr("fixed 1 finding in 1 file"));
  EXPECT_EQ(slurp(dir.path() / "m.py"),
            "import os\n\n\nclass Talker:\n    def __init__(self):\n"
            "        self.x = 1\r"
            "        self.important = compute_everything()\n");
}

// As ruff does, a file the user may not write is left alone with a note, and its mode kept.
TEST(FixFixtures, ReadOnlyFileIsNotedAndUntouched) {
  TempDir dir;
  const std::string before = slurp(kFixtures / "unused_suppression_trailing.py");
  const fs::path file = dir.write("a.py", before);
  fs::permissions(file, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  const CommandRun run = kvlint(dir.path(), "--fix a.py");
  EXPECT_THAT(run.err, HasSubstr("a.py: not fixed: the file is read-only"));
  EXPECT_THAT(run.err, HasSubstr("fixed 0 findings in 0 files"));
  EXPECT_EQ(run.exit_code, 1) << "the finding is still there";
  EXPECT_EQ(slurp(file), before);
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  const CommandRun dry = kvlint(dir.path(), "--fix --dry-run a.py");
  EXPECT_THAT(dry.err, HasSubstr("a.py: not fixed: the file is read-only"));
  EXPECT_EQ(dry.out, "");
}

// As ruff (which writes in place), a fix keeps what the user set on the file: its owner and
// group even when kvlint runs as root (a rename-based write made it root's), and its mode.
TEST(FixFixtures, FixedFileKeepsItsOwnerGroupAndMode) {
  TempDir dir;
  const std::string before = slurp(kFixtures / "unused_suppression_trailing.py");
  const fs::path file = dir.write("a.py", before);
  // Only root can give a file to another user; others check their own uid and gid.
  const bool root = ::geteuid() == 0;
  const uid_t uid = root ? 65534 : ::geteuid();
  const gid_t gid = root ? 65534 : ::getegid();
  ASSERT_EQ(::chown(file.c_str(), uid, gid), 0);
  ASSERT_EQ(::chmod(file.c_str(), 0640), 0);
  const CommandRun run = kvlint(dir.path(), "--fix a.py");
  EXPECT_THAT(run.err, HasSubstr("fixed 1 finding in 1 file"));
  EXPECT_NE(slurp(file), before);
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, uid);
  EXPECT_EQ(st.st_gid, gid);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

// A file with several hard links is written in place, as ruff does: a rename would leave the
// other names holding the old text.
TEST(FixFixtures, FixedFileWithSeveralHardLinksIsWrittenInPlace) {
  TempDir dir;
  const std::string before = slurp(kFixtures / "unused_suppression_trailing.py");
  const fs::path file = dir.write("a.py", before);
  const fs::path other = dir.path() / "elsewhere.txt";  // not a .py: the run fixes a.py only
  fs::create_hard_link(file, other);
  struct stat was {};
  ASSERT_EQ(::stat(file.c_str(), &was), 0);
  const CommandRun run = kvlint(dir.path(), "--fix a.py");
  EXPECT_THAT(run.err, HasSubstr("fixed 1 finding in 1 file"));
  const std::string fixed = slurp(file);
  EXPECT_NE(fixed, before);
  EXPECT_EQ(slurp(other), fixed);
  struct stat now {};
  ASSERT_EQ(::stat(file.c_str(), &now), 0);
  EXPECT_EQ(now.st_ino, was.st_ino);
  EXPECT_EQ(now.st_nlink, 2u);
}

// --dry-run prints a diff and no report, as ruff's --diff does: asking for a report format or
// a report file with it is a usage error, not a report silently left out.
TEST(FixFixtures, DryRunWithAReportFormatOrOutputFileIsAUsageError) {
  TempDir dir;
  const std::string before = slurp(kFixtures / "unused_suppression_trailing.py");
  dir.write("a.py", before);
  for (const std::string args :
       {"--format json", "--format sarif", "-o report.json", "--format json -o r.json"}) {
    SCOPED_TRACE(args);
    const CommandRun run = kvlint(dir.path(), "--fix --dry-run " + args + " a.py");
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_EQ(run.out, "");
    EXPECT_THAT(run.err, HasSubstr("--dry-run"));
    EXPECT_FALSE(fs::exists(dir.path() / "report.json"));
    EXPECT_FALSE(fs::exists(dir.path() / "r.json"));
  }
  EXPECT_EQ(slurp(dir.path() / "a.py"), before);
  EXPECT_EQ(kvlint(dir.path(), "--fix --dry-run --format text a.py").exit_code, 1);
}

// A C++ file that does not compile is never fixed, as a Python file with syntax errors is not.
TEST(ApplyFixes, FileThatDoesNotCompileIsNotFixed) {
  TempDir dir;
  const std::string content = "int x;  // kvlint: ignore[KV101] old\nint f( {\n";
  const fs::path file = dir.write("a.cpp", content);
  kvlint::CheckResult result;
  kvlint::Finding f;
  f.code = "KV903";
  f.loc.file = file.string();
  f.fix = kvlint::Fix{"remove", true, {kvlint::FixEdit{6, 36, ""}}};
  result.findings.push_back(f);
  result.content_hashes[file.string()] = XXH3_64bits(content.data(), content.size());
  kvlint::Diagnostic d;
  d.path = file.string();
  d.kind = "compile-error";
  d.message = "does not compile (1 error, first: a.cpp:2:8: expected parameter declarator)";
  result.diagnostics.push_back(d);
  const kvlint::FixOutcome outcome = kvlint::apply_fixes(result, {});
  EXPECT_EQ(outcome.fixed, 0u);
  ASSERT_EQ(outcome.notes.size(), 1u);
  EXPECT_THAT(outcome.notes[0], HasSubstr("not fixed: the file has syntax errors"));
  EXPECT_EQ(slurp(file), content);
}

TEST(FixFixtures, SyntaxErrorFileIsNotedAndUntouched) {
  TempDir dir;
  const std::string before = slurp(kFixtures / "syntax_error.py");
  dir.write("syntax_error.py", before);
  const CommandRun run = kvlint(dir.path(), "--fix syntax_error.py");
  EXPECT_THAT(run.err, HasSubstr("syntax_error.py: not fixed: the file has syntax errors"));
  EXPECT_EQ(slurp(dir.path() / "syntax_error.py"), before);
}

TEST(FixFixtures, SkeletonNeedsUnsafeFixes) {
  TempDir dir;
  const std::string before = slurp(kFixtures / "skeleton_implicit.py");
  dir.write("a.py", before);
  const CommandRun run = kvlint(dir.path(), "--fix a.py");
  EXPECT_EQ(slurp(dir.path() / "a.py"), before);
  EXPECT_THAT(run.err, HasSubstr("1 more fix available with --unsafe-fixes"));
  EXPECT_THAT(run.out, HasSubstr("KV102"));
  const CommandRun usage = kvlint(dir.path(), "--unsafe-fixes a.py");
  EXPECT_EQ(usage.exit_code, 2) << "--unsafe-fixes without --fix";
}

// Every finding of an owner carries the owner's whole skeleton, so fixing any subset adds one
// method; for an owner with many caches (generated code) that is quadratic in size, so past
// kMaxFindingsSharingASkeleton findings only the first carries it. Either way, --fix
// --unsafe-fixes writes one method that declares every cache and the re-check is clean of KV101.
TEST(FixFixtures, AClassWithManyCachesGetsOneSkeletonForAll) {
  for (const int caches : {3, 40}) {
    TempDir dir;
    std::string source =
        "from transformers import DynamicCache\nimport torch.nn as nn\n\n\nclass Many(nn.Module):\n"
        "    def setup(self):\n";
    for (int i = 0; i < caches; ++i) source += "        self.c" + std::to_string(i) + " = DynamicCache()\n";
    dir.write("many.py", source);
    const CommandRun check = kvlint(dir.path(), "--format json many.py");
    const nlohmann::json report = nlohmann::json::parse(check.out);
    std::size_t with_fix = 0;
    for (const auto& f : report.at("findings")) with_fix += f.contains("fix") ? 1 : 0;
    EXPECT_EQ(report.at("findings").size(), static_cast<std::size_t>(caches));
    EXPECT_EQ(with_fix, caches == 3 ? 3u : 1u) << caches;
    const CommandRun fix = kvlint(dir.path(), "--fix --unsafe-fixes many.py");
    const std::string fixed = slurp(dir.path() / "many.py");
    std::size_t methods = 0, specs = 0;
    for (std::size_t at = fixed.find("def model_local_kv_specs"); at != std::string::npos;
         at = fixed.find("def model_local_kv_specs", at + 1))
      ++methods;
    for (std::size_t at = fixed.find("spec_from_hf_config("); at != std::string::npos;
         at = fixed.find("spec_from_hf_config(", at + 1))
      ++specs;
    EXPECT_EQ(methods, 1u) << fixed;
    EXPECT_EQ(specs, static_cast<std::size_t>(caches)) << fixed;
    const std::vector<std::string> after = codes_in(kvlint(dir.path(), "--format json many.py"));
    EXPECT_EQ(std::count(after.begin(), after.end(), "KV101"), 0) << fix.err;
  }
}

// The example tree, with an unused suppression added: --fix --unsafe-fixes removes it and
// declares PromptEncoder (KV102); the re-check no longer reports them, KV201 flags the
// skeleton's placeholder reason and KV401 its fallback capacity (max_position_embeddings: the
// analysis found no bound), and a second --fix changes nothing.
TEST(FixExampleTree, FixedFindingsGoAndThePlaceholderIsFlagged) {
  TempDir dir;
  fs::copy(fs::path(KVLINT_SOURCE_DIR) / "examples/models", dir.path() / "models",
           fs::copy_options::recursive);
  {
    std::ofstream append(dir.path() / "models/ming/talker.py", std::ios::app);
    append << "\n\ndef unused_helper():\n    return 1  # kvlint: ignore[KV102] kept for the old runner\n";
  }
  const CommandRun before = kvlint(dir.path(), "--format json --exit-zero models");
  const auto before_codes = codes_in(before);
  ASSERT_THAT(before_codes, ::testing::Contains("KV102")) << before.err;
  ASSERT_THAT(before_codes, ::testing::Contains("KV903"));
  ASSERT_THAT(before_codes, Not(::testing::Contains("KV201")));

  const CommandRun fixed = kvlint(dir.path(), "--fix --unsafe-fixes --format json --exit-zero models");
  EXPECT_THAT(fixed.err, HasSubstr("fixed 2 findings in 2 files"));
  const auto after_codes = codes_in(fixed);
  EXPECT_THAT(after_codes, Not(::testing::Contains("KV102")));
  EXPECT_THAT(after_codes, Not(::testing::Contains("KV903")));
  EXPECT_THAT(after_codes, ::testing::Contains("KV201"));
  EXPECT_THAT(after_codes, ::testing::Contains("KV401"));
  EXPECT_EQ(after_codes.size(), before_codes.size()) << fixed.out;  // -KV102 -KV903 +KV201 +KV401
  const std::string encoder = slurp(dir.path() / "models/ming/prompt_encoder.py");
  EXPECT_THAT(encoder, HasSubstr("from vllm_omni.model_local_kv import ModelLocalKVScope, RowDriver, "
                                 "spec_from_hf_config\n"));
  EXPECT_THAT(encoder, HasSubstr("\n    def model_local_kv_specs(self):\n"));
  EXPECT_THAT(encoder, HasSubstr("            spec_from_hf_config(\n                self.lm.config,\n"));

  const auto fixed_tree = snapshot(dir.path());
  const CommandRun again = kvlint(dir.path(), "--fix --unsafe-fixes --exit-zero models");
  EXPECT_THAT(again.err, HasSubstr("fixed 0 findings"));
  EXPECT_EQ(snapshot(dir.path()), fixed_tree);
}

// The run memo and the per-file cache keep the fix: a cached run fixes as a fresh one does.
TEST(FixFixtures, FixesSurviveTheCache) {
  TempDir dir;
  dir.write("a.py", slurp(kFixtures / "partial_codes.py"));
  const std::string check = quote(KVLINT_BINARY) + " check --format json --exit-zero a.py";
  const CommandRun fresh = shell(dir.path(), check);
  const CommandRun cached = shell(dir.path(), check);
  ASSERT_THAT(fresh.out, HasSubstr("\"fix\""));
  EXPECT_EQ(cached.out, fresh.out);
  shell(dir.path(), quote(KVLINT_BINARY) + " check --fix a.py");
  EXPECT_EQ(slurp(dir.path() / "a.py"), slurp(kFixtures / "partial_codes.fixed.py"));
}

// A file edited between the analysis and the write is left alone.
TEST(ApplyFixes, FileChangedSinceAnalysisIsSkipped) {
  TempDir dir;
  const fs::path file = dir.write("a.py", "x = 1  # kvlint: ignore[KV101] old\n");
  kvlint::CheckResult result;
  kvlint::Finding f;
  f.code = "KV903";
  f.loc.file = file.string();
  f.fix = kvlint::Fix{"remove", true, {kvlint::FixEdit{5, 34, ""}}};
  result.findings.push_back(f);
  const std::string analysed = "x = 1  # kvlint: ignore[KV101] was\n";
  result.content_hashes[file.string()] = XXH3_64bits(analysed.data(), analysed.size());
  const kvlint::FixOutcome outcome = kvlint::apply_fixes(result, {});
  EXPECT_EQ(outcome.fixed, 0u);
  ASSERT_EQ(outcome.notes.size(), 1u);
  EXPECT_THAT(outcome.notes[0], HasSubstr("changed since it was analysed"));
  EXPECT_EQ(slurp(file), "x = 1  # kvlint: ignore[KV101] old\n");

  const std::string current = slurp(file);
  result.content_hashes[file.string()] = XXH3_64bits(current.data(), current.size());
  EXPECT_EQ(kvlint::apply_fixes(result, {}).fixed, 1u);
  EXPECT_EQ(slurp(file), "x = 1\n");
}

TEST(UnifiedDiff, HunksContextAndMissingFinalNewline) {
  EXPECT_EQ(kvlint::unified_diff("a.py", "same\n", "same\n"), "");
  EXPECT_EQ(kvlint::unified_diff("a.py", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n"),
            "--- a.py\n+++ a.py\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
  EXPECT_EQ(kvlint::unified_diff("a.py", "a\nb", "a\n"),
            "--- a.py\n+++ a.py\n@@ -1,2 +1 @@\n a\n-b\n\\ No newline at end of file\n");
  EXPECT_EQ(kvlint::unified_diff("a.py", "", "x\n"), "--- a.py\n+++ a.py\n@@ -0,0 +1 @@\n+x\n");
}

}  // namespace
