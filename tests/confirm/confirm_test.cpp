// run_confirm end to end with the fake harness in tests/confirm/fake_runtime:
// several models in one run, some of which crash, hang, print garbage or run
// out of memory, while the others keep their results.
#include "tools/kvlint/confirm/confirm.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "support.hpp"
#include "tools/kvlint/confirm/findings_input.hpp"
#include "tools/kvlint/confirm/runner.hpp"

namespace kvlint {
namespace {

using confirm::testing::process_gone;
using confirm::testing::read_file;
using confirm::testing::ScratchDir;
using confirm::testing::write_file;
using nlohmann::json;

class ConfirmEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    // The host finds the harness through this variable first; point it at the fake.
    ::setenv("KVLINT_RUNTIME_PYTHONPATH", confirm::testing::fake_runtime().c_str(), 1);
    model_file_ = (dir_.path() / "pkg" / "model.py").string();
    std::filesystem::create_directories(dir_.path() / "pkg");
    write_file(model_file_, "class Dec: pass\n");
  }
  void TearDown() override { ::unsetenv("KVLINT_RUNTIME_PYTHONPATH"); }

  RuntimeModel model(std::string name, std::string scenario, std::vector<std::string> owners) {
    RuntimeModel m;
    m.name = std::move(name);
    m.factory = "pkg.model:build";
    m.driver = "pkg.model:drive";
    m.owners = std::move(owners);
    m.paths = {"streaming"};
    m.device = "cpu";
    m.timeout_s = 30;
    m.env["FAKE_SCENARIO"] = std::move(scenario);
    m.python_path = {"."};
    return m;
  }

  Config config(std::vector<RuntimeModel> models) {
    Config c;
    c.root = dir_.path();
    c.runtime.interpreter = confirm::testing::python();
    c.runtime.models = std::move(models);
    return c;
  }

  // One finding per (code, owner), at lines first_line, first_line + 1, ...
  std::filesystem::path findings_file(const std::vector<std::pair<std::string, std::string>>& code_owner,
                                      uint32_t first_line) {
    json findings = json::array();
    uint32_t line = first_line;
    for (const auto& [code, owner] : code_owner) {
      findings.push_back({{"code", code},
                          {"name", "n"},
                          {"severity", "error"},
                          {"path", model_file_},
                          {"line", line},
                          {"column", 1},
                          {"owner", owner},
                          {"message", "m"},
                          {"related", json::array()}});
      ++line;
    }
    auto path = dir_.path() / "findings.json";
    write_file(path, json{{"schema", "kvlint-findings"}, {"version", 1}, {"findings", findings}}.dump());
    return path;
  }

  std::string event(json object) { return object.dump() + "\n"; }

  ScratchDir dir_;
  std::string model_file_;
};

