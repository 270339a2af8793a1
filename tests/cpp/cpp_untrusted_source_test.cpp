// A pull request's C++ files are untrusted input, and reports reach pull requests (annotations,
// comments). An `#include` of a file outside the project must not bring that file's text into any
// report: static mode does not open it (degraded mode stands in, as for a missing header), and a
// compiler error located outside the project is reported by place, never by Clang's message.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cpp/cli_run.hpp"
#include "tests/engine/temp_dir.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using kvlint::testing::CliRun;
using kvlint::testing::codes_in;
using kvlint::testing::diagnostic_kinds;
using kvlint::testing::has;
using kvlint::testing::report;
using kvlint::testing::TempDir;

namespace {

constexpr const char* kSecret = "ghp_SECRETdeadbeef0123456789";
// A line that makes the prefilter pass a C++ file (it names a K/V member), so the file is compiled.
constexpr const char* kAnchor = "struct Holder { int k_cache_; };\n";
constexpr const char* kEnvironmentSecret = "ghp_ENVIRONMENTcafe9876543210";

// Every output of one run (github annotations, then the JSON report), as one text.
std::string all_outputs(const fs::path& project, const std::vector<std::string>& paths) {
  std::string out;
  for (const char* format : {"github", "json", "text", "sarif", "markdown"}) {
    std::vector<std::string> args = {"check", "--no-cache", "--format", format};
    args.insert(args.end(), paths.begin(), paths.end());
    const CliRun run =
        kvlint::testing::run_kvlint(project, args, std::string("KVLINT_TEST_SECRET=") + kEnvironmentSecret);
    out += run.out + run.err;
  }
  return out;
}

TEST(CppUntrustedSource, AnIncludeOfAFileOutsideTheProjectNeverReachesAReport) {
  TempDir dir;
  dir.write("outside/secret.txt", std::string("TOKEN=") + kSecret + "\n");
  dir.write("project/.git/HEAD", "ref: refs/heads/main\n");  // the project root is project/
  const fs::path project = dir.path() / "project";
  // Relative escape, absolute path, the process's environment, a symbolic link in the project, a
  // linked include directory.
  const std::string a = kAnchor;
  dir.write("project/src/relative.cpp", a + "int\n#include \"../../outside/secret.txt\"\n;\n");
  dir.write("project/src/absolute.cpp",
            a + "int\n#include \"" + (dir.path() / "outside/secret.txt").string() + "\"\n;\n");
  dir.write("project/src/environ.cpp", a + "int\n#include \"/proc/self/environ\"\n;\n");
  fs::create_symlink(dir.path() / "outside/secret.txt", project / "src/link.h");
  dir.write("project/src/linked.cpp", a + "int\n#include \"link.h\"\n;\n");
  // The project's include/ (searched without any configuration) as a link to the outside.
  fs::create_directory_symlink(dir.path() / "outside", project / "include");
  dir.write("project/src/searched.cpp", a + "int\n#include \"secret.txt\"\n;\n");
  const std::string out = all_outputs(project, {"src"});
  EXPECT_EQ(out.find(kSecret), std::string::npos) << out;
  EXPECT_EQ(out.find("ghp_"), std::string::npos) << out;
  EXPECT_EQ(out.find(kEnvironmentSecret), std::string::npos) << out;
  EXPECT_EQ(out.find("TOKEN"), std::string::npos) << out;
}

// Degraded mode's lookup of a project header in the `include/` and `includes/` directories above
// a file (find_project_header) opens only files whose real path is in the project: a linked
// directory or header pointing outside is not found.
TEST(CppUntrustedSource, TheProjectHeaderLookupNeverLeavesTheProject) {
  TempDir dir;
  dir.write("outside/secret.h", std::string("TOKEN=") + kSecret + "\n");
  dir.write("project/.git/HEAD", "ref: refs/heads/main\n");
  const fs::path project = dir.path() / "project";
  const std::string a = kAnchor;
  fs::create_directories(project / "engine/csrc");
  fs::create_directory_symlink(dir.path() / "outside", project / "engine/includes");
  dir.write("project/engine/csrc/linked_dir.cpp", a + "int\n#include \"secret.h\"\n;\n");
  fs::create_directories(project / "other/include");
  fs::create_symlink(dir.path() / "outside/secret.h", project / "other/include/linked.h");
  dir.write("project/other/src/linked_file.cpp", a + "int\n#include \"linked.h\"\n;\n");
  const std::string out = all_outputs(project, {"engine", "other"});
  EXPECT_EQ(out.find(kSecret), std::string::npos) << out;
  EXPECT_EQ(out.find("TOKEN"), std::string::npos) << out;
  EXPECT_NE(out.find("secret.h"), std::string::npos) << "named as not found: " << out;
}

// A compile database is configuration, so the directories it searches are read; an error located
// in one of them outside the project is still reported by place only.
TEST(CppUntrustedSource, AnErrorInAHeaderOutsideTheProjectIsNotQuoted) {
  TempDir dir;
  dir.write("vendor/include/settings.h", std::string("TOKEN=") + kSecret + "\n");
  dir.write("project/.git/HEAD", "ref: refs/heads/main\n");
  const fs::path project = dir.path() / "project";
  dir.write("project/src/model.cpp", std::string(kAnchor) + "int\n#include \"settings.h\"\n;\n");
  dir.write("project/compile_commands.json",
            json::array({{{"directory", project.string()},
                          {"file", "src/model.cpp"},
                          {"arguments",
                           {"clang++", "-std=c++17", "-I" + (dir.path() / "vendor/include").string(), "-c",
                            "src/model.cpp"}}}})
                .dump());
  const CliRun run = kvlint::testing::run_kvlint(project, {"check", "--no-cache", "--format", "json", "src"});
  EXPECT_EQ((run.out + run.err).find(kSecret), std::string::npos) << run.out << run.err;
  const json r = report(run);
  EXPECT_TRUE(has(diagnostic_kinds(r, "model.cpp"), "compile-error")) << run.out;
  EXPECT_NE(run.out.find("outside the project"), std::string::npos) << run.out;
}

// The policy does not hide the project's own files: a header beside the file is read (its class
// is seen), and an error in the project is quoted as Clang words it.
TEST(CppUntrustedSource, TheProjectsOwnHeadersAndErrorsAreStillReadAndQuoted) {
  TempDir dir;
  dir.write("project/.git/HEAD", "ref: refs/heads/main\n");
  const fs::path project = dir.path() / "project";
  dir.write("project/include/kv_member.h", "#define KV_MEMBER torch::Tensor k_cache_;\n");
  dir.write("project/src/a.cpp",
            "#include <torch/torch.h>\n#include \"../include/kv_member.h\"\n"
            "struct Decoder : torch::nn::Module {\n  Decoder() { k_cache_ = torch::zeros({4, 1024}); }\n"
            "  KV_MEMBER\n};\n");
  dir.write("project/src/b.cpp", std::string(kAnchor) + "int f() { return undeclared_thing; }\n");
  const CliRun run = kvlint::testing::run_kvlint(project, {"check", "--no-cache", "--format", "json", "src"});
  const json r = report(run);
  EXPECT_TRUE(has(codes_in(r, "a.cpp"), "KV101")) << run.out;
  EXPECT_TRUE(has(diagnostic_kinds(r, "b.cpp"), "compile-error")) << run.out;
  EXPECT_NE(run.out.find("use of undeclared identifier 'undeclared_thing'"), std::string::npos) << run.out;
}

}  // namespace
