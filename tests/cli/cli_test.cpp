// End-to-end tests of the kvlint binary (KVLINT_BINARY) on temporary trees.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "tests/engine/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using kvlint::testing::TempDir;
using nlohmann::json;
using ::testing::HasSubstr;

struct CliRun {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out;
  std::string err;
};

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs the shell `command`; stdout and stderr captured separately.
CliRun run_captured(std::string command) {
  TempDir capture;
  command += " >" + shell_quote((capture.path() / "out").string()) + " 2>" +
             shell_quote((capture.path() / "err").string()) + " </dev/null";
  const int status = std::system(command.c_str());
  CliRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = slurp(capture.path() / "out");
  run.err = slurp(capture.path() / "err");
  return run;
}

// Runs `prefix kvlint args...` in `cwd`.
CliRun kvlint(const fs::path& cwd, const std::vector<std::string>& args, const std::string& prefix = "") {
  std::string command =
      "cd " + shell_quote(cwd.string()) + " && " + prefix + " " + shell_quote(KVLINT_BINARY);
  for (const auto& a : args) command += " " + shell_quote(a);
  return run_captured(std::move(command));
}

// A suppression without a reason that suppresses nothing: KV901 and KV903 warnings,
// whatever the rules do.
constexpr const char* kWarningFile = "x = compute()  # kvlint: ignore[KV101]\n";
constexpr const char* kCleanFile = "def f(a):\n    return a + 1\n";

