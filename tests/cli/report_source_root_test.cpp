// `kvlint report --findings FILE` shows source excerpts, and the findings file is input: a path in
// it may name any file on the machine. Excerpts come only from files under the project root the
// findings were produced for; any other path is left out with a note.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cpp/cli_run.hpp"
#include "tests/engine/temp_dir.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using kvlint::testing::CliRun;
using kvlint::testing::run_kvlint;
using kvlint::testing::slurp;
using kvlint::testing::TempDir;

namespace {

constexpr const char* kSecret = "ghp_REPORTSECRET0123456789";

TEST(ReportSourceRoot, ExcerptsComeOnlyFromFilesUnderTheProjectRoot) {
  TempDir dir;
  dir.write("outside/secret.txt", std::string("token = ") + kSecret + "\n");
  dir.write("project/.git/HEAD", "ref: refs/heads/main\n");
  const fs::path project = dir.path() / "project";
  dir.write("project/model.py",
            "from transformers import DynamicCache\nimport torch.nn as nn\n"
            "class Decoder(nn.Module):\n    def step(self):\n        self.kept_cache = DynamicCache()\n");
  fs::create_symlink(dir.path() / "outside/secret.txt", project / "link.py");
  const CliRun check = run_kvlint(project, {"check", "--no-cache", "--format", "json", "-o", "f.json", "."});
  ASSERT_EQ(check.exit_code, 1) << check.out << check.err;
  json findings = json::parse(slurp(project / "f.json"));
  ASSERT_EQ(findings["findings"].size(), 1u) << findings.dump(1);
  // The same finding pointed at the secret three ways: relative escape, absolute, a link.
  for (const std::string& path : {std::string("../outside/secret.txt"),
                                 (dir.path() / "outside/secret.txt").string(), std::string("link.py")}) {
    json moved = findings["findings"][0];
    moved["path"] = path;
    moved["line"] = 1;
    moved["end_line"] = 1;
    findings["findings"].push_back(moved);
  }
  findings["summary"]["findings"] = findings["findings"].size();
  findings["summary"]["by_code"]["KV101"] = findings["findings"].size();
  findings["summary"]["by_severity"]["error"] = findings["findings"].size();
  dir.write("project/f.json", findings.dump(2));

  const CliRun report = run_kvlint(project, {"report", "--findings", "f.json"});
  ASSERT_EQ(report.exit_code, 0) << report.out << report.err;
  EXPECT_EQ((report.out + report.err).find(kSecret), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("lies outside the project root"), std::string::npos) << report.out;
  // The project's own file still shows its excerpt.
  EXPECT_NE(report.out.find("self.kept_cache = DynamicCache()"), std::string::npos) << report.out;

  // --root names another project: then model.py is outside it too.
  dir.write("other/.keep", "");
  const CliRun elsewhere =
      run_kvlint(project, {"report", "--findings", "f.json", "--root", (dir.path() / "other").string()});
  ASSERT_EQ(elsewhere.exit_code, 0) << elsewhere.err;
  EXPECT_EQ(elsewhere.out.find("self.kept_cache = DynamicCache()"), std::string::npos) << elsewhere.out;
}

}  // namespace
