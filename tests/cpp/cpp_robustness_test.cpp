// The C++ front end against hostile or broken inputs (issues 17 and 39): a file that overflows
// Clang's stack, a macro expansion bomb, includes of a FIFO, /dev/stdin and a 4 GB file, a walk
// that would take minutes, the result cache and the run memo against changed or newly present
// headers, commands that analyse nothing, and how degraded mode, compile errors and statistics
// are reported.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyzers/facts/vocabulary.hpp"
#include "tests/cpp/cli_run.hpp"
#include "tests/engine/temp_dir.hpp"
#include "tools/kvlint/engine/cpp_module.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using kvlint::testing::CliRun;
using kvlint::testing::codes_in;
using kvlint::testing::diagnostic_kinds;
using kvlint::testing::has;
using kvlint::testing::quote;
using kvlint::testing::report;
using kvlint::testing::slurp;
using kvlint::testing::TempDir;

namespace {

// The executable, as `kvlint` in the tests below.
CliRun kvlint(const fs::path& cwd, const std::vector<std::string>& args, const std::string& env = "") {
  return kvlint::testing::run_kvlint(cwd, args, env);
}

constexpr const char* kPythonModel =
    "from transformers import DynamicCache\nimport torch.nn as nn\n"
    "class M(nn.Module):\n    def f(self):\n        self.cache = DynamicCache()\n";

constexpr const char* kCppModel =
    "struct Decoder : torch::nn::Module {\n  Decoder() { k_cache_ = torch::zeros({4, 1024}); }\n"
    "  torch::Tensor k_cache_;\n};\n";

// 5,000 prefix operators in a row: stock clang++-14 -fsyntax-only segfaults on it; kvlint parses
// it on the compile thread's large stack.
const std::string kDeepPrefixOperators = "int y = " + std::string(5000, '~') + "1;\n";
// Nests deeper than any stack through macros (no run of operators in the text): the compile
// crashes and crash recovery fails that file alone.
constexpr const char* kOverflowsThroughMacros =
    "#define T1 ~~~~~~~~~~\n#define T2 T1 T1 T1 T1 T1 T1 T1 T1 T1 T1\n"
    "#define T3 T2 T2 T2 T2 T2 T2 T2 T2 T2 T2\n#define T4 T3 T3 T3 T3 T3 T3 T3 T3 T3 T3\n"
    "#define T5 T4 T4 T4 T4 T4 T4 T4 T4 T4 T4\n#define T6 T5 T5 T5 T5 T5 T5 T5 T5 T5 T5\n"
    "int y = T6 T6 T6 1;\n";

std::string messages_of(const json& r, const std::string& file_part) {
  std::string out;
  for (const auto& d : r.value("diagnostics", json::array()))
    if (d.value("path", "").find(file_part) != std::string::npos) out += d.value("message", "") + "\n";
  return out;
}

// Stock clang++-14 -fsyntax-only segfaults on the first; the second nests deeper than any stack
// through macros (no run of operators in the text); the third is a longer run than kvlint parses.
TEST(CppRobustness, AFileThatOverflowsClangsStackFailsAloneAndTheReportIsWritten) {
  TempDir dir;
  dir.write("model.py", kPythonModel);
  dir.write("gen.cpp", std::string(kDeepPrefixOperators) + "struct A { torch::Tensor kv_cache_; };\n");
  dir.write("macros.cpp", std::string(kOverflowsThroughMacros) + "struct A { torch::Tensor kv_cache_; };\n");
  dir.write("long.cpp",
            "int y = " + std::string(60000, '!') + "1;\nstruct A { torch::Tensor kv_cache_; };\n");
  // What a crashed compile held is leaked on purpose (unwinding it is not safe): a leak
  // checker (the sanitizer builds) would fail the run at exit for it.
  CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "-o", "r.json", "."},
                      "LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}detect_leaks=0");
  ASSERT_EQ(run.exit_code, 1) << run.err;
  const json r = json::parse(slurp(dir.path() / "r.json"));
  EXPECT_EQ(codes_in(r, "model.py"), std::vector<std::string>{"KV101"});
  // Parsed on a large stack: analysed (it does not compile: `torch` is undeclared).
  EXPECT_TRUE(has(diagnostic_kinds(r, "gen.cpp"), "compile-error")) << r.dump(1);
  EXPECT_EQ(messages_of(r, "gen.cpp").find("not analysed"), std::string::npos) << r.dump(1);
  EXPECT_NE(messages_of(r, "macros.cpp").find("C++ file not analysed: the compile crashed on this file"),
            std::string::npos)
      << r.dump(1);
  EXPECT_NE(messages_of(r, "long.cpp").find("prefix operators deep"), std::string::npos) << r.dump(1);
}