json parse_json(const CliRun& run) {
  try {
    return json::parse(run.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON (" << e.what() << "): " << run.out << "\nstderr: " << run.err;
    return json::object();
  }
}

std::vector<std::string> diagnostic_kinds(const json& report) {
  std::vector<std::string> kinds;
  for (const auto& d : report.value("diagnostics", json::array())) kinds.push_back(d.value("kind", ""));
  return kinds;
}

std::string stats_line(const CliRun& run) {
  std::smatch m;
  static const std::regex kStats("kvlint: stats: [^\n]*");
  return std::regex_search(run.err, m, kStats) ? m.str() : "";
}

TEST(Cli, ExitCodes) {
  TempDir dir;
  dir.write("clean.py", kCleanFile);
  EXPECT_EQ(kvlint(dir.path(), {"check", "--no-cache"}).exit_code, 0);
  dir.write("warn.py", kWarningFile);
  const CliRun findings = kvlint(dir.path(), {"check", "--no-cache", "--format", "json"});
  EXPECT_EQ(findings.exit_code, 1) << findings.err;
  EXPECT_EQ(parse_json(findings)["findings"][0]["code"], "KV901");
  EXPECT_EQ(kvlint(dir.path(), {"check", "--no-cache", "--exit-zero"}).exit_code, 0);
  EXPECT_EQ(kvlint(dir.path(), {"check", "--no-cache", "--fail-on", "error"}).exit_code,
            0);  // KV901 is a warning
  EXPECT_EQ(kvlint(dir.path(), {"check", "--no-cache", "--ignore", "KV9"}).exit_code, 0);
  EXPECT_EQ(kvlint(dir.path(), {"check", "--no-cache", "clean.py"}).exit_code, 0);
  // Usage errors: exit 2, message on stderr, nothing on stdout.
  for (const auto& args : std::vector<std::vector<std::string>>{{"check", "--bogus"},
                                                                {"check", "--select", "KV999"},
                                                                {"check", "--format", "xml"},
                                                                {"explain", "KV999"},
                                                                {}}) {
    const CliRun usage = kvlint(dir.path(), args);
    EXPECT_EQ(usage.exit_code, 2) << ::testing::PrintToString(args);
    EXPECT_EQ(usage.out, "") << ::testing::PrintToString(args);
    EXPECT_NE(usage.err, "") << ::testing::PrintToString(args);
  }
  // Nothing analysable at all: exit 1.
  const CliRun missing = kvlint(dir.path(), {"check", "--no-cache", "does_not_exist.py"});
  EXPECT_EQ(missing.exit_code, 1);
}

// `kvlint check` analyses C++ beside Python (docs/cpp.md); its help must not say Python only.
TEST(Cli, CheckHelpSaysItChecksPythonAndCppFiles) {
  TempDir dir;
  const CliRun help = kvlint(dir.path(), {"check", "--help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_THAT(help.out, HasSubstr("Check Python and C++ files and directories")) << help.out;
  const CliRun top = kvlint(dir.path(), {"--help"});
  EXPECT_THAT(top.out, HasSubstr("Check Python and C++ files and directories")) << top.out;
}

TEST(Cli, ConfigErrorsExit2NamingFileKeyAndType) {
  TempDir dir;
  dir.write("a.py", kCleanFile);
  dir.write("pyproject.toml", "[tool.kvlint]\nfail-on = 3\n");
  CliRun run = kvlint(dir.path(), {"check"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_THAT(run.err, HasSubstr("pyproject.toml: [tool.kvlint] key 'fail-on' must be one of \"error\", "
                                 "\"warning\", \"info\" (a string), got integer 3"));
  dir.write("kvlint.toml", "selec = [\"KV1\"]\n");
  run = kvlint(dir.path(), {"check"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err,
              HasSubstr("kvlint.toml: unknown key 'selec' in the top-level table (did you mean 'select'?)"));
  dir.write("kvlint.toml", "select = [\"KV1\"\nfail-on = \"error\"\n");
  run = kvlint(dir.path(), {"check"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, ::testing::ContainsRegex("kvlint\\.toml:[0-9]+:[0-9]+: TOML syntax error"));
  // --config with a missing file.
  fs::remove(dir.path() / "kvlint.toml");
  fs::remove(dir.path() / "pyproject.toml");
  run = kvlint(dir.path(), {"check", "--config", "nope.toml"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("nope.toml"));
}

TEST(Cli, CodeOptionsTakeOneValueSoAPathAfterThemIsChecked) {
  TempDir dir;
  dir.write("named.py", kWarningFile);
  dir.write("other.py", kWarningFile);
  CliRun run =
      kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "--select", "KV901", "named.py"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  json report = parse_json(run);
  ASSERT_EQ(report["findings"].size(), 1u);
  EXPECT_EQ(report["findings"][0]["path"], "named.py");
  EXPECT_EQ(report["findings"][0]["code"], "KV901");
  // Several codes: a comma list, or the option repeated.
  run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "--select", "KV901,KV101", "--select",
                            "KV903", "named.py"});
  EXPECT_EQ(parse_json(run)["findings"].size(), 2u) << run.err;
  run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "--ignore", "KV901,KV903",
                            "--extend-select", "KV9", "other.py"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(parse_json(run)["findings"].size(), 0u);
}

TEST(Cli, ConfirmModelTakesOneValueSoAPathAfterItIsAPath) {
  TempDir dir;
  dir.write("kvlint.toml", "[runtime.models.a]\nfactory = \"m:build\"\ndriver = \"m:drive\"\n");
  dir.write("m.py", kCleanFile);
  // Unknown entries are refused before anything boots; "." is never one of them.
  const CliRun run = kvlint(dir.path(), {"confirm", "--model", "a,zzz", "--model", "yyy", "."});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("no runtime model named \"zzz\""));
  EXPECT_THAT(run.err, ::testing::Not(HasSubstr("named \".\"")));
}

TEST(Cli, AnEmptySelectionIsAUsageErrorNotASuccess) {
  TempDir dir;
  dir.write("warn.py", kWarningFile);
  CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--select", ""});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_THAT(run.err, HasSubstr("--select: empty rule code"));
  run = kvlint(dir.path(), {"check", "--no-cache", "--ignore", "KV"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("no rule is selected"));
  dir.write("kvlint.toml", "select = []\n");
  run = kvlint(dir.path(), {"check", "--no-cache"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_THAT(run.err, HasSubstr("kvlint.toml: no rule is selected"));
  EXPECT_EQ(kvlint(dir.path(), {"check", "--no-cache", "--select", "KV9"}).exit_code, 1);
}

TEST(Cli, AFileNamedTwoWaysIsReportedOnceUnderTheFirstSpelling) {
  TempDir dir;
  dir.write("m.py", kWarningFile);
  const std::string absolute = (dir.path() / "m.py").string();
  for (const auto& paths : std::vector<std::vector<std::string>>{{"m.py", absolute}, {".", absolute}}) {
    std::vector<std::string> args = {"check", "--no-cache", "--format", "json"};
    args.insert(args.end(), paths.begin(), paths.end());
    const json report = parse_json(kvlint(dir.path(), args));
    ASSERT_EQ(report["findings"].size(), 2u) << ::testing::PrintToString(paths);
    for (const auto& f : report["findings"]) EXPECT_EQ(f["path"], "m.py");
  }
  const json report =
      parse_json(kvlint(dir.path(), {"check", "--no-cache", "--format", "json", absolute, "m.py"}));
  ASSERT_EQ(report["findings"].size(), 2u);
  EXPECT_EQ(report["findings"][0]["path"], absolute);
}

TEST(Cli, ArgumentOrderDoesNotChangeWhichConfigurationAFileGets) {
  TempDir dir;
  dir.write("A/kvlint.toml", "select = [\"KV901\"]\n");
  dir.write("A/m.py", kWarningFile);
  dir.write("B/kvlint.toml", "ignore = [\"KV901\"]  # KV903 stays\n");
  dir.write("B/m.py", kWarningFile);
  const CliRun ab = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "A", "B"});
  const CliRun ba = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "B", "A"});
  EXPECT_EQ(ab.out, ba.out);
  std::vector<std::string> found;
  const json report = parse_json(ab);
  for (const auto& f : report["findings"])
    found.push_back(f["path"].get<std::string>() + " " + f["code"].get<std::string>());
  EXPECT_EQ(found, (std::vector<std::string>{"A/m.py KV901", "B/m.py KV903"}));
}

TEST(Cli, CheckingOneFileGivesTheFindingsOfCheckingItsProject) {
  TempDir dir;
  dir.write("kvlint.toml", "select = [\"KV\"]\n");
  dir.write("pkg/__init__.py", "");
  dir.write(
      "pkg/base.py",
      "from torch import nn\n\nclass Base(nn.Module):\n    def model_local_kv_specs(self):\n"
      "        return [spec_from_hf_config(self.config, name=\"c\", capacity_source=\"max_model_len\")]\n");
  dir.write("pkg/child.py",
            "from transformers import DynamicCache\n\nfrom .base import Base\n\n\nclass Child(Base):\n"
            "    def __init__(self):\n        super().__init__()\n        self.cache = DynamicCache()\n");
  const CliRun whole =
      kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "--select", "KV101", "."});
  const CliRun one = kvlint(dir.path() / "pkg",
                            {"check", "--no-cache", "--format", "json", "--select", "KV101", "child.py"});
  EXPECT_EQ(parse_json(whole)["findings"].size(), 0u) << whole.out;
  EXPECT_EQ(one.exit_code, 0) << one.out << one.err;
  EXPECT_EQ(parse_json(one)["findings"].size(), 0u) << one.out;
}

// Lines end at "\n", "\r\n" and a lone "\r" alike: the same module written with each gives the
// same findings at the same lines, with the same fingerprints (a baseline survives a change of
// line endings), and the excerpt shows the finding's own line.
TEST(Cli, EveryLineEndingGivesTheSameFindingsAndFingerprints) {
  const std::string module =
      "from torch import nn\nfrom transformers import DynamicCache\n\n\nclass Talker(nn.Module):\n"
      "    def forward(self, x):\n        # one cache per call\n        self.cache = DynamicCache()\n"
      "        return x  # kvlint: ignore[KV202] no rows here\n";
  std::vector<std::string> seen;
  for (const std::string eol : {"\n", "\r\n", "\r"}) {
    std::string text;
    for (char c : module) text += c == '\n' ? eol : std::string(1, c);
    TempDir dir;
    dir.write("kvlint.toml", "");
    dir.write("m.py", text);
    const CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "m.py"});
    const json report = parse_json(run);
    std::string summary;
    for (const auto& f : report["findings"])
      summary += fmt::format("{}:{}:{}:{} ", f["code"].get<std::string>(), f["line"].get<int>(),
                             f["column"].get<int>(), f["fingerprint"].get<std::string>());
    EXPECT_TRUE(report["diagnostics"].empty()) << run.out;
    seen.push_back(summary);
    const CliRun text_run = kvlint(dir.path(), {"check", "--no-cache", "m.py"});
    EXPECT_THAT(text_run.out, HasSubstr("8 |         self.cache = DynamicCache()\n")) << text_run.out;
  }
  EXPECT_THAT(seen[0], HasSubstr("KV101:8:22:"));
  EXPECT_THAT(seen[0], HasSubstr("KV903:9:"));
  EXPECT_EQ(seen[1], seen[0]);
  EXPECT_EQ(seen[2], seen[0]);
}