TEST_F(ConfirmEndToEnd, FailingModelsBecomeInconclusiveWhileOthersKeepTheirResults) {
  // "good" reports a cache at the finding's line for owner Dec.
  const auto events = dir_.path() / "good.jsonl";
  write_file(events,
             event({{"event", "start"}, {"model", "good"}, {"pid", 1}, {"python", "3"}, {"device", "cpu"}}) +
                 event({{"event", "cache"},
                        {"model", "good"},
                        {"path", "streaming"},
                        {"concurrency", 4},
                        {"class", "DynamicCache"},
                        {"file", model_file_},
                        {"line", 18},
                        {"owner", "Dec"},
                        {"rows", 4},
                        {"bytes", 4 * 4655104},
                        {"bytes_per_row", 4655104}}) +
                 event({{"event", "path_done"},
                        {"model", "good"},
                        {"path", "streaming"},
                        {"concurrency", 4},
                        {"ok", true}}) +
                 event({{"event", "end"}, {"model", "good"}}));
  auto good = model("good", "canned", {"Dec"});
  good.env["FAKE_EVENTS"] = events.string();
  const auto entry_copy = dir_.path() / "entry-copy.json";
  good.env["FAKE_ENTRY_COPY"] = entry_copy.string();
  auto hang = model("hang", "hang", {"Hang"});
  hang.timeout_s = 2;
  const auto pidfile = dir_.path() / "grandchild.pid";
  hang.env["FAKE_PIDFILE"] = pidfile.string();

  ConfirmOptions options;
  options.findings_file = findings_file({{"KV101", "Dec"},
                                         {"KV101", "Crash"},
                                         {"KV101", "Hang"},
                                         {"KV101", "Garbage"},
                                         {"KV101", "Oom"},
                                         {"KV101", "Nobody"}},
                                        18);
  options.config =
      config({model("crash", "crash", {"Crash"}), good, hang, model("garbage", "garbage", {"Garbage"}),
              model("oom", "memory", {"Oom"}), model("unused", "crash", {"Unflagged"})});
  options.format = "json";
  options.output = dir_.path() / "out" / "confirm.json";
  std::filesystem::create_directories(options.output.parent_path());

  EXPECT_EQ(run_confirm(options), 1);  // the good model confirms its finding
  json report = json::parse(read_file(options.output));
  EXPECT_EQ(report["schema"], "kvlint-confirm");
  std::map<std::string, json> models;
  for (const auto& m : report["models"]) models[m["name"]] = m;
  ASSERT_EQ(models.size(), 5u) << "the entry nobody flagged must not run";
  EXPECT_EQ(models["good"]["status"], "complete");
  EXPECT_EQ(models["crash"]["status"], "inconclusive");
  EXPECT_EQ(models["crash"]["reason"], "crashed (SIGSEGV)");
  EXPECT_EQ(models["crash"]["observed"]["caches"].size(), 1u) << "lines before the crash are kept";
  EXPECT_EQ(models["hang"]["reason"], "timed out after 2 s");
  EXPECT_EQ(models["garbage"]["status"], "inconclusive");
  EXPECT_EQ(
      models["garbage"]["reason"].get<std::string>().rfind("garbage on stdout: Loading checkpoint shards", 0),
      0u)
      << models["garbage"]["reason"];
  EXPECT_EQ(models["garbage"]["observed"]["caches"].size(), 1u);
  EXPECT_EQ(models["oom"]["reason"].get<std::string>().rfind("out of memory", 0), 0u);

  std::map<std::string, json> verdicts;
  for (const auto& r : report["results"]) verdicts[r["owner"]] = r;
  EXPECT_EQ(verdicts["Dec"]["verdict"], "confirmed");
  EXPECT_EQ(verdicts["Dec"]["evidence"]["observed"]["rows"], 4);
  EXPECT_EQ(verdicts["Hang"]["verdict"], "inconclusive");
  EXPECT_EQ(verdicts["Oom"]["verdict"], "inconclusive");
  EXPECT_EQ(verdicts["Nobody"]["verdict"], "not-exercised");
  // The crash model's cache sits at /nonexistent/fake_model.py:10, named by no finding: RT001.
  ASSERT_GE(report["runtime_findings"].size(), 1u);
  EXPECT_EQ(report["runtime_findings"][0]["code"], "RT001");

  // The hung model's grandchild died with its process group (zombie or gone).
  const auto grandchild = std::stol(read_file(pidfile));
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string content((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    auto close = content.rfind(')');
    gone = !stat || (close != std::string::npos && content.size() > close + 2 && content[close + 2] == 'Z');
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone);

  // ENTRY.json and the child's environment follow the protocol.
  json copy = json::parse(read_file(entry_copy));
  EXPECT_EQ(copy["argv"][1], "run");
  EXPECT_EQ(copy["entry"]["name"], "good");
  EXPECT_EQ(copy["entry"]["factory"], "pkg.model:build");
  EXPECT_EQ(copy["entry"]["device"], "cpu");
  EXPECT_EQ(copy["entry"]["concurrency"], json::array({1, 4}));
  EXPECT_EQ(copy["entry"]["python_path"][0], std::filesystem::weakly_canonical(dir_.path()).string());
  EXPECT_EQ(copy["env"]["HF_HUB_OFFLINE"], "1");
  EXPECT_EQ(copy["env"]["PYTHONPATH"].get<std::string>().rfind(confirm::testing::fake_runtime().string(), 0),
            0u);
  // No temporary output files are left beside the report.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(options.output.parent_path()),
                          std::filesystem::directory_iterator()),
            1);
}