// A kvlint run as `kvlint` runs it, through a child of this process of its own: its exit code,
// wall time and peak resident memory (wait4 reports the child's and those of what it waited for:
// the shell and kvlint). Its output goes to files the arguments name. The memory bounds below are
// loose (2 GiB: a sanitizer build's overhead) against the gigabytes these inputs cost before.
struct MeasuredRun {
  int exit_code = -1;
  double seconds = 0;
  std::uint64_t peak_rss_bytes = 0;
};

MeasuredRun measured_kvlint(const fs::path& cwd, const std::vector<std::string>& args,
                            const std::string& env) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = ::fork();
  if (child == 0) ::_exit(kvlint(cwd, args, env).exit_code);
  int status = 0;
  struct rusage usage {};
  MeasuredRun run;
  if (child < 0 || ::wait4(child, &status, 0, &usage) != child) return run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.peak_rss_bytes = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024u;
  return run;
}

// 117 bytes (issue 39) whose nested macros expand to 2e8 tokens: over 60 s and 12.6 GB before the
// compile budget (cpp_frontend.cpp, CompileBudget). And one macro that copies a 5,000-token
// argument 1,000 times in one step. Each fails alone, within seconds (both cut off at ~230 MB RSS
// for the whole run in a release build).
TEST(CppRobustness, AMacroExpansionBombIsCutOffAndFailsAlone) {
  TempDir dir;
  dir.write("model.py", kPythonModel);
  dir.write("bomb.cpp",
            std::string("#define A(x) x x x x x x x x x x\n#define B(x) A(A(A(A(A(A(A(A(x))))))))\n"
                        "int z = 0 B(+1);\n") +
                kCppModel);
  std::string wide = "#define F(x)";
  for (int i = 0; i < 1000; ++i) wide += " x";
  wide += "\nint z = 0 F(";
  for (int i = 0; i < 5000; ++i) wide += "+1 ";
  dir.write("wide.cpp", wide + ");\n" + kCppModel);
  dir.write("model.cpp", kCppModel);
  // The stopped compile's memory is leaked as after a crash: a leak checker must not fail the run.
  const MeasuredRun run =
      measured_kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "-o", "r.json", "."},
                      "LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}detect_leaks=0 timeout 120");
  ASSERT_EQ(run.exit_code, 1);
  EXPECT_LT(run.seconds, 30.0);
  EXPECT_LT(run.peak_rss_bytes, std::uint64_t{2} << 30);
  const json r = json::parse(slurp(dir.path() / "r.json"));
  EXPECT_EQ(codes_in(r, "model.py"), std::vector<std::string>{"KV101"});
  EXPECT_EQ(codes_in(r, "model.cpp"), std::vector<std::string>{"KV101"}) << r.dump(1);
  for (const char* name : {"bomb.cpp", "wide.cpp"}) {
    EXPECT_NE(messages_of(r, name).find("C++ file not analysed: macro expansion exceeds"), std::string::npos)
        << name << r.dump(1);
    EXPECT_TRUE(codes_in(r, name).empty()) << name;
  }
}