TEST(Cli, WithoutAConfigFileFingerprintsDoNotDependOnTheSubsetNamed) {
  TempDir dir;
  dir.write("pkg/m.py", kWarningFile);
  dir.write("other.py", kCleanFile);
  std::vector<std::string> seen;
  for (const char* path : {".", "pkg", "pkg/m.py"}) {
    const json report = parse_json(kvlint(dir.path(), {"check", "--no-cache", "--format", "json", path}));
    std::string fingerprints;
    for (const auto& f : report["findings"]) fingerprints += f["fingerprint"].get<std::string>() + " ";
    seen.push_back(fingerprints);
  }
  EXPECT_NE(seen[0], "");
  EXPECT_EQ(seen[1], seen[0]);
  EXPECT_EQ(seen[2], seen[0]);
}

TEST(Cli, VerboseSaysOnceThatLinksLeavingTheTreeAreNotFollowed) {
  TempDir dir, outside;
  outside.write("a.py", kWarningFile);
  outside.write("b/c.py", kWarningFile);
  dir.write("m.py", kCleanFile);
  fs::create_directory_symlink(outside.path(), dir.path() / "rootfs");
  const CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "--verbose"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(parse_json(run)["findings"].size(), 0u);
  EXPECT_THAT(run.err, HasSubstr("not following 1 symbolic link that leaves the checked tree: rootfs -> " +
                                 outside.path().string()));
  EXPECT_THAT(kvlint(dir.path(), {"check", "--no-cache"}).err, ::testing::Not(HasSubstr("symbolic link")));
}