TEST_F(ConfirmEndToEnd, TruncatedLastLineAndMissingEndAreInconclusive) {
  ConfirmOptions options;
  options.findings_file = findings_file({{"KV101", "Trunc"}, {"KV101", "Quiet"}}, 18);
  options.config = config({model("trunc", "truncated", {"Trunc"}), model("quiet", "noend", {"Quiet"})});
  options.format = "json";
  options.output = dir_.path() / "confirm.json";
  EXPECT_EQ(run_confirm(options), 0);
  json report = json::parse(read_file(options.output));
  EXPECT_EQ(report["models"][0]["reason"], "crashed (SIGSEGV)");
  EXPECT_EQ(report["models"][1]["reason"], "harness exited without \"end\"");
  EXPECT_EQ(report["results"][0]["verdict"], "inconclusive");
}

TEST_F(ConfirmEndToEnd, ModelOptionRunsExactlyTheRequestedEntries) {
  const auto events = dir_.path() / "e.jsonl";
  write_file(
      events,
      event(
          {{"event", "path_done"}, {"model", "a"}, {"path", "streaming"}, {"concurrency", 1}, {"ok", true}}) +
          event({{"event", "end"}, {"model", "a"}}));
  auto a = model("a", "canned", {"Other"});
  a.env["FAKE_EVENTS"] = events.string();
  ConfirmOptions options;
  options.findings_file = findings_file({{"KV101", "Dec"}}, 18);
  options.config = config({a, model("b", "crash", {"Dec"})});
  options.models = {"a"};
  options.format = "json";
  options.output = dir_.path() / "confirm.json";
  EXPECT_EQ(run_confirm(options), 0);
  json report = json::parse(read_file(options.output));
  ASSERT_EQ(report["models"].size(), 1u);
  EXPECT_EQ(report["models"][0]["name"], "a");
  EXPECT_EQ(report["results"][0]["verdict"], "not-exercised");

  options.models = {"nope"};
  EXPECT_EQ(run_confirm(options), 2);
}

TEST_F(ConfirmEndToEnd, AllBootsUnflaggedEntriesSoDriftWithoutAFindingIsReported) {
  // "clean" has no finding at all; its declaration is half of what it allocates.
  const auto events = dir_.path() / "clean.jsonl";
  write_file(events,
             event({{"event", "start"}, {"model", "clean"}, {"pid", 1}, {"python", "3"}, {"device", "cpu"}}) +
                 event({{"event", "cache"},
                        {"model", "clean"},
                        {"path", "streaming"},
                        {"concurrency", 1},
                        {"class", "DynamicCache"},
                        {"file", model_file_},
                        {"line", 1},
                        {"owner", "Clean"},
                        {"rows", 1},
                        {"bytes", 4655104},
                        {"bytes_per_row", 4655104}}) +
                 event({{"event", "declaration"},
                        {"model", "clean"},
                        {"path", "streaming"},
                        {"concurrency", 1},
                        {"owner", "Clean"},
                        {"name", "kv"},
                        {"bytes_per_row", 4655104 / 2},
                        {"rows_driver", "MAX_NUM_SEQS"},
                        {"rows", 1}}) +
                 event({{"event", "path_done"},
                        {"model", "clean"},
                        {"path", "streaming"},
                        {"concurrency", 1},
                        {"ok", true}}) +
                 event({{"event", "end"}, {"model", "clean"}}));
  auto clean = model("clean", "canned", {"Clean"});
  clean.env["FAKE_EVENTS"] = events.string();
  ConfirmOptions options;
  options.findings_file = dir_.path() / "none.json";
  write_file(options.findings_file, R"({"schema": "kvlint-findings", "version": 1, "findings": []})");
  options.config = config({clean});
  options.format = "json";
  options.output = dir_.path() / "confirm.json";
  EXPECT_EQ(run_confirm(options), 0);  // nothing flagged: nothing booted
  EXPECT_TRUE(json::parse(read_file(options.output))["models"].empty());

  options.all = true;
  EXPECT_EQ(run_confirm(options), 1);
  json report = json::parse(read_file(options.output));
  ASSERT_EQ(report["models"].size(), 1u);
  EXPECT_EQ(report["models"][0]["status"], "complete");
  ASSERT_EQ(report["runtime_findings"].size(), 1u);
  EXPECT_EQ(report["runtime_findings"][0]["code"], "RT002");

  options.models = {"clean"};  // --all already means every entry
  EXPECT_EQ(run_confirm(options), 2);
}