// Compiles run on long-lived threads (cpp_frontend.cpp, CompileThreads): on one worker, a crash
// retires its thread and the files after it, deep ones included, still compile on a new one
// with the same large stack, whatever order the files are taken in.
TEST(CppRobustness, ACrashedCompileRetiresItsThreadAndTheNextFilesStillCompile) {
  TempDir dir;
  for (const char* name : {"crash_a.cpp", "crash_b.cpp"})
    dir.write(name, std::string(kOverflowsThroughMacros) + kCppModel);
  for (const char* name : {"deep_a.cpp", "deep_b.cpp"})
    dir.write(name, std::string(kDeepPrefixOperators) + kCppModel);
  for (const char* name : {"model_a.cpp", "model_b.cpp", "model_c.cpp"}) dir.write(name, kCppModel);
  CliRun run = kvlint(dir.path(), {"check", "--no-cache", "-j", "1", "--format", "json", "-o", "r.json", "."},
                      "LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}detect_leaks=0");
  ASSERT_EQ(run.exit_code, 1) << run.err;
  const json r = json::parse(slurp(dir.path() / "r.json"));
  for (const char* name : {"crash_a.cpp", "crash_b.cpp"}) {
    EXPECT_NE(messages_of(r, name).find("the compile crashed on this file"), std::string::npos)
        << name << r.dump(1);
    EXPECT_TRUE(codes_in(r, name).empty()) << name;
  }
  for (const char* name : {"deep_a.cpp", "deep_b.cpp", "model_a.cpp", "model_b.cpp", "model_c.cpp"}) {
    EXPECT_EQ(codes_in(r, name), std::vector<std::string>{"KV101"}) << name << r.dump(1);
    EXPECT_EQ(messages_of(r, name).find("not analysed"), std::string::npos) << name << r.dump(1);
  }
}

// A FIFO or /dev/stdin (here a FIFO with no writer) as an include target would block forever:
// it is not found, and degraded mode stands in for it.
TEST(CppRobustness, AnIncludeOfAFifoOrStdinDoesNotHang) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir.path() / "pipe.h").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((dir.path() / "stdin.fifo").c_str(), 0600), 0);
  dir.write("fifo.cpp", std::string("#include \"pipe.h\"\n") + kCppModel);
  dir.write("stdin.cpp", std::string("#include \"/dev/stdin\"\n") + kCppModel);
  // stdin opened read-write: never at end, never written.
  CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "fifo.cpp", "stdin.cpp"},
                      "exec 0<>stdin.fifo && timeout 120");
  ASSERT_NE(run.exit_code, 124) << "timed out";
  const json r = report(run);
  for (const char* file : {"fifo.cpp", "stdin.cpp"}) {
    EXPECT_EQ(codes_in(r, file), std::vector<std::string>{"KV101"}) << file << run.out << run.err;
    EXPECT_TRUE(has(diagnostic_kinds(r, file), "degraded")) << file << run.out;
  }
}

// A sparse 4 GB header cost 4.3 GB of memory and 33 s before Clang refused it ("too large for
// Clang to process"; issue 39 saw the finding lost, exit 0): a header over the size kvlint reads
// is not read, and the file is analysed in degraded mode with a note naming it.
TEST(CppRobustness, AHeaderOfGigabytesIsNotReadAndTheIncludingFileIsStillAnalysed) {
  TempDir dir;
  dir.write("model.cpp", std::string("#include \"huge.h\"\n") + kCppModel);
  const fs::path huge = dir.write("huge.h", "");
  fs::resize_file(huge, std::uintmax_t{4} << 30);  // sparse: no disk
  const MeasuredRun run = measured_kvlint(
      dir.path(), {"check", "--no-cache", "--format", "json", "-o", "r.json", "model.cpp"}, "timeout 120");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_LT(run.seconds, 30.0);
  EXPECT_LT(run.peak_rss_bytes, std::uint64_t{2} << 30);
  const json r = json::parse(slurp(dir.path() / "r.json"));
  EXPECT_EQ(codes_in(r, "model.cpp"), std::vector<std::string>{"KV101"}) << r.dump(1);
  EXPECT_TRUE(has(diagnostic_kinds(r, "model.cpp"), "degraded")) << r.dump(1);
  EXPECT_NE(messages_of(r, "model.cpp").find("huge.h: larger than the 64 MiB kvlint reads"),
            std::string::npos)
      << r.dump(1);
}