// --list-parsed (bench/run's parser floor) names each file the front end parsed, with its size,
// and not the files the prefilter skipped or the cache answered.
TEST(Cli, ListParsedNamesTheFilesParsedThisRun) {
  TempDir dir;
  const std::string model =
      "from transformers import DynamicCache\n\n\nclass Model:\n    def forward(self):\n"
      "        self.cache = DynamicCache()\n";
  dir.write("model.py", model);
  dir.write("plain.py", kCleanFile);
  const fs::path listing = dir.path() / "parsed.tsv";
  CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--exit-zero", "--list-parsed", listing.string()});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(slurp(listing), fmt::format("python\t1\t{}\t{}\n", model.size(),
                                        fs::canonical(dir.path() / "model.py").string()));
  const std::string cache = (dir.path() / "cache").string();
  kvlint(dir.path(), {"check", "--exit-zero", "--cache-dir", cache, "model.py", "plain.py"});
  dir.write("plain.py", std::string(kCleanFile) + "\n");  // the run memo misses; model.py's facts are cached
  run = kvlint(dir.path(), {"check", "--exit-zero", "--cache-dir", cache, "--list-parsed", listing.string(),
                            "model.py", "plain.py"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(slurp(listing), "");
}

TEST(Cli, OutputIsNotCreatedOnErrorAndIsReplacedAtomically) {
  TempDir dir;
  dir.write("warn.py", kWarningFile);
  dir.write("kvlint.toml", "fail-on = 3\n");
  CliRun run = kvlint(dir.path(), {"check", "--output", "report.json", "--format", "json"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_FALSE(fs::exists(dir.path() / "report.json"));
  fs::remove(dir.path() / "kvlint.toml");
  dir.write("report.json", "old content");
  run = kvlint(dir.path(), {"check", "--no-cache", "--output", "report.json", "--format", "json"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.out, "");
  const json report = json::parse(slurp(dir.path() / "report.json"));
  EXPECT_EQ(report["findings"].size(), 2u);
  // No temporary file is left behind.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path())) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"report.json", "warn.py"}));
  // An unwritable destination fails with exit 2 and leaves nothing.
  run = kvlint(dir.path(), {"check", "--no-cache", "--output", "no/such/dir/r.json"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("--output"));
}

TEST(Cli, BadInputsBecomeDiagnosticsAndTheRunGoesOn) {
  TempDir dir;
  dir.write("warn.py", kWarningFile);
  dir.write("binary.py", std::string("x = 1\0\x01\x02", 8));
  dir.write("latin1.py", "name = 'caf\xE9'\n");
  dir.write("syntax.py", "def model_local_kv_specs(self:\n    return [\n");
  const CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json"});
  EXPECT_EQ(run.exit_code, 1);  // the warnings in warn.py; diagnostics alone do not fail
  const json report = parse_json(run);
  EXPECT_THAT(diagnostic_kinds(report), ::testing::IsSupersetOf({"binary", "invalid-utf8", "parse-error"}));
  for (const auto& d : report["diagnostics"]) {
    if (d["kind"] == "invalid-utf8") {
      EXPECT_EQ(d["path"], "latin1.py");
      EXPECT_EQ(d["line"], 1);
      EXPECT_THAT(d["message"].get<std::string>(), HasSubstr("byte offset 11"));
    }
    if (d["kind"] == "parse-error") {
      EXPECT_EQ(d["path"], "syntax.py");
    }
  }
  EXPECT_EQ(report["findings"].size(), 2u);
  // Only diagnostics, some file analysed: exit 0.
  fs::remove(dir.path() / "warn.py");
  EXPECT_EQ(kvlint(dir.path(), {"check", "--no-cache"}).exit_code, 0);
}

TEST(Cli, DeepNestingDoesNotOverflowTheStack) {
  TempDir dir;
  constexpr std::size_t kDepth = 100000;
  std::string source = "use_cache = True\nx = ";
  source += std::string(kDepth, '[') + "1" + std::string(kDepth, ']') + "\n";
  source += "y = " + std::string(kDepth, '(') + "2" + std::string(kDepth, ')') + "\n";
  dir.write("deep.py", source);
  const CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "--verbose"});
  ASSERT_NE(run.exit_code, -1) << "killed by a signal: " << run.err;
  EXPECT_THAT(run.exit_code, ::testing::AnyOf(0, 1));
  parse_json(run);
  EXPECT_THAT(stats_line(run), HasSubstr("files_parsed=1"));
}

TEST(Cli, TwentyMegabyteSingleLineFileIsSkippedAsTooLarge) {
  TempDir dir;
  dir.write("huge.py", "use_cache = '" + std::string(20u * 1000u * 1000u, 'a') + "'\n");
  dir.write("clean.py", kCleanFile);
  const CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json"});
  EXPECT_EQ(run.exit_code, 0);
  const json report = parse_json(run);
  EXPECT_EQ(diagnostic_kinds(report), std::vector<std::string>{"too-large"});
  // Alone, nothing can be analysed: exit 1.
  EXPECT_EQ(kvlint(dir.path(), {"check", "--no-cache", "huge.py"}).exit_code, 1);
}

TEST(Cli, SymlinkLoopAndDanglingSymlink) {
  TempDir dir;
  dir.write("pkg/warn.py", kWarningFile);
  fs::create_directory_symlink("..", dir.path() / "pkg/up");
  fs::create_directory_symlink(".", dir.path() / "pkg/self");
  fs::create_symlink("gone.py", dir.path() / "pkg/dangling.py");
  const CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "--verbose"});
  EXPECT_EQ(run.exit_code, 1);
  const json report = parse_json(run);
  EXPECT_EQ(report["findings"].size(), 2u);  // the loop does not duplicate files
  ASSERT_EQ(report["diagnostics"].size(), 1u);
  EXPECT_EQ(report["diagnostics"][0]["path"], "pkg/dangling.py");
  EXPECT_THAT(report["diagnostics"][0]["message"].get<std::string>(), HasSubstr("dangling symbolic link"));
  EXPECT_THAT(stats_line(run), HasSubstr("files_found=1 "));
}

TEST(Cli, AFifoNamedOnTheCommandLineIsADiagnosticNotAHang) {
  TempDir dir;
  dir.write("warn.py", kWarningFile);
  ASSERT_EQ(::mkfifo((dir.path() / "pipe.py").c_str(), 0600), 0);
  // No writer ever opens the FIFO: a blocking open would wait forever.
  const CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "pipe.py", "warn.py"},
                            "timeout 60");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const json report = parse_json(run);
  ASSERT_EQ(report["diagnostics"].size(), 1u);
  EXPECT_EQ(report["diagnostics"][0]["path"], "pipe.py");
  EXPECT_EQ(report["diagnostics"][0]["kind"], "read-error");
  EXPECT_EQ(report["diagnostics"][0]["message"], "not a regular file");
  EXPECT_EQ(report["findings"].size(), 2u);
}