TEST_F(ConfirmEndToEnd, EntryWithoutOwnersBootsClassesOfItsPackage) {
  auto entry = model("pkgwide", "noend", {});
  Config c = config({entry});
  std::vector<confirm::InputFinding> findings(1);
  findings[0].finding.code = "KV101";
  findings[0].finding.loc.file = model_file_;
  findings[0].finding.owner_class = "Dec";
  auto selected = confirm::select_entries(findings, c, {});
  ASSERT_EQ(selected.size(), 1u);
  EXPECT_EQ(selected[0].owners, std::vector<std::string>{"Dec"});
  findings[0].finding.loc.file = "/elsewhere/model.py";
  EXPECT_TRUE(confirm::select_entries(findings, c, {}).empty());
}

TEST_F(ConfirmEndToEnd, BadFindingsFilesAreUsageErrors) {
  ConfirmOptions options;
  options.config = config({model("a", "crash", {"Dec"})});
  options.findings_file = dir_.path() / "bad.json";
  write_file(options.findings_file, R"({"schema": "kvlint-confirm", "version": 1, "findings": []})");
  EXPECT_EQ(run_confirm(options), 2);
  write_file(options.findings_file, R"({"schema": "kvlint-findings", "version": 2, "findings": []})");
  EXPECT_EQ(run_confirm(options), 2);
  write_file(options.findings_file, "not json");
  EXPECT_EQ(run_confirm(options), 2);
  write_file(options.findings_file,
             R"({"schema": "kvlint-findings", "version": 1, "findings": [{"code": "KV101"}]})");
  EXPECT_EQ(run_confirm(options), 2);
  options.findings_file = dir_.path() / "missing.json";
  EXPECT_EQ(run_confirm(options), 2);
  EXPECT_THROW(confirm::parse_findings_json(R"({"schema": "kvlint-findings", "version": 2})", "x.json"),
               confirm::InputError);
}

TEST(FindingsInput, LineNumbersOutOfRangeAreRejectedNotTruncated) {
  const std::string head =
      R"({"schema": "kvlint-findings", "version": 1, "findings": [{"code": "KV101", "path": "m.py", )";
  for (std::string line : {"4294967297", "18446744073709551615", "-1", "1e300", "2.5"}) {
    try {
      confirm::parse_findings_json(head + "\"line\": " + line + "}]}", "x.json");
      ADD_FAILURE() << "line " << line << " was accepted";
    } catch (const confirm::InputError& e) {
      EXPECT_STREQ(e.what(), "x.json: findings[0]: \"line\" must be an integer from 0 to 4294967295") << line;
    }
  }
  auto findings = confirm::parse_findings_json(head + R"("line": 4294967295, "column": 0}]})", "x.json");
  EXPECT_EQ(findings.at(0).finding.loc.line, 4294967295u);
}

TEST_F(ConfirmEndToEnd, BadEntryOrFormatIsAUsageError) {
  ConfirmOptions options;
  options.findings_file = findings_file({{"KV101", "Dec"}}, 18);
  auto broken = model("a", "crash", {"Dec"});
  broken.factory = "no_colon";
  options.config = config({broken});
  EXPECT_EQ(run_confirm(options), 2);
  options.config = config({model("a", "crash", {"Dec"})});
  options.format = "xml";
  EXPECT_EQ(run_confirm(options), 2);
}

TEST_F(ConfirmEndToEnd, MissingInterpreterIsInconclusiveNotFatal) {
  ConfirmOptions options;
  options.findings_file = findings_file({{"KV101", "Dec"}}, 18);
  auto entry = model("a", "crash", {"Dec"});
  entry.interpreter = "/nonexistent/bin/python";
  options.config = config({entry});
  options.format = "json";
  options.output = dir_.path() / "confirm.json";
  EXPECT_EQ(run_confirm(options), 0);
  json report = json::parse(read_file(options.output));
  EXPECT_EQ(report["models"][0]["status"], "inconclusive");
  EXPECT_NE(report["models"][0]["reason"].get<std::string>().find("could not start the harness"),
            std::string::npos);
}