// 20,000 links took 148 s (every MemberExpr rendered its whole chain again); Clang alone
// takes a few seconds.
TEST(CppRobustness, ALongMemberChainIsAnalysedInLinearTime) {
  TempDir dir;
  std::string chain = "s";
  for (int i = 0; i < 20000; ++i) chain += ".a";
  dir.write("chain.cpp", std::string("#include <torch/torch.h>\n") + kCppModel +
                             "struct S { S& a; int v; };\nint f(S& s) { return " + chain + ".v; }\n");
  const auto start = std::chrono::steady_clock::now();
  const json r = report(kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "chain.cpp"}));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(codes_in(r, "chain.cpp"), std::vector<std::string>{"KV101"}) << r.dump(1);
  EXPECT_LT(seconds, 60.0);
}

// The walk has a work budget as the Python front end does: a file that reaches it is cut off
// with a parse problem and keeps the facts found before.
TEST(CppRobustness, TheWalkStopsAtItsWorkBudget) {
  kvlint::CppFrontEndModule module;
  ASSERT_TRUE(module.loaded()) << module.problem();
  TempDir dir;
  std::string source = std::string("#include <torch/torch.h>\n") + kCppModel;
  for (int i = 0; i < 200; ++i)
    source +=
        "struct Layer" + std::to_string(i) + " { int f(int x) { return x + " + std::to_string(i) + "; } };\n";
  const fs::path file = dir.write("decoder.cpp", source);
  const kvlint::facts::Vocabulary vocabulary;
  kvlint::facts::CppProjectSettings settings;
  auto unbounded = module.make(vocabulary, settings);
  ASSERT_TRUE(unbounded);
  const auto whole = unbounded->analyze("decoder.cpp", file, source, unbounded->command_for(file));
  EXPECT_TRUE(whole.facts.parse_problems.empty());
  EXPECT_EQ(whole.facts.classes.size(), 201u);

  settings.work_steps_per_byte = 0;
  settings.work_minimum_steps = 100;
  auto bounded = module.make(vocabulary, settings);
  const auto cut = bounded->analyze("decoder.cpp", file, source, bounded->command_for(file));
  ASSERT_EQ(cut.facts.parse_problems.size(), 1u);
  EXPECT_NE(cut.facts.parse_problems[0].message.find("analysis stopped here"), std::string::npos);
  EXPECT_GT(cut.facts.parse_problems[0].loc.line, 1u);
  EXPECT_FALSE(cut.facts.classes.empty());  // the facts before the cut stay
  EXPECT_LT(cut.facts.classes.size(), 201u);
}

// The cached result of a .cpp file depends on the project headers it includes: a changed
// macro in one, or a header that was missing and now exists, is analysed again (per-file cache
// and the run memo alike; the headers live outside the checked directory).
TEST(CppRobustness, TheCacheFollowsIncludedProjectHeaders) {
  TempDir dir;
  dir.write("kvlint.toml", "");
  dir.write("include/config.h", "#define WITH_CACHE 1\n");
  dir.write(
      "src/decoder.cpp",
      "#include <torch/torch.h>\n#include \"config.h\"\n#include \"extra.h\"\n"
      "struct Decoder : torch::nn::Module {\n#if WITH_CACHE\n  Decoder() { k_cache_ = torch::zeros({4}); }\n"
      "  torch::Tensor k_cache_;\n#endif\n};\n");
  auto check = [&] { return report(kvlint(dir.path(), {"check", "--format", "json", "src"})); };
  json r = check();
  EXPECT_EQ(codes_in(r, "decoder.cpp"), std::vector<std::string>{"KV101"}) << r.dump(1);
  EXPECT_NE(messages_of(r, "decoder.cpp").find("extra.h"), std::string::npos) << r.dump(1);
  r = check();  // from the cache: the same
  EXPECT_EQ(codes_in(r, "decoder.cpp"), std::vector<std::string>{"KV101"}) << r.dump(1);

  dir.write("include/config.h", "#define WITH_CACHE 0\n");
  r = check();
  EXPECT_TRUE(codes_in(r, "decoder.cpp").empty()) << r.dump(1);
  dir.write("include/extra.h", "// now present\n");
  r = check();
  EXPECT_EQ(messages_of(r, "decoder.cpp").find("extra.h"), std::string::npos) << r.dump(1);
  EXPECT_NE(messages_of(r, "decoder.cpp").find("torch/torch.h"), std::string::npos) << r.dump(1);
  // And the entries of the new state are reused.
  CliRun warm = kvlint(dir.path(), {"check", "-v", "src"});
  EXPECT_NE(warm.err.find("files_parsed=0"), std::string::npos) << warm.err;
}