TEST(Cli, UnreadableDirectoryIsADiagnostic) {
  // Tests run as root, and chmod 000 does not stop root; drop the capabilities that let it.
  if (std::system("command -v setpriv >/dev/null 2>&1") != 0) GTEST_SKIP() << "setpriv not available";
  TempDir dir;
  dir.write("ok/warn.py", kWarningFile);
  dir.write("locked/a.py", kCleanFile);
  fs::permissions(dir.path() / "locked", fs::perms::none);
  const CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json"},
                            "setpriv --bounding-set=-dac_override,-dac_read_search "
                            "--inh-caps=-dac_override,-dac_read_search --");
  fs::permissions(dir.path() / "locked", fs::perms::owner_all);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const json report = parse_json(run);
  ASSERT_EQ(report["diagnostics"].size(), 1u);
  EXPECT_EQ(report["diagnostics"][0]["path"], "locked");
  EXPECT_EQ(report["diagnostics"][0]["kind"], "read-error");
  EXPECT_EQ(report["findings"].size(), 2u);
}

// Static mode reads files; it never imports or runs them. Every planted entry point (the
// module itself, its package, sitecustomize on PYTHONPATH, a boot entry in the config) would
// write a marker file if anything executed it.
TEST(Cli, CheckNeverImportsOrExecutesProjectCode) {
  TempDir dir;
  TempDir markers;
  const std::string write_marker =
      "open(" + json(markers.path().string()).dump() + " + '/' + __name__ + '.ran', 'w').close()\n";
  dir.write("pkg/__init__.py", write_marker);
  dir.write("pkg/model.py", "from transformers import DynamicCache\nfrom torch import nn\n" + write_marker +
                                "def build():\n    " + write_marker +
                                "    return M()\n"
                                "class M(nn.Module):\n    def __init__(self):\n"
                                "        super().__init__()\n        self.cache = DynamicCache()\n");
  dir.write("sitecustomize.py", write_marker);
  dir.write("conftest.py", write_marker);
  dir.write(
      "kvlint.toml",
      "select = [\"KV\"]\n[runtime.models.m]\nfactory = \"pkg.model:build\"\ndriver = \"pkg.model:build\"\n"
      "owners = [\"M\"]\npaths = [\"p\"]\npython-path = [\".\"]\n");
  const std::string env = "env PYTHONPATH=" + shell_quote(dir.path().string()) +
                          " PYTHONSTARTUP=" + shell_quote((dir.path() / "sitecustomize.py").string());
  const CliRun text = kvlint(dir.path(), {"check", "--no-cache", "."}, env);
  EXPECT_EQ(text.exit_code, 1) << text.err;  // KV101 on M: the file was analysed
  EXPECT_THAT(text.out, HasSubstr("KV101"));
  const CliRun facts = kvlint(dir.path(), {"facts", "pkg/model.py"}, env);
  EXPECT_EQ(facts.exit_code, 0) << facts.err;
  const CliRun cached = kvlint(dir.path(), {"check", "--format", "json", "-j", "2", "pkg"}, env);
  EXPECT_EQ(cached.exit_code, 1) << cached.err;
  std::vector<std::string> ran;
  for (const auto& entry : fs::directory_iterator(markers.path())) ran.push_back(entry.path().filename());
  EXPECT_THAT(ran, ::testing::IsEmpty());
}

TEST(Cli, OutputIsDeterministicAcrossJobCounts) {
  TempDir dir;
  for (int i = 0; i < 40; ++i)
    dir.write("pkg" + std::to_string(i % 4) + "/m" + std::to_string(i) + ".py",
              std::string(kWarningFile) + "y = 1  # kvlint: ignore[KV2] reason\n");
  const CliRun one = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "--jobs", "1"});
  const CliRun two = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "--jobs", "2"});
  const CliRun eight = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "-j", "8"});
  EXPECT_EQ(one.exit_code, 1);
  EXPECT_EQ(parse_json(one)["findings"].size(), 120u);  // KV901 + 2 x KV903 per file
  EXPECT_EQ(one.out, two.out);
  EXPECT_EQ(one.out, eight.out);
}

TEST(Cli, WarmCacheGivesIdenticalOutputAndParsesNothing) {
  TempDir dir;
  dir.write("a.py", kWarningFile);
  dir.write("b.py",
            "from transformers import DynamicCache\nclass A:\n    def __init__(self):\n"
            "        self.c = DynamicCache()\n");
  dir.write("c.py", kCleanFile);
  const CliRun cold = kvlint(dir.path(), {"check", "--format", "json", "--verbose"});
  EXPECT_THAT(stats_line(cold), HasSubstr("files_parsed=2 files_cached=0 files_skipped=1"));
  EXPECT_TRUE(fs::exists(dir.path() / ".kvlint_cache/facts-cache.cbor"));
  const CliRun warm = kvlint(dir.path(), {"check", "--format", "json", "--verbose"});
  EXPECT_THAT(stats_line(warm), HasSubstr("files_parsed=0 files_cached=2 files_skipped=1"));
  EXPECT_EQ(warm.out, cold.out);
  EXPECT_EQ(warm.exit_code, cold.exit_code);
  // --no-cache parses again and leaves the cache alone.
  const auto cache_time = fs::last_write_time(dir.path() / ".kvlint_cache/facts-cache.cbor");
  const CliRun uncached = kvlint(dir.path(), {"check", "--format", "json", "--verbose", "--no-cache"});
  EXPECT_THAT(stats_line(uncached), HasSubstr("files_parsed=2"));
  EXPECT_EQ(uncached.out, cold.out);
  EXPECT_EQ(fs::last_write_time(dir.path() / ".kvlint_cache/facts-cache.cbor"), cache_time);
  // An edit re-parses only the edited file; the others come from the per-file cache.
  dir.write("a.py", std::string(kWarningFile) + "\n# edited\n");
  const CliRun edited = kvlint(dir.path(), {"check", "--format", "json", "--verbose"});
  EXPECT_THAT(stats_line(edited), HasSubstr("files_parsed=1 files_cached=1 files_skipped=1"));
  dir.write("a.py", kWarningFile);
  // A corrupt cache (facts and the last run's result) is a note, not a failure.
  std::ofstream(dir.path() / ".kvlint_cache/facts-cache.cbor") << "garbage";
  std::ofstream(dir.path() / ".kvlint_cache/last-run.cbor") << "garbage";
  const CliRun corrupt = kvlint(dir.path(), {"check", "--format", "json", "--verbose"});
  EXPECT_EQ(corrupt.out, cold.out);
  EXPECT_THAT(corrupt.err, HasSubstr("note: ignoring unreadable cache"));
  EXPECT_THAT(stats_line(corrupt), HasSubstr("files_parsed=2"));
  // --cache-dir elsewhere.
  const CliRun elsewhere = kvlint(dir.path(), {"check", "--cache-dir", "cache2", "--verbose"});
  EXPECT_TRUE(fs::exists(dir.path() / "cache2/facts-cache.cbor"));
}