// A child's text that is not UTF-8 (a stderr tail cut inside a character, a
// byte 0xff on stdout) is repaired in the report, never fatal to it.
TEST_F(ConfirmEndToEnd, NonUtf8ChildOutputStillGivesTheWholeReport) {
  ConfirmOptions options;
  options.findings_file = findings_file({{"KV101", "Noisy"}}, 18);
  options.config = config({model("noisy", "non_utf8", {"Noisy"})});
  options.output = dir_.path() / "confirm.out";
  for (std::string format : {"text", "sarif", "json"}) {
    options.format = format;
    ASSERT_EQ(run_confirm(options), 0) << format;
  }
  json report = json::parse(read_file(options.output));  // throws on invalid UTF-8
  EXPECT_EQ(report["results"][0]["verdict"], "inconclusive");
  const auto& noisy = report["models"][0];
  EXPECT_EQ(noisy["reason"], "garbage on stdout: \xef\xbf\xbd (not JSON)");  // 0xff became U+FFFD
  const std::string tail = noisy["process"]["stderr_tail"];
  EXPECT_EQ(tail.substr(0, 3), "\u2588") << "the tail starts on a character boundary";
  EXPECT_EQ(tail.substr(tail.size() - 2), "!\n");
}

// Exit status of `pid`; 1000 + N when signal N killed it; -1 when it did not end within `limit`.
int wait_exit(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

// The kvlint binary, stopped by SIGTERM or SIGINT while a model (and a
// grandchild in a session of its own) runs: both die, the ENTRY.json
// directory goes, no report is written, and the status is 128 + the signal.
TEST_F(ConfirmEndToEnd, InterruptedConfirmKillsItsProcessesAndRemovesItsTempDirs) {
  for (int sig : {SIGTERM, SIGINT}) {
    const auto tmp = dir_.path() / ("tmp-" + std::to_string(sig));
    std::filesystem::create_directories(tmp);
    const auto pidfile = dir_.path() / ("grandchild-" + std::to_string(sig) + ".pid");
    std::filesystem::remove(pidfile);
    write_file(dir_.path() / "kvlint.toml",
               "[runtime]\ninterpreter = \"" + confirm::testing::python() +
                   "\"\n[runtime.models.hang]\nfactory = \"pkg.model:build\"\ndriver = \"pkg.model:drive\"\n"
                   "owners = [\"Dec\"]\npaths = [\"streaming\"]\ndevice = \"cpu\"\ntimeout = 600\n"
                   "python-path = [\".\"]\n[runtime.models.hang.env]\nFAKE_SCENARIO = \"hang\"\n"
                   "FAKE_SETSID = \"1\"\nFAKE_PIDFILE = \"" +
                   pidfile.string() + "\"\n");
    const auto findings = findings_file({{"KV101", "Dec"}}, 18);
    const auto report = dir_.path() / "report.json";
    const std::string config = (dir_.path() / "kvlint.toml").string();
    const pid_t kvlint = ::fork();
    ASSERT_GE(kvlint, 0);
    if (kvlint == 0) {
      ::setenv("TMPDIR", tmp.c_str(), 1);
      ::execl(KVLINT_BINARY, KVLINT_BINARY, "confirm", "--findings", findings.c_str(), "--config",
              config.c_str(), "--format", "json", "-o", report.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // Poll (bounded) until the grandchild exists: start-up time is not under test.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!std::filesystem::exists(pidfile) && std::chrono::steady_clock::now() < deadline &&
           ::waitpid(kvlint, nullptr, WNOHANG) == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(std::filesystem::exists(pidfile)) << "the fake harness never started";
    const auto harness = static_cast<pid_t>(std::stol(read_file(pidfile.string() + ".harness")));
    const auto grandchild = static_cast<pid_t>(std::stol(read_file(pidfile)));
    EXPECT_FALSE(std::filesystem::is_empty(tmp)) << "ENTRY.json lives under TMPDIR while the model runs";

    ::kill(kvlint, sig);
    const int status = wait_exit(kvlint, std::chrono::seconds(60));
    if (status == -1) ::kill(kvlint, SIGKILL);
    EXPECT_EQ(status, 128 + sig);
    EXPECT_TRUE(process_gone(harness)) << "harness " << harness << " outlived kvlint";
    EXPECT_TRUE(process_gone(grandchild)) << "grandchild " << grandchild << " outlived kvlint";
    for (pid_t pid : {harness, grandchild})
      if (!process_gone(pid)) ::kill(pid, SIGKILL);
    EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "a temporary directory was left behind";
    EXPECT_FALSE(std::filesystem::exists(report)) << "an interrupted run writes no report";
  }
}

}  // namespace
}  // namespace kvlint