// A header that appears where the search looks before the one a file read (beside the file, for
// a quoted include found in include/) is read instead: the cached result, made with the other
// one, is analysed again (it said "All checks passed" on every later run; issue 39, item 7).
TEST(CppRobustness, ACachedResultIsAnalysedAgainWhenANewHeaderShadowsTheOneItRead) {
  TempDir dir;
  dir.write("kvlint.toml", "");
  dir.write("include/kv.h", "#define WITH_CACHE 0\n");
  dir.write("src/a.cpp", std::string("#include <torch/torch.h>\n#include \"kv.h\"\n#if WITH_CACHE\n") +
                             kCppModel + "#endif\n");
  auto codes = [&](bool cache) {
    std::vector<std::string> args{"check", "--format", "json", "src"};
    if (!cache) args.push_back("--no-cache");
    return codes_in(report(kvlint(dir.path(), args)), "a.cpp");
  };
  const std::vector<std::string> none, kv101{"KV101"};
  EXPECT_EQ(codes(true), none);
  EXPECT_EQ(codes(true), none);  // from the cache
  dir.write("src/kv.h", "#define WITH_CACHE 1\n");
  EXPECT_EQ(codes(false), kv101);
  EXPECT_EQ(codes(true), kv101);
  EXPECT_NE(kvlint(dir.path(), {"check", "-v", "src"}).err.find("files_parsed=0"), std::string::npos)
      << "the new state is cached in turn";
}

// A compile database whose command analyses nothing must not pass the gate (README: nothing
// analysed is exit 1), cached or not. (`"arguments": ["clang++"]` did too before the allow-list
// of compile options, which now adds the file: that command analyses it.)
TEST(CppRobustness, AFileThatCouldNotBeAnalysedAtAllFailsTheRun) {
  TempDir dir;
  dir.write("kvlint.toml", "");
  dir.write("a.cpp", kCppModel);
  const std::string file = (dir.path() / "a.cpp").string();
  for (const json& entry : {json{{"directory", dir.path().string()}, {"file", file}, {"command", ""}},
                            json{{"directory", dir.path().string()},
                                 {"file", file},
                                 {"arguments", {"clang++", "-x", "fortran", file}}}}) {
    dir.write("compile_commands.json", json::array({entry}).dump());
    for (int run_number = 0; run_number < 2; ++run_number) {  // the second from the cache
      CliRun run = kvlint(dir.path(), {"check", "--format", "json", "a.cpp"});
      EXPECT_EQ(run.exit_code, 1) << entry.dump() << run.out << run.err;
      EXPECT_TRUE(has(diagnostic_kinds(report(run), "a.cpp"), "compile-error")) << entry.dump() << run.out;
    }
  }
}

// Degraded mode is the usual CI case, not an error: a note about the whole file, no 0:0.
TEST(CppRobustness, DegradedModeIsANoteWithoutALocationInEveryFormat) {
  TempDir dir;
  dir.write("decoder.cpp", std::string("#include <torch/torch.h>\n") + kCppModel);
  const CliRun text = kvlint(dir.path(), {"check", "--no-cache", "decoder.cpp"});
  EXPECT_NE(text.out.find("decoder.cpp: note[degraded]: analysed without full types"), std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find(":0:0"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("error[degraded]"), std::string::npos) << text.out;

  const CliRun github = kvlint(dir.path(), {"check", "--no-cache", "--format", "github", "decoder.cpp"});
  EXPECT_NE(github.out.find("::notice file=decoder.cpp,title=kvlint degraded::analysed without full types"),
            std::string::npos)
      << github.out;
  EXPECT_EQ(github.out.find("::error file=decoder.cpp,title=kvlint degraded"), std::string::npos)
      << github.out;
  EXPECT_EQ(github.out.find("line=0"), std::string::npos) << github.out;

  const json r = report(kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "decoder.cpp"}));
  bool noted = false;
  for (const auto& d : r.value("diagnostics", json::array()))
    if (d.value("kind", "") == "degraded") noted = d.value("severity", "") == "note";
  EXPECT_TRUE(noted) << r.dump(1);

  const json sarif = report(kvlint(dir.path(), {"check", "--no-cache", "--format", "sarif", "decoder.cpp"}));
  bool sarif_noted = false;
  for (const auto& n : sarif["runs"][0]["invocations"][0].value("toolExecutionNotifications", json::array()))
    if (n.dump().find("analysed without full types") != std::string::npos) {
      sarif_noted = n.value("level", "") == "note";
      EXPECT_EQ(n.dump().find("\"region\""), std::string::npos) << n.dump();
    }
  EXPECT_TRUE(sarif_noted) << sarif.dump(1);
}