TEST(Cli, RulesExplainVersionAndFacts) {
  TempDir dir;
  const CliRun rules = kvlint(dir.path(), {"rules", "--format", "json"});
  EXPECT_EQ(rules.exit_code, 0);
  const json list = json::parse(rules.out);
  ASSERT_GE(list.size(), 22u);
  EXPECT_EQ(list[0]["code"], "KV101");
  const CliRun explain = kvlint(dir.path(), {"explain", "KV903"});
  EXPECT_EQ(explain.exit_code, 0);
  EXPECT_THAT(explain.out, HasSubstr("unused-suppression"));
  EXPECT_THAT(explain.out, HasSubstr("## What it does"));
  const CliRun version = kvlint(dir.path(), {"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_THAT(version.out, HasSubstr("0.1.0"));
  dir.write("m.py", "class A(Base):\n    pass\n");
  const CliRun facts = kvlint(dir.path(), {"facts", "m.py"});
  EXPECT_EQ(facts.exit_code, 0) << facts.err;
  EXPECT_THAT(facts.out, HasSubstr("\"Base\""));
  EXPECT_EQ(kvlint(dir.path(), {"facts", "missing.py"}).exit_code, 2);
}

// Runs `script` with bash in `cwd`, the kvlint binary as "$K".
CliRun bash(const fs::path& cwd, const std::string& script) {
  return run_captured("cd " + shell_quote(cwd.string()) + " && K=" + shell_quote(KVLINT_BINARY) +
                      " bash -c " + shell_quote(script));
}

TEST(Cli, ReportThatCannotBeWrittenExitsTwoWithAMessage) {
  TempDir dir;
  dir.write("m.py", kWarningFile);
  ASSERT_EQ(kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "-o", "f.json", "m.py"}).exit_code,
            1);
  for (const std::string script : {
           "\"$K\" check --no-cache --exit-zero m.py > /dev/full",
           "\"$K\" check --no-cache --exit-zero m.py >&-",
           "\"$K\" check --no-cache --exit-zero -o /dev/full m.py",
           "\"$K\" rules > /dev/full",
           "\"$K\" explain KV101 > /dev/full",
           "\"$K\" facts m.py > /dev/full",
           "\"$K\" confirm --findings f.json > /dev/full",
       }) {
    const CliRun run = bash(dir.path(), script);
    EXPECT_EQ(run.exit_code, 2) << script << "\n" << run.err;
    EXPECT_THAT(run.err, HasSubstr("kvlint")) << script;
    EXPECT_THAT(run.err, ::testing::AnyOf(HasSubstr("cannot write"), HasSubstr("write failed"))) << script;
  }
}

TEST(Cli, OutputToAFifoIsWrittenIntoItNotReplaced) {
  TempDir dir;
  dir.write("m.py", kWarningFile);
  const CliRun expected = kvlint(dir.path(), {"check", "--no-cache", "m.py"});
  const CliRun run = bash(dir.path(),
                          "mkfifo report.fifo && { cat report.fifo > got.txt & } && "
                          "\"$K\" check --no-cache -o report.fifo m.py; code=$?; wait; exit $code");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_TRUE(fs::is_fifo(dir.path() / "report.fifo"));
  EXPECT_EQ(slurp(dir.path() / "got.txt"), expected.out);
}