// Compile errors name files as the rest of the report does, and C++ files count as parsed.
TEST(CppRobustness, CompileErrorsShowRelativePathsAndStatisticsCountCppBytes) {
  TempDir dir;
  dir.write("src/broken.cpp", "struct Decoder {\n  int k_cache_ = ;\n};\n");
  const CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--statistics", "src"});
  EXPECT_NE(run.out.find("src/broken.cpp:2:"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find(dir.path().string()), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("1 file parsed (39 bytes"), std::string::npos) << run.out;
}

// A suppression comment on a line of its own covers the next code line whatever ends the lines:
// "\n", "\r\n" or a lone "\r" (old Mac files), as Clang counts them; a trailing one covers its
// own line.
TEST(CppRobustness, SuppressionsFindTheirLineWithEveryLineEnd) {
  const std::vector<std::string> lines = {
      "struct Decoder : torch::nn::Module {",
      "  // kvlint: ignore[KV101] legacy, freed by the engine",
      "  Decoder() { k_cache_ = torch::zeros({4, 1024}); }",
      "  torch::Tensor k_cache_;",
      "};",
      "struct Encoder : torch::nn::Module {",
      "  Encoder() { v_cache_ = torch::zeros({4, 1024}); }  // kvlint: ignore[KV101] legacy",
      "  torch::Tensor v_cache_;",
      "};",
      "struct Unsuppressed : torch::nn::Module {",
      "  // kvlint: ignore[KV101] only the next code line",
      "",
      "  int other_ = 0;",
      "  Unsuppressed() { k_cache_ = torch::zeros({4, 1024}); }",
      "  torch::Tensor k_cache_;",
      "};"};
  for (const std::string line_end : {"\n", "\r\n", "\r"}) {
    TempDir dir;
    std::string source;
    for (const std::string& line : lines) source += line + line_end;
    dir.write("model.cpp", source);
    const json r = report(kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "model.cpp"}));
    std::vector<std::string> flagged;
    for (const auto& f : r.value("findings", json::array()))
      flagged.push_back(f.value("code", "") + ":" + std::to_string(f.value("line", 0u)));
    // Line 11's suppression covers line 13, which has no finding: it is unused (KV903).
    EXPECT_EQ(flagged, (std::vector<std::string>{"KV903:11", "KV101:14"})) << quote(line_end) << r.dump(1);
  }
}

// The README's example run ends as the bundled examples' run does (its findings are excerpted):
// degraded mode there is a note, not an error.
TEST(CppRobustness, TheReadmeExampleEndsAsTheExamplesRunEnds) {
  const std::string readme = slurp(fs::path(KVLINT_SOURCE_DIR) / "README.md");
  const std::string command = "$ build/kvlint check examples/models\n";
  const std::size_t begin = readme.find(command);
  ASSERT_NE(begin, std::string::npos);
  const std::size_t excerpt_end = readme.find("\n...\n", begin);
  const std::size_t end = readme.find("```", begin);
  ASSERT_LT(excerpt_end, end);
  const std::string tail = readme.substr(excerpt_end + 5, end - excerpt_end - 5);
  const CliRun run =
      kvlint(KVLINT_SOURCE_DIR, {"check", "--no-cache", "--color", "never", "examples/models"});
  EXPECT_EQ(run.exit_code, 1);
  ASSERT_GE(run.out.size(), tail.size());
  EXPECT_EQ(run.out.substr(run.out.size() - tail.size()), tail) << run.out;
  EXPECT_EQ(run.out.find("error[degraded]"), std::string::npos) << run.out;
}

}  // namespace