TEST(Cli, OutputToDevStdoutAndProcessSubstitutionGoesThroughTheDescriptor) {
  TempDir dir;
  dir.write("m.py", kWarningFile);
  const CliRun expected = kvlint(dir.path(), {"check", "--no-cache", "m.py"});
  const bool stdout_was_link = fs::is_symlink("/dev/stdout");
  // Captured to a regular file by the shell, to a pipe, and appended after what is there.
  EXPECT_EQ(bash(dir.path(), "\"$K\" check --no-cache -o /dev/stdout m.py").out, expected.out);
  EXPECT_EQ(bash(dir.path(), "\"$K\" check --no-cache -o /dev/stdout m.py | cat").out, expected.out);
  EXPECT_EQ(bash(dir.path(), "\"$K\" check --no-cache -o /dev/fd/1 m.py").out, expected.out);
  EXPECT_EQ(
      bash(dir.path(), "{ echo first; \"$K\" check --no-cache -o /dev/stdout m.py; } > log; cat log").out,
      "first\n" + expected.out);
  const CliRun substituted = bash(dir.path(), "{ \"$K\" check --no-cache -o >(cat) m.py; } | cat");
  EXPECT_EQ(substituted.out, expected.out) << substituted.err;
  EXPECT_EQ(fs::is_symlink("/dev/stdout"), stdout_was_link);
  // A link to a regular file: the file is replaced atomically, the link stays.
  dir.write("real.txt", "old\n");
  fs::create_symlink("real.txt", dir.path() / "link.txt");
  EXPECT_EQ(kvlint(dir.path(), {"check", "--no-cache", "-o", "link.txt", "m.py"}).exit_code, 1);
  EXPECT_TRUE(fs::is_symlink(dir.path() / "link.txt"));
  EXPECT_EQ(slurp(dir.path() / "real.txt"), expected.out);
}

TEST(Cli, ControlCharactersFromSourceAreEscapedInTextAndGithubOutput) {
  TempDir dir;
  dir.write("m\x1b[2J.py", kWarningFile);
  for (const std::string format : {"text", "github"}) {
    const CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--color", "never", "--format", format});
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_EQ(run.out.find('\x1b'), std::string::npos) << format << ": " << run.out;
    EXPECT_THAT(run.out, HasSubstr("m\\x1b[2J.py")) << format;
  }
}

TEST(Cli, NonUtf8PathKeepsItsBytesInJson) {
  TempDir dir;
  dir.write("caf\xe9.py", kWarningFile);
  const CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "caf\xe9.py"});
  const json report = parse_json(run);
  ASSERT_FALSE(report["findings"].empty()) << run.out;
  for (const auto& finding : report["findings"]) {
    EXPECT_EQ(finding["path"], "caf\xef\xbf\xbd.py");
    EXPECT_EQ(finding["path_bytes"], "636166e92e7079");  // "caf\xe9.py"
  }
}

TEST(Cli, MoreJobsThanCoresPrintNothingOnStderrWithQuiet) {
  TempDir dir;
  for (int i = 0; i < 8; ++i) dir.write("m" + std::to_string(i) + ".py", kWarningFile);
  const CliRun run = kvlint(dir.path(), {"check", "--no-cache", "-q", "-j", "256"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err, "");
  EXPECT_EQ(run.out, kvlint(dir.path(), {"check", "--no-cache", "-j", "1"}).out);
}

TEST(Cli, SharedCacheDirKeepsConfigsInDifferentDirectoriesApart) {
  // The same kvlint.toml text and the same file, named the same way from the
  // same module, but the config sits one level higher in `outer`, so its
  // per-file ignore matches there only.
  TempDir dir;
  const std::string config = "per-file-ignores = { \"sub/m.py\" = [\"KV9\"] }\n";
  dir.write("inner/sub/kvlint.toml", config);
  dir.write("inner/sub/m.py", kWarningFile);
  dir.write("outer/kvlint.toml", config);
  dir.write("outer/sub/m.py", kWarningFile);
  const fs::path cache = dir.path() / "shared-cache";
  const auto run = [&](const std::string& tree, bool use_cache) {
    std::vector<std::string> args = {"check", "--format", "json", "m.py"};
    if (use_cache) {
      args.insert(args.end(), {"--cache-dir", cache.string()});
    } else {
      args.push_back("--no-cache");
    }
    return kvlint(dir.path() / tree / "sub", args);
  };
  const CliRun inner_expected = run("inner", false), outer_expected = run("outer", false);
  ASSERT_NE(inner_expected.out, outer_expected.out);
  EXPECT_EQ(run("inner", true).out, inner_expected.out);
  EXPECT_EQ(run("outer", true).out, outer_expected.out);
  EXPECT_EQ(run("inner", true).out, inner_expected.out);
}

TEST(Cli, ConcurrentRunsOnOneTreeAndCacheBothGiveTheFullResult) {
  TempDir dir;
  for (int i = 0; i < 24; ++i)
    dir.write("pkg" + std::to_string(i % 3) + "/m" + std::to_string(i) + ".py",
              std::string(kWarningFile) + "# file " + std::to_string(i) + "\n");
  const std::string expected = kvlint(dir.path(), {"check", "--no-cache", "--format", "json"}).out;
  for (int round = 0; round < 4; ++round) {
    if (round == 2) dir.write("pkg0/m0.py", std::string(kWarningFile) + "# edited\n");
    const std::string want =
        round < 2 ? expected : kvlint(dir.path(), {"check", "--no-cache", "--format", "json"}).out;
    const CliRun run = bash(dir.path(),
                            "for i in 1 2 3 4; do \"$K\" check -q --format json > out$i.json & done; wait; "
                            "cat out1.json out2.json out3.json out4.json");
    EXPECT_EQ(run.err, "") << "round " << round;
    EXPECT_EQ(run.out, want + want + want + want) << "round " << round;
  }
}

// The "kvlint: note: ..." lines on stderr.
std::vector<std::string> note_lines(const std::string& err) {
  std::vector<std::string> notes;
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("kvlint: note: ")) notes.push_back(line);
  return notes;
}

// A spec's name is any string: one holding backticks stays one code span in the message (a
// longer fence), so the Markdown report shows the name, not broken spans around it.
TEST(Cli, ASpecNameWithBackticksStaysOneCodeSpanInMessages) {
  TempDir dir;
  std::string source = slurp(fs::path(KVLINT_SOURCE_DIR) /
                             "rules/kv201_fixed_rows_without_reason/fixtures/fire_fixed_without_reason.py");
  const std::string name = "name=\"talker_static_cache\"";
  ASSERT_NE(source.find(name), std::string::npos);
  source.replace(source.find(name), name.size(), "name=\"talker`static``cache\"");
  dir.write("m.py", source);
  const CliRun json_run =
      kvlint(dir.path(), {"check", "--no-cache", "--select", "KV201", "--format", "json"});
  std::vector<std::string> messages;
  const json report = parse_json(json_run);
  for (const auto& f : report.at("findings")) messages.push_back(f.at("message"));
  ASSERT_EQ(messages.size(), 2u) << json_run.out;
  EXPECT_THAT(messages[0], HasSubstr("spec ```talker`static``cache```")) << messages[0];
  const CliRun markdown =
      kvlint(dir.path(), {"check", "--no-cache", "--select", "KV201", "--format", "markdown"});
  EXPECT_THAT(markdown.out, HasSubstr("spec ```talker`static``cache```")) << markdown.out;
}

// A tree checked right after it was written: its files are too new for the file index to
// trust and nothing is analysed into the result cache, so neither creates the cache
// directory; the run memo does, instead of failing with "No such file or directory".
TEST(Cli, AFreshTreeCheckedAtOnceWritesItsRunMemoWithoutANote) {
  TempDir dir;
  dir.write("m.py", kCleanFile);
  const CliRun run = kvlint(dir.path(), {"check"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(note_lines(run.err).empty()) << run.err;
  EXPECT_TRUE(fs::exists(dir.path() / ".kvlint_cache" / "last-run.cbor"));
}

TEST(Cli, ReadOnlyCacheDirectoryAndFullDiskDegradeToNoCachingWithOneWarning) {
  // Tests run as root, whom permissions do not stop: drop the capabilities that let it.
  if (std::system("command -v setpriv >/dev/null 2>&1 && command -v prlimit >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "setpriv or prlimit not available";
  const std::string no_root_override =
      "setpriv --bounding-set=-dac_override,-dac_read_search --inh-caps=-dac_override,-dac_read_search --";
  TempDir dir;
  for (int i = 0; i < 6; ++i) dir.write("m" + std::to_string(i) + ".py", kWarningFile);
  const std::vector<std::string> args = {"check", "--format", "json"};
  std::vector<std::string> uncached = args;
  uncached.push_back("--no-cache");
  ASSERT_EQ(kvlint(dir.path(), args).exit_code, 1);  // a warm cache
  const fs::path cache = dir.path() / ".kvlint_cache";
  const std::string warm_cache = slurp(cache / "facts-cache.cbor");
  fs::permissions(cache, fs::perms::owner_read | fs::perms::owner_exec);
  for (int run = 0; run < 2; ++run) {
    // A change the read-only cache cannot take: the result is still whole and fresh.
    dir.write("m0.py", std::string(kWarningFile) + "# run " + std::to_string(run) + "\n");
    const std::string expected = kvlint(dir.path(), uncached).out;
    const CliRun result = kvlint(dir.path(), args, no_root_override);
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_EQ(result.out, expected);
    const auto notes = note_lines(result.err);
    ASSERT_EQ(notes.size(), 1u) << result.err;
    EXPECT_THAT(notes[0], HasSubstr("caching disabled"));
    EXPECT_EQ(slurp(cache / "facts-cache.cbor"), warm_cache);
  }
  // A cache directory that cannot be created inside a read-only one.
  fs::permissions(cache, fs::perms::owner_all);
  const fs::path locked = dir.path() / "locked";
  fs::create_directory(locked);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  std::vector<std::string> inside_locked = args;
  inside_locked.insert(inside_locked.end(), {"--cache-dir", (locked / "cache").string()});
  const CliRun uncreatable = kvlint(dir.path(), inside_locked, no_root_override);
  fs::permissions(locked, fs::perms::owner_all);
  EXPECT_EQ(uncreatable.out, kvlint(dir.path(), uncached).out);
  EXPECT_EQ(note_lines(uncreatable.err).size(), 1u) << uncreatable.err;
  EXPECT_FALSE(fs::exists(locked / "cache"));
  // A full disk: no file may grow past 0 bytes (EFBIG, as ENOSPC would be), with
  // SIGXFSZ ignored as a full disk sends none. stdout and stderr go through
  // pipes (swapped through fd 3), which the limit does not touch.
  dir.write("m1.py", std::string(kWarningFile) + "# the disk is full\n");
  const CliRun full = bash(dir.path(),
                           "set -o pipefail; trap '' XFSZ; "
                           "{ prlimit --fsize=0 -- \"$K\" check --format json 2>&1 >&3 3>&- | cat >&2; } 3>&1 | cat");
  EXPECT_EQ(full.exit_code, 1) << full.err;
  EXPECT_EQ(full.out, kvlint(dir.path(), uncached).out);
  const auto full_notes = note_lines(full.err);
  ASSERT_EQ(full_notes.size(), 1u) << full.err;
  EXPECT_THAT(full_notes[0], HasSubstr("caching disabled: cannot write the cache"));
  EXPECT_EQ(slurp(cache / "facts-cache.cbor"), warm_cache);
}

}  // namespace
