// The C++ front end end to end through the CLI: compile databases (-p, the config
// key, found upward), fallback flags, degraded mode reported per file in every
// format, a file that does not compile, a huge generated translation unit, a mixed
// Python + C++ tree in one run, the per-file cache keyed on the compile command,
// and a missing front-end module (one diagnostic naming the package; Python unaffected).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cpp/cli_run.hpp"
#include "tests/engine/temp_dir.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using kvlint::testing::CliRun;
using kvlint::testing::codes_in;
using kvlint::testing::diagnostic_kinds;
using kvlint::testing::has;
using kvlint::testing::quote;
using kvlint::testing::report;
using kvlint::testing::slurp;
using kvlint::testing::files_under;
using kvlint::testing::TempDir;

namespace {

// The executable, as `kvlint` in the tests below.
CliRun kvlint(const fs::path& cwd, const std::vector<std::string>& args, const std::string& env = "") {
  return kvlint::testing::run_kvlint(cwd, args, env);
}

// The codes of the findings reported at `path` (not those that only mention it).
std::vector<std::string> codes_at(const json& r, const std::string& path) {
  std::vector<std::string> out;
  for (const auto& f : r.value("findings", json::array()))
    if (f.value("path", "") == path) out.push_back(f.value("code", ""));
  return out;
}

// A self-contained stand-in for LibTorch (so the file compiles with full types) reachable
// only through the compile database's -I flag; without it <torch/torch.h> is missing and
// the degraded-mode declarations take its place.
constexpr const char* kTensorHeader = R"cpp(#pragma once
                                            namespace torch {
                                            struct Tensor {};
                                            template <class... A>
                                            Tensor zeros(A...) {
                                              return {};
                                            }
                                            namespace nn {
                                            struct Module {};
                                            }  // namespace nn
                                            }  // namespace torch
)cpp";

constexpr const char* kModelSource = R"cpp(#include <torch/torch.h>
                                           struct Decoder : torch::nn::Module {
                                             Decoder() { k_cache_ = torch::zeros(4, 1024); }
                                             torch::Tensor k_cache_;
                                           };
)cpp";

std::string compile_database(const fs::path& root, const std::string& file) {
  json db = json::array();
  db.push_back(
      {{"directory", root.string()},
       {"file", file},
       {"arguments", {"clang++", "-std=c++17", "-I" + (root / "third_party").string(), "-c", file}}});
  return db.dump(2);
}

TEST(CppFrontEnd, CompileDatabaseGivesFullTypesFallbackDegrades) {
  TempDir dir;
  dir.write("third_party/torch/torch.h", kTensorHeader);
  dir.write("src/decoder.cpp", kModelSource);

  // Without a database: the header is missing, the file is analysed in degraded mode, the K/V still found.
  CliRun fallback = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "src"});
  json r = report(fallback);
  EXPECT_EQ(codes_in(r, "decoder.cpp"), std::vector<std::string>{"KV101"}) << fallback.out << fallback.err;
  EXPECT_TRUE(has(diagnostic_kinds(r, "decoder.cpp"), "degraded")) << fallback.out;

  // -p DIR: full types, no degraded note.
  dir.write("build/compile_commands.json", compile_database(dir.path(), "src/decoder.cpp"));
  CliRun with_p = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "-p", "build", "src"});
  r = report(with_p);
  EXPECT_EQ(codes_in(r, "decoder.cpp"), std::vector<std::string>{"KV101"}) << with_p.out << with_p.err;
  EXPECT_TRUE(diagnostic_kinds(r, "decoder.cpp").empty()) << with_p.out;

  // The `compile-commands` key of [tool.kvlint.cpp].
  dir.write("kvlint.toml", "[cpp]\ncompile-commands = \"build\"\n");
  r = report(kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "src"}));
  EXPECT_TRUE(diagnostic_kinds(r, "decoder.cpp").empty()) << r.dump();
  fs::remove(dir.path() / "kvlint.toml");

  // Found upward from the project root, as clang-tidy does.
  fs::rename(dir.path() / "build/compile_commands.json", dir.path() / "compile_commands.json");
  r = report(kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "src"}));
  EXPECT_TRUE(diagnostic_kinds(r, "decoder.cpp").empty()) << r.dump();

  // A -p directory without a database is said, and the fallback flags are used.
  r = report(kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "-p", "nowhere", "src"}));
  EXPECT_TRUE(has(diagnostic_kinds(r, "nowhere"), "config")) << r.dump();
}

// A stand-in LibTorch that, like the real one, brings the fixed-width integer types.
// clang-format off
constexpr const char* kTorchWithIntegers = R"cpp(#pragma once
#include <cstdint>
#include <initializer_list>
namespace torch {
struct Tensor {
  template <class... A> Tensor narrow(A...) const { return {}; }
  template <class... A> Tensor copy_(A...) const { return {}; }
};
inline Tensor zeros(std::initializer_list<int64_t>) { return {}; }
inline Tensor cat(std::initializer_list<Tensor>, int64_t) { return {}; }
namespace nn { struct Module {}; }
}  // namespace torch
)cpp";

// The class in the header, its methods in the .cpp (the normal C++ layout).
constexpr const char* kDecoderHeader = R"cpp(#pragma once
#include <torch/torch.h>
namespace talker {
class Decoder : public torch::nn::Module {
 public:
  explicit Decoder(int64_t layers);
  void step(const torch::Tensor& x);
 private:
  torch::Tensor k_cache_;
  torch::Tensor past_keys_;
};
}  // namespace talker
)cpp";

// `rope::rotate` comes from a header only the compile database finds: without it `k` is
// invalid and Clang drops the growth statement from the AST; the tokens still show it.
constexpr const char* kDecoderSource = R"cpp(#include "decoder.h"
#include <rope/rope.h>
namespace talker {
Decoder::Decoder(int64_t layers) {
  k_cache_ = torch::zeros({layers, 4096, 8, 64});
}
void Decoder::step(const torch::Tensor& x) {
  auto k = rope::rotate(x);
  past_keys_ = torch::cat({past_keys_, k}, 2);
}
}  // namespace talker
)cpp";

constexpr const char* kRopeHeader = R"cpp(#pragma once
#include <torch/torch.h>
namespace rope {
inline torch::Tensor rotate(const torch::Tensor& x) { return x; }
}  // namespace rope
)cpp";
// A per-request map filled with insert_or_assign and through operator[], declared as one
// fixed row: the cache fact (so KV202, and no stale-declaration KV104) in both modes.
constexpr const char* kStreamsHeader = R"cpp(#pragma once
#include <kvlint/model_local_kv.h>
#include <torch/torch.h>
#include <string>
#include <unordered_map>
#include <vector>
namespace talker {
struct StreamConfig { int64_t num_hidden_layers = 2; int64_t num_key_value_heads = 4; int64_t head_dim = 64; };
struct StreamKV { torch::Tensor key_cache; torch::Tensor value_cache; };
class Streams : public torch::nn::Module {
 public:
  void open(const std::string& request_id);
  void extend(const std::string& request_id);
  std::vector<kvlint::model_local_kv::Spec> model_local_kv_specs() const;
 private:
  StreamConfig config_;
  std::unordered_map<std::string, StreamKV> kv_cache_;
};
}  // namespace talker
)cpp";

constexpr const char* kStreamsSource = R"cpp(#include "streams.h"
#include <utility>
namespace talker {
namespace mlkv = kvlint::model_local_kv;
void Streams::open(const std::string& request_id) {
  StreamKV stream;
  stream.key_cache = torch::zeros({2, 4, 256, 64});
  kv_cache_.insert_or_assign(request_id, std::move(stream));
}
void Streams::extend(const std::string& request_id) {
  kv_cache_[request_id].value_cache = torch::zeros({2, 4, 256, 64});
}
std::vector<mlkv::Spec> Streams::model_local_kv_specs() const {
  return {mlkv::spec_from_config(config_, {.name = "streams_kv",
                                           .physical_capacity_positions = 256,
                                           .capacity_source = "stream window",
                                           .scope = mlkv::Scope::Request,
                                           .rows = mlkv::RowDriver::Fixed,
                                           .rows_fixed = 1,
                                           .rows_reason = "one stream"})};
}
}  // namespace talker
)cpp";
// clang-format on

// "CODE path:line" of each finding, sorted; `unique`: each line once (several sites of one spec).
std::vector<std::string> finding_lines(const json& r, bool unique = false) {
  std::vector<std::string> out;
  for (const auto& f : r.value("findings", json::array()))
    out.push_back(f.value("code", "") + " " + f.value("path", "") + ":" + std::to_string(f.value("line", 0)));
  std::sort(out.begin(), out.end());
  if (unique) out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// One class across the header and the .cpp: the constructor's K/V and the step's growth by
// torch::cat are the header's class's, in degraded mode and with a compile database (which
// lists the .cpp only; the header's command is inferred from it), with the same findings.
TEST(CppFrontEnd, AClassInAHeaderWithMethodsInTheSourceIsOneClass) {
  TempDir dir;
  dir.write("third_party/torch/torch.h", kTorchWithIntegers);
  dir.write("third_party/rope/rope.h", kRopeHeader);
  dir.write("src/decoder.h", kDecoderHeader);
  dir.write("src/decoder.cpp", kDecoderSource);
  const std::vector<std::string> expected = {"KV101 src/decoder.cpp:5", "KV101 src/decoder.cpp:9"};

  CliRun degraded = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "src"});
  json r = report(degraded);
  EXPECT_EQ(finding_lines(r), expected) << degraded.out << degraded.err;
  EXPECT_TRUE(has(diagnostic_kinds(r, "decoder.cpp"), "degraded")) << degraded.out;
  for (const auto& f : r.value("findings", json::array()))
    EXPECT_NE(f.value("message", "").find("`Decoder`"), std::string::npos) << f.dump();

  dir.write("compile_commands.json", compile_database(dir.path(), "src/decoder.cpp"));
  CliRun full = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "src"});
  r = report(full);
  EXPECT_EQ(finding_lines(r), expected) << full.out << full.err;
  EXPECT_TRUE(diagnostic_kinds(r, "decoder.cpp").empty()) << full.out;
  EXPECT_TRUE(diagnostic_kinds(r, "decoder.h").empty()) << full.out;

  // The .cpp alone names the class it defines methods of; its header is found and analysed
  // (the class's members and bases are the header's).
  CliRun alone = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "src/decoder.cpp"});
  EXPECT_EQ(finding_lines(report(alone)), expected) << alone.out << alone.err;
}

TEST(CppFrontEnd, APerRequestMapFilledAnyWayIsSeenWithAndWithoutHeaders) {
  TempDir dir;
  dir.write("third_party/torch/torch.h", kTorchWithIntegers);
  dir.write("src/streams.h", kStreamsHeader);
  dir.write("src/streams.cpp", kStreamsSource);
  const std::vector<std::string> args = {"check", "--no-cache", "--format", "json", "--select", "KV202,KV104", "src"};
  const std::vector<std::string> expected = {"KV202 src/streams.cpp:18"};

  CliRun degraded = kvlint(dir.path(), args);
  json r = report(degraded);
  EXPECT_EQ(finding_lines(r, true), expected) << degraded.out << degraded.err;
  EXPECT_TRUE(has(diagnostic_kinds(r, "streams.cpp"), "degraded")) << degraded.out;

  json db = json::array();
  db.push_back({{"directory", dir.path().string()},
                {"file", "src/streams.cpp"},
                {"arguments",
                 {"clang++", "-std=c++20", "-I" + (dir.path() / "third_party").string(),
                  "-I" + (fs::path(KVLINT_SOURCE_DIR) / "runtime/include").string(), "-c", "src/streams.cpp"}}});
  dir.write("compile_commands.json", db.dump(2));
  CliRun full = kvlint(dir.path(), args);
  r = report(full);
  EXPECT_EQ(finding_lines(r, true), expected) << full.out << full.err;
  EXPECT_TRUE(diagnostic_kinds(r, "streams.cpp").empty()) << full.out;
}

// Without a database, a project's own header named from the project root is found (the
// fallback include path ends with the root), so only what is really missing is stubbed.
TEST(CppFrontEnd, FallbackFindsHeadersNamedFromTheProjectRoot) {
  TempDir dir;
  dir.write("kvlint.toml", "");
  dir.write("engine/csrc/attention.h",
            "#pragma once\n#include <torch/torch.h>\nstruct Attention : torch::nn::Module {\n"
            "  Attention() { k_cache_ = torch::zeros({4, 1024}); }\n  torch::Tensor k_cache_;\n};\n");
  dir.write(
      "engine/csrc/model.cpp",
      "#include \"engine/csrc/attention.h\"\nstruct Model : torch::nn::Module {\n  Attention attention;\n"
      "  Model() { v_cache_ = torch::zeros({4, 1024}); }\n  torch::Tensor v_cache_;\n};\n");
  CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "engine/csrc/model.cpp"});
  json r = report(run);
  std::string degraded;
  for (const auto& d : r.value("diagnostics", json::array()))
    if (d.value("kind", "") == "degraded") degraded = d.value("message", "");
  EXPECT_NE(degraded.find("torch/torch.h"), std::string::npos) << run.out;
  EXPECT_EQ(degraded.find("attention.h"), std::string::npos) << degraded;
}

// The message of `file`'s degraded note, or empty.
std::string degraded_note(const json& r, const std::string& file) {
  for (const auto& d : r.value("diagnostics", json::array()))
    if (d.value("kind", "") == "degraded" && d.value("path", "") == file) return d.value("message", "");
  return {};
}

// A quoted header the include path lacks is looked for as a build's -I would find it: in an
// `include/` or `includes/` directory beside the including file or one of its ancestors
// (DeepSpeed's csrc/transformer/inference/csrc/*.cpp name "inference_context.h" in ../includes).
// The nearest wins; two at the same distance are neither used, and the note says so; an angled
// include is not looked for there.
TEST(CppFrontEnd, FallbackFindsAQuotedProjectHeaderInTheNearestIncludesDirectory) {
  TempDir dir;
  dir.write("kvlint.toml", "");
  const std::string attention =
      "#pragma once\n#include <torch/torch.h>\nstruct Attention : torch::nn::Module {\n  Attention();\n"
      "  torch::Tensor k_cache_;\n};\n";
  dir.write("engine/includes/attention.h", attention);
  // Farther up, and a different class: not the one the nearest directory holds.
  dir.write("includes/attention.h", "#pragma once\nstruct Unrelated {};\n");
  dir.write("engine/csrc/attention.cpp",
            "#include \"attention.h\"\nAttention::Attention() { k_cache_ = torch::zeros({4, 1024}); }\n");
  // Both include/ and includes/ beside it hold the header: neither is used.
  dir.write("twice/include/pool.h", attention);
  dir.write("twice/includes/pool.h", attention);
  dir.write("twice/src/pool.cpp",
            "#include \"pool.h\"\nAttention::Attention() { k_cache_ = torch::zeros({4, 1024}); }\n");
  // Angle brackets name the system's or a configured directory's header, not a guess in the project.
  dir.write("angled/includes/attention.h", attention);
  dir.write("angled/src/attention.cpp",
            "#include <attention.h>\nAttention::Attention() { k_cache_ = torch::zeros({4, 1024}); }\n");
  CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "engine", "twice", "angled"});
  json r = report(run);
  EXPECT_EQ(codes_in(r, "engine/csrc/attention.cpp"), std::vector<std::string>{"KV101"})
      << run.out << run.err;
  const std::string note = degraded_note(r, "engine/csrc/attention.cpp");
  EXPECT_NE(note.find("torch/torch.h"), std::string::npos) << run.out;
  EXPECT_EQ(note.find("attention.h"), std::string::npos) << note;
  EXPECT_EQ(codes_in(r, "twice/src/pool.cpp"), std::vector<std::string>{}) << run.out;
  EXPECT_NE(degraded_note(r, "twice/src/pool.cpp").find("pool.h: a project header in both"),
            std::string::npos)
      << run.out;
  EXPECT_EQ(codes_in(r, "angled/src/attention.cpp"), std::vector<std::string>{}) << run.out;
}

// `Ptr<A, B> layer(...)` with `Ptr` from a header degraded mode could not find parses as a
// comparison that stops after the `>`: an error the missing header explains, not a syntax error
// (LightSeq's bert.cc once its own header is found and the layer headers are not).
TEST(CppFrontEnd, ATemplateFromAMissingHeaderIsNoSyntaxError) {
  TempDir dir;
  dir.write("kvlint.toml", "");
  dir.write("model.cpp",
            "#include <torch/torch.h>\n#include \"layers/missing_layer.h\"\n"
            "struct Options {};\nstruct Decoder : torch::nn::Module {\n"
            "  Decoder() {\n    LayerPtr<Options, Options> layer_(new Layer<Options, Options>(1, 2));\n"
            "    k_cache_ = torch::zeros({4, 1024});\n  }\n  torch::Tensor k_cache_;\n};\n");
  CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "model.cpp"});
  json r = report(run);
  EXPECT_TRUE(has(diagnostic_kinds(r, "model.cpp"), "degraded")) << run.out;
  EXPECT_FALSE(has(diagnostic_kinds(r, "model.cpp"), "compile-error")) << run.out;
  EXPECT_EQ(codes_in(r, "model.cpp"), std::vector<std::string>{"KV101"}) << run.out;
}

TEST(CppFrontEnd, DegradedModeIsNotedInTextJsonAndSarif) {
  const fs::path fixture =
      fs::path(KVLINT_SOURCE_DIR) / "rules/kv101_undeclared_cache/fixtures/fire_cpp_kv_tensor_members.cpp";
  TempDir dir;
  fs::copy_file(fixture, dir.path() / "decoder.cpp");
  CliRun text = kvlint(dir.path(), {"check", "--no-cache", "decoder.cpp"});
  EXPECT_NE(text.out.find("analysed without full types"), std::string::npos) << text.out << text.err;
  EXPECT_NE(text.out.find("torch/torch.h"), std::string::npos) << text.out;
  CliRun sarif = kvlint(dir.path(), {"check", "--no-cache", "--format", "sarif", "decoder.cpp"});
  EXPECT_NE(sarif.out.find("analysed without full types"), std::string::npos) << sarif.out;
  EXPECT_NE(sarif.out.find("KV101"), std::string::npos);
}

// The torch wheel of a runtime environment (runtime/setup-env) ships LibTorch's headers.
fs::path libtorch_include() {
  const char* home = std::getenv("HOME");
  const fs::path runtime = fs::path(home ? home : "/") / ".cache/kvlint/runtime";
  std::error_code ec;
  for (const auto& venv : fs::directory_iterator(runtime, ec))
    for (const auto& lib : fs::directory_iterator(venv.path() / "lib", ec)) {
      const fs::path include = lib.path() / "site-packages/torch/include";
      if (fs::is_regular_file(include / "torch/csrc/api/include/torch/torch.h", ec)) return include;
    }
  return {};
}

TEST(CppFrontEnd, WithTheLibTorchHeadersTheRealTypesAreUsed) {
  const fs::path include = libtorch_include();
  if (include.empty()) GTEST_SKIP() << "no runtime environment with a torch wheel (runtime/setup-env)";
  TempDir dir;
  fs::copy_file(
      fs::path(KVLINT_SOURCE_DIR) / "rules/kv101_undeclared_cache/fixtures/fire_cpp_kv_tensor_members.cpp",
      dir.path() / "decoder.cpp");
  json db = json::array();
  db.push_back({{"directory", dir.path().string()},
                {"file", "decoder.cpp"},
                {"arguments",
                 {"clang++", "-std=c++20", "-isystem", include.string(), "-isystem",
                  (include / "torch/csrc/api/include").string(), "-c", "decoder.cpp"}}});
  dir.write("compile_commands.json", db.dump());
  json r = report(kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "decoder.cpp"}));
  EXPECT_EQ(codes_in(r, "decoder.cpp"), (std::vector<std::string>{"KV101", "KV101"})) << r.dump();
  EXPECT_TRUE(diagnostic_kinds(r, "decoder.cpp").empty()) << r.dump();
}

// A compile database entry against the runtime environment's torch headers (C++20, as
// torch 2.x requires; Python's headers for torch/extension.h's pybind11).
json libtorch_entry(const fs::path& include, const fs::path& dir, const std::string& file) {
  json arguments = {"clang++",        "-std=c++20", "-isystem",
                    include.string(), "-isystem",   (include / "torch/csrc/api/include").string()};
  for (const char* python : {"/usr/include/python3.11", "/usr/include/python3.12", "/usr/include/python3.13"})
    if (fs::exists(fs::path(python) / "Python.h")) arguments.insert(arguments.end(), {"-isystem", python});
  arguments.insert(arguments.end(), {"-I", dir.string(), "-c", file});
  return {{"directory", dir.string()}, {"file", file}, {"arguments", arguments}};
}

// The degraded-mode fixture of LibTorch names (a header including only <torch/torch.h>, a
// .cpp including <torch/extension.h>) gives the same findings with the real headers.
TEST(CppFrontEnd, WithTheLibTorchHeadersTheDegradedFixtureGivesTheSameFindings) {
  const fs::path include = libtorch_include();
  if (include.empty()) GTEST_SKIP() << "no runtime environment with a torch wheel (runtime/setup-env)";
  TempDir dir;
  const fs::path fixture = fs::path(KVLINT_SOURCE_DIR) /
                           "rules/kv101_undeclared_cache/fixtures/fire_cpp_libtorch_names_from_torch_header";
  for (const char* file : {"attention.h", "cross_attention.cpp"})
    fs::copy_file(fixture / file, dir.path() / file);
  json db = json::array();
  db.push_back(libtorch_entry(include, dir.path(), "cross_attention.cpp"));
  dir.write("compile_commands.json", db.dump());
  json r = report(kvlint(dir.path(), {"check", "--no-cache", "--select", "KV101", "--format", "json", "."}));
  EXPECT_EQ(codes_at(r, "attention.h"), (std::vector<std::string>{"KV101", "KV101"})) << r.dump();
  EXPECT_EQ(codes_at(r, "cross_attention.cpp"), std::vector<std::string>{"KV101"}) << r.dump();
  EXPECT_FALSE(has(diagnostic_kinds(r, "cross_attention.cpp"), "degraded")) << r.dump();
}

// Against the real headers a `std::vector<int>` is no IntArrayRef: the allocations and the
// K/V write do not compile, and Clang's recovery still gives their facts (KV101 on both
// buffers, the capture over the write); the file is reported as not compiling.
TEST(CppFrontEnd, WithTheLibTorchHeadersCallsThatDoNotCompileKeepTheirFindings) {
  const fs::path include = libtorch_include();
  if (include.empty()) GTEST_SKIP() << "no runtime environment with a torch wheel (runtime/setup-env)";
  TempDir dir;
  // clang-format off
  dir.write("decoder.cpp", R"cpp(#include <ATen/cuda/CUDAGraph.h>
#include <torch/torch.h>

struct DecoderImpl : torch::nn::Module {
  explicit DecoderImpl(int64_t layers) {
    std::vector<int> shape{4, 2048, 8, 64};
    k_cache_ = torch::zeros(shape, torch::kHalf);
    v_cache_ = register_buffer("v_cache", torch::zeros(shape));
  }
  torch::Tensor forward(const torch::Tensor& k) {
    std::vector<int> positions{0};
    k_cache_.index_copy_(1, positions, k);
    return k;
  }
  torch::Tensor k_cache_, v_cache_;
};
TORCH_MODULE(Decoder);

struct Runner : torch::nn::Module {
  void capture(const torch::Tensor& k) {
    graph_.capture_begin();
    out_ = decoder_->forward(k);
    graph_.capture_end();
  }
  Decoder decoder_{nullptr};
  at::cuda::CUDAGraph graph_;
  torch::Tensor out_;
};
)cpp");
  // clang-format on
  json db = json::array();
  db.push_back(libtorch_entry(include, dir.path(), "decoder.cpp"));
  dir.write("compile_commands.json", db.dump());
  json r =
      report(kvlint(dir.path(), {"check", "--no-cache", "--select", "KV101,KV103", "--format", "json", "."}));
  EXPECT_EQ(codes_at(r, "decoder.cpp"), (std::vector<std::string>{"KV101", "KV101", "KV103"})) << r.dump();
  EXPECT_TRUE(has(diagnostic_kinds(r, "decoder.cpp"), "compile-error")) << r.dump();
}

// "CODE path:line" of each `// expect: CODE` comment in a fixture folder's files.
std::vector<std::string> expected_lines(const fs::path& fixture, const std::string& code) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(fixture)) {
    std::istringstream text(slurp(entry.path()));
    int line = 0;
    for (std::string l; std::getline(text, l);) {
      ++line;
      if (const auto at = l.find("// expect: " + code); at != std::string::npos)
        out.push_back(code + " " + entry.path().filename().string() + ":" + std::to_string(line));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The fixtures of K/V recognised by what the code does (forward outputs fed back, structs in
// containers, captures over a forward with K/V inputs, look-alikes sized by the cache length)
// give their degraded-mode findings with a compile database against the real LibTorch headers.
// One test per fixture (each compiles LibTorch's headers, about 20 s, several times that under
// ASan): ctest runs them in parallel and each stays well inside its timeout.
struct KvByBehaviourFixture {
  std::string code;
  std::string relative;  // under rules/
};
void PrintTo(const KvByBehaviourFixture& fixture, std::ostream* out) { *out << fixture.code << " " << fixture.relative; }

class WithTheLibTorchHeaders : public ::testing::TestWithParam<KvByBehaviourFixture> {};

TEST_P(WithTheLibTorchHeaders, KvByBehaviourFixtureGivesTheSameFindings) {
  const fs::path include = libtorch_include();
  if (include.empty()) GTEST_SKIP() << "no runtime environment with a torch wheel (runtime/setup-env)";
  const auto& [code, relative] = GetParam();
  const fs::path fixture = fs::path(KVLINT_SOURCE_DIR) / "rules" / relative;
  TempDir dir;
  json db = json::array();
  for (const auto& entry : fs::directory_iterator(fixture)) {
    fs::copy_file(entry.path(), dir.path() / entry.path().filename());
    if (entry.path().extension() == ".cpp")
      db.push_back(libtorch_entry(include, dir.path(), entry.path().filename().string()));
  }
  dir.write("compile_commands.json", db.dump());
  CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--select", code, "--format", "json", "."});
  json r = report(run);
  std::vector<std::string> actual;
  for (const auto& f : r.value("findings", json::array()))
    actual.push_back(f.value("code", "") + " " + f.value("path", "") + ":" +
                     std::to_string(f.value("line", 0)));
  std::sort(actual.begin(), actual.end());
  EXPECT_EQ(actual, expected_lines(fixture, code)) << relative << "\n" << run.out << run.err;
}

INSTANTIATE_TEST_SUITE_P(
    CppFrontEnd, WithTheLibTorchHeaders,
    ::testing::Values(
        KvByBehaviourFixture{"KV101", "kv101_undeclared_cache/fixtures/fire_cpp_kv_from_forward_outputs"},
        KvByBehaviourFixture{"KV101", "kv101_undeclared_cache/fixtures/silent_cpp_forward_outputs_not_kv"},
        KvByBehaviourFixture{"KV101", "kv101_undeclared_cache/fixtures/silent_cpp_masks_sized_by_cache_len"},
        KvByBehaviourFixture{"KV101",
                             "kv101_undeclared_cache/fixtures/fire_cpp_kv_in_structs_held_in_containers"},
        KvByBehaviourFixture{"KV101",
                             "kv101_undeclared_cache/fixtures/silent_cpp_structs_in_containers_without_kv"},
        KvByBehaviourFixture{
            "KV103", "kv103_undeclared_graph_capture/fixtures/fire_cpp_capture_over_forward_with_kv_inputs"},
        KvByBehaviourFixture{
            "KV103",
            "kv103_undeclared_graph_capture/fixtures/silent_cpp_capture_over_forward_without_kv_inputs"},
        KvByBehaviourFixture{"KV101", "kv101_undeclared_cache/fixtures/fire_cpp_raw_device_kv"},
        KvByBehaviourFixture{"KV101",
                             "kv101_undeclared_cache/fixtures/silent_cpp_raw_device_buffers_not_kv"},
        KvByBehaviourFixture{"KV101",
                             "kv101_undeclared_cache/fixtures/fire_cpp_device_kv_laid_out_in_a_handed_buffer"},
        KvByBehaviourFixture{"KV101",
                             "kv101_undeclared_cache/fixtures/silent_cpp_device_buffers_laid_out_not_kv"}),
    [](const ::testing::TestParamInfo<KvByBehaviourFixture>& fixture_info) {
      std::string name = fs::path(fixture_info.param.relative).filename().string();
      name.erase(std::remove(name.begin(), name.end(), '_'), name.end());
      return name;
    });

// A singleton's K/V buffer used as K/V by two files (each reports the class's allocation in its
// header) is one finding, with both files' uses as related locations.
TEST(CppFrontEnd, ASingletonWorkspaceUsedAsKvByTwoFilesIsOneFinding) {
  const fs::path fixture =
      fs::path(KVLINT_SOURCE_DIR) / "rules/kv101_undeclared_cache/fixtures/fire_cpp_singleton_workspace_kv";
  TempDir dir;
  dir.write("kvlint.toml", "");
  fs::copy(fixture, dir.path(), fs::copy_options::recursive);
  std::string second = slurp(dir.path() / "inference/csrc/bindings.cpp");
  for (std::size_t at = second.find("attention_step"); at != std::string::npos;
       at = second.find("attention_step", at + 1))
    second.insert(at + std::string_view("attention_step").size(), "_again");
  dir.write("inference/csrc/bindings_again.cpp", second);
  CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "."});
  json r = report(run);
  ASSERT_EQ(r.value("findings", json::array()).size(), 1u) << run.out << run.err;
  const json& finding = r["findings"][0];
  EXPECT_EQ(finding.value("path", ""), "inference/includes/engine_context.h") << run.out;
  std::set<std::string> related_files;
  for (const auto& related : finding.value("related", json::array()))
    related_files.insert(related.value("path", ""));
  EXPECT_EQ(related_files,
            (std::set<std::string>{"inference/csrc/bindings.cpp", "inference/csrc/bindings_again.cpp"}))
      << run.out;
}

TEST(CppFrontEnd, AFileThatDoesNotCompileIsReportedAndTheRunGoesOn) {
  TempDir dir;
  dir.write("broken.cpp", "struct Decoder {\n  int k_cache_ = ;\n  void f() { return 1 +; }\n}}}\n");
  dir.write("model.py",
            "from transformers import DynamicCache\nimport torch.nn as nn\n"
            "class M(nn.Module):\n    def f(self):\n        self.cache = DynamicCache()\n");
  CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "."});
  json r = report(run);
  EXPECT_TRUE(has(diagnostic_kinds(r, "broken.cpp"), "compile-error")) << run.out << run.err;
  EXPECT_EQ(codes_in(r, "model.py"), std::vector<std::string>{"KV101"});
  EXPECT_EQ(run.exit_code, 1);
}

// --fix never edits a C++ file that does not compile, as it never edits a Python file with syntax
// errors; the same file, compiling, gets the fix (a code the suppression did not need removed).
TEST(CppFrontEnd, FixLeavesAFileThatDoesNotCompileAlone) {
  TempDir dir;
  dir.write("kvlint.toml", "");
  dir.write("third_party/torch/torch.h", kTensorHeader);
  const std::string good = R"cpp(#include <torch/torch.h>
struct Decoder : torch::nn::Module {
  Decoder() { k_cache_ = torch::zeros(4, 1024); }  // kvlint: ignore[KV101, KV202] legacy
  torch::Tensor k_cache_;
};
)cpp";
  std::string broken = good;
  broken.replace(broken.find("  torch::Tensor k_cache_;"), 25,
                 "  void step() { int x = ; }\n  torch::Tensor k_cache_;");
  json db = json::array();
  for (const char* file : {"good.cpp", "broken.cpp"})
    db.push_back(
        {{"directory", dir.path().string()},
         {"file", file},
         {"arguments", {"clang++", "-std=c++17", "-I" + (dir.path() / "third_party").string(), "-c", file}}});
  dir.write("compile_commands.json", db.dump());
  dir.write("good.cpp", good);
  dir.write("broken.cpp", broken);
  CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--fix", "good.cpp", "broken.cpp"});
  EXPECT_NE(run.err.find("broken.cpp: not fixed: the file has syntax errors"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("fixed 1 finding in 1 file"), std::string::npos) << run.err;
  EXPECT_EQ(slurp(dir.path() / "broken.cpp"), broken);
  std::string fixed = good;
  fixed.replace(fixed.find(", KV202"), 7, "");
  EXPECT_EQ(slurp(dir.path() / "good.cpp"), fixed);
}

// Degraded mode hides the errors a missing header causes, not a syntax error of the file's own:
// that is a compile-error (a warning in every format) and --fix leaves the file alone. The same
// file without it is only degraded, and fixed.
TEST(CppFrontEnd, ASyntaxErrorInADegradedFileIsReportedAndNotFixed) {
  TempDir dir;
  dir.write("kvlint.toml", "");
  const std::string good = R"cpp(#include <torch/torch.h>
#include <project/missing_macros.h>
EXPORT_API int exported_helper();
struct Decoder : torch::nn::Module {
  Decoder() { k_cache_ = torch::zeros({4, 1024}); }  // kvlint: ignore[KV101, KV202] legacy
  void step() { k_cache_ = k_cache_.unknown_method(3).index({0}); }
  void check() { TORCH_CHECK(k_cache_.defined(), "no cache") }
  torch::Tensor k_cache_;
};
)cpp";
  std::string broken = good;
  broken.replace(broken.find("void step() {"), 13, "void step() { int x = ;");
  dir.write("good.cpp", good);
  dir.write("broken.cpp", broken);
  CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "good.cpp", "broken.cpp"});
  json r = report(run);
  EXPECT_TRUE(has(diagnostic_kinds(r, "good.cpp"), "degraded")) << run.out;
  EXPECT_FALSE(has(diagnostic_kinds(r, "good.cpp"), "compile-error")) << run.out;
  EXPECT_TRUE(has(diagnostic_kinds(r, "broken.cpp"), "compile-error")) << run.out;
  EXPECT_NE(run.out.find("broken.cpp:6:"), std::string::npos) << "the syntax error is located: " << run.out;

  CliRun fix = kvlint(dir.path(), {"check", "--no-cache", "--fix", "good.cpp", "broken.cpp"});
  EXPECT_NE(fix.err.find("broken.cpp: not fixed: the file has syntax errors"), std::string::npos) << fix.err;
  EXPECT_EQ(slurp(dir.path() / "broken.cpp"), broken);
  std::string fixed = good;
  fixed.replace(fixed.find(", KV202"), 7, "");
  EXPECT_EQ(slurp(dir.path() / "good.cpp"), fixed);
}

// A CUDA file with every header found but no compile command naming it is read as C++: the
// CUDA compiler's built-ins (`threadIdx`, `__ll2double_rn`) are undeclared, which is degraded
// mode's case, not the file's error (DeepSpeed's transform.cu once its includes/ were found).
// Its own syntax error is still a compile-error, and the same code in a .cpp does not compile.
TEST(CppFrontEnd, ACudaFileReadAsCppIsDegradedNotACompileError) {
  TempDir dir;
  dir.write("kvlint.toml", "");
  dir.write("csrc/includes/kernels.h",
            "#pragma once\nvoid launch_convert(void* out, const long long* in, int n);\n");
  const std::string kernel = R"src(#include "kernels.h"
__global__ void convert(double* out, const long long* in, int n) {
  const int i = threadIdx.x;
  if (i < n) out[i] = __ll2double_rn(in[i]);
}
void launch_convert(void* out, const long long* in, int n) { convert<<<1, n>>>((double*)out, in, n); }
)src";
  std::string broken = kernel;
  broken.replace(broken.find("const int i ="), 13, "const int i = ;");
  dir.write("csrc/convert.cu", kernel);
  dir.write("csrc/broken.cu", broken);
  dir.write("csrc/convert.cpp", R"src(#include "kernels.h"
void launch_on_host(void* out, long long x) { *(double*)out = __ll2double_rn(x); }
)src");
  const CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "csrc"});
  const json r = report(run);
  EXPECT_TRUE(has(diagnostic_kinds(r, "convert.cu"), "degraded")) << run.out;
  EXPECT_FALSE(has(diagnostic_kinds(r, "convert.cu"), "compile-error")) << run.out;
  EXPECT_TRUE(has(diagnostic_kinds(r, "broken.cu"), "compile-error")) << run.out;
  EXPECT_TRUE(has(diagnostic_kinds(r, "convert.cpp"), "compile-error")) << run.out;
}

// A binding file casts data_ptr() to the CUDA element types (`(__half*)`, `(half2*)`) with
// torch and the project's kernel header missing: degraded mode reads the casts as casts both
// where no CUDA toolkit is installed (the built-in declarations) and where one is (a stand-in
// toolkit on the include path here, whose own headers then declare `__half`: the built-in
// ones would clash with them). Before, the toolkit's presence turned each cast into a
// "syntax error" (DeepSpeed's quantization, random_ltd and spatial bindings).
TEST(CppFrontEnd, ACastToACudaTypeIsACastWithOrWithoutACudaToolkit) {
  const std::string binding = R"src(#include <torch/extension.h>
#include "kernels.h"
class DecodeContext {
 public:
  DecodeContext(int64_t heads, int64_t max_positions, int64_t head_dim) {
    k_cache_ = torch::empty({max_positions, heads, head_dim}, torch::kHalf);
  }
  void append(const torch::Tensor& k, int64_t position) {
    launch_append((__half*)k_cache_.data_ptr(), (const __half*)k.data_ptr(), (int)position,
                  at::cuda::getCurrentCUDAStream());
    launch_rotary((half2*)k_cache_.data_ptr(), (int)position);
  }
 private:
  torch::Tensor k_cache_;
};
)src";
  for (const bool toolkit : {false, true}) {
    TempDir dir;
    dir.write("csrc/decoding/pt_binding.cpp", binding);
    if (toolkit) {
      dir.write("kvlint.toml", "[cpp]\ninclude-dirs = [\"toolkit/include\"]\n");
      dir.write("toolkit/include/cuda_runtime_api.h",
                "#pragma once\ntypedef struct CUstream_st* cudaStream_t;\n");
      dir.write("toolkit/include/cuda_fp16.h",
                "#pragma once\nstruct __half { unsigned short __x; };\nstruct __half2 { __half x, y; };\n"
                "typedef __half half;\ntypedef __half2 half2;\n");
      for (const char* name : {"cuda_bf16.h", "cuda_fp8.h", "cublas_v2.h", "cublasLt.h"})
        dir.write(std::string("toolkit/include/") + name, "#pragma once\n");
    } else {
      dir.write("kvlint.toml", "");
    }
    const CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "csrc"});
    const json r = report(run);
    EXPECT_TRUE(has(diagnostic_kinds(r, "pt_binding.cpp"), "degraded")) << toolkit << run.out;
    EXPECT_FALSE(has(diagnostic_kinds(r, "pt_binding.cpp"), "compile-error")) << toolkit << run.out;
    EXPECT_EQ(codes_at(r, "csrc/decoding/pt_binding.cpp"), std::vector<std::string>{"KV101"})
        << toolkit << run.out;
  }
}

TEST(CppFrontEnd, AMixedTreeIsOneRunAndOneReport) {
  TempDir dir;
  dir.write("model.py",
            "from transformers import DynamicCache\nimport torch.nn as nn\n"
            "class M(nn.Module):\n    def f(self):\n        self.cache = DynamicCache()\n");
  dir.write("decoder.cpp",
            "#include <torch/torch.h>\nstruct D : torch::nn::Module {\n"
            "  D() { v_cache_ = torch::empty({2, 8}); }\n  torch::Tensor v_cache_;\n};\n");
  json r = report(kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "."}));
  EXPECT_EQ(codes_in(r, "model.py"), std::vector<std::string>{"KV101"});
  EXPECT_EQ(codes_in(r, "decoder.cpp"), std::vector<std::string>{"KV101"});
}

// Each front end says which language its facts are in, and the findings of one mixed run are
// worded in each file's language.
TEST(CppFrontEnd, FactsSayTheLanguageAndFindingsSpeakIt) {
  TempDir dir;
  dir.write("model.py",
            "from transformers import DynamicCache\nimport torch.nn as nn\n"
            "class M(nn.Module):\n    def __init__(self):\n        self.cache = DynamicCache()\n");
  dir.write("decoder.cpp",
            "#include <torch/torch.h>\nstruct D : torch::nn::Module {\n"
            "  D() { v_cache_ = torch::empty({2, 8}); }\n  torch::Tensor v_cache_;\n};\n");
  EXPECT_EQ(report(kvlint(dir.path(), {"facts", "model.py"})).value("language", ""), "python");
  EXPECT_EQ(report(kvlint(dir.path(), {"facts", "decoder.cpp"})).value("language", ""), "cpp");
  json r = report(kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "."}));
  std::string python_message, cpp_message;
  for (const auto& f : r.value("findings", json::array()))
    (f.value("path", "").ends_with(".py") ? python_message : cpp_message) = f.value("message", "");
  EXPECT_NE(python_message.find("in `__init__` (line 5) and keeps one as `self.cache`"), std::string::npos)
      << python_message;
  EXPECT_NE(cpp_message.find("in the constructor (line 3) and keeps one as `v_cache_`"), std::string::npos)
      << cpp_message;
  EXPECT_NE(cpp_message.find("declare it in `D::model_local_kv_specs()`"), std::string::npos) << cpp_message;
}

TEST(CppFrontEnd, TheCacheIsKeyedOnTheCompileCommand) {
  TempDir dir;
  dir.write("third_party/torch/torch.h", kTensorHeader);
  dir.write("src/decoder.cpp", kModelSource);
  dir.write("compile_commands.json", compile_database(dir.path(), "src/decoder.cpp"));
  auto stats = [&] { return kvlint(dir.path(), {"check", "-v", "src"}).err; };
  EXPECT_NE(stats().find("files_parsed=1"), std::string::npos);
  EXPECT_NE(stats().find("files_cached=1"), std::string::npos);
  // Other flags are another analysis, even for the same bytes.
  std::string db = compile_database(dir.path(), "src/decoder.cpp");
  db.replace(db.find("-std=c++17"), 10, "-std=c++20");
  dir.write("compile_commands.json", db);
  EXPECT_NE(stats().find("files_parsed=1"), std::string::npos);
}

TEST(CppFrontEnd, AHugeGeneratedTranslationUnitIsAnalysed) {
  TempDir dir;
  std::string source = "#include <torch/torch.h>\n";
  for (int i = 0; i < 4000; ++i)
    source += "struct Layer" + std::to_string(i) + " { int forward(int x) { return x + " + std::to_string(i) +
              "; } };\n";
  source +=
      "struct Holder : torch::nn::Module {\n  Holder() { key_cache_ = torch::zeros({1}); }\n"
      "  torch::Tensor key_cache_;\n};\n";
  dir.write("generated.cpp", source);
  json r = report(kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "generated.cpp"}));
  EXPECT_EQ(codes_in(r, "generated.cpp"), std::vector<std::string>{"KV101"});
}

// Only the main file's declarations are walked (not the headers'): also those inside a
// namespace that one header opens and another closes.
TEST(CppFrontEnd, DeclarationsInsideANamespaceOpenedByAHeaderAreWalked) {
  TempDir dir;
  dir.write("begin_namespace.h", "namespace models {\n");
  dir.write("end_namespace.h", "}  // namespace models\n");
  dir.write("decoder.cpp",
            "#include <torch/torch.h>\n#include \"begin_namespace.h\"\n"
            "struct D : torch::nn::Module {\n  D() { v_cache_ = torch::empty({2, 8}); }\n"
            "  torch::Tensor v_cache_;\n};\n#include \"end_namespace.h\"\n");
  json r = report(kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "decoder.cpp"}));
  EXPECT_EQ(codes_in(r, "decoder.cpp"), std::vector<std::string>{"KV101"}) << r.dump();
}

// Static mode reads the compile command; it never runs it. Every program the database names
// or the driver could look up (the compiler, a shell, an assembler or linker beside -B, a
// compiler found on PATH) and every plugin it asks Clang to load would write a marker file.
// Clang 14's LibTooling loads no plugin on a syntax-only run; a Clang that did would fail here.
TEST(CppFrontEnd, CheckNeverRunsTheCompileCommandNorLoadsItsPlugins) {
  TempDir dir;
  TempDir markers;
  for (const char* tool : {"fake-cc", "clang++", "c++", "cc", "as", "ld", "sh"}) {
    const fs::path script =
        dir.write(std::string("bin/") + tool,
                  "#!/bin/sh\n: > " + quote((markers.path() / tool).string() + ".ran") + "\n");
    fs::permissions(script, fs::perms::owner_all);
  }
  dir.write("third_party/torch/torch.h", kTensorHeader);
  dir.write("src/decoder.cpp", kModelSource);
  dir.write("src/shell.cpp", kModelSource);
  const std::string bin = (dir.path() / "bin").string();
  const std::string plugin = KVLINT_TEST_MARKER_PLUGIN;
  json db = json::array();
  db.push_back(
      {{"directory", dir.path().string()},
       {"file", "src/decoder.cpp"},
       {"arguments",
        {bin + "/fake-cc", "-std=c++17", "-Ithird_party", "-B", bin, "-fplugin=" + plugin, "-Xclang", "-load",
         "-Xclang", plugin, "-fpass-plugin=" + plugin, "-c", "src/decoder.cpp", "-o", "decoder.o"}}});
  db.push_back({{"directory", dir.path().string()},
                {"file", "src/shell.cpp"},
                {"command", "sh -c 'touch " + (markers.path() / "shell-command.ran").string() +
                                "' && clang++ -std=c++17 -c src/shell.cpp"}});
  dir.write("compile_commands.json", db.dump(2));

  const std::string env =
      "env PATH=" + quote(bin + ":" + std::string(std::getenv("PATH") ? std::getenv("PATH") : "")) +
      " KVLINT_TEST_MARKER_DIR=" + quote(markers.path().string());
  CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "-j", "2", "src"}, env);
  json r = report(run);
  // The file was analysed under its database entry (the plugin flags left out): with full
  // types (its -I finds the stand-in header), so no degraded-mode or compile-error note.
  EXPECT_EQ(codes_in(r, "decoder.cpp"), std::vector<std::string>{"KV101"}) << run.out << run.err;
  EXPECT_TRUE(diagnostic_kinds(r, "decoder.cpp").empty()) << run.out;
  // The marker library does write when loaded (else the check below could not fail).
  ASSERT_EQ(std::system((env + " " + quote(KVLINT_PYTHON) + " -c " +
                         quote("import ctypes; ctypes.CDLL(" + json(plugin).dump() + ")"))
                            .c_str()),
            0);
  std::vector<std::string> ran;
  for (const auto& entry : fs::directory_iterator(markers.path())) ran.push_back(entry.path().filename());
  EXPECT_EQ(ran, std::vector<std::string>{"plugin.ran"});
}

// The files created, changed or removed between two listings.
std::vector<std::string> changed_files(const std::map<std::string, std::string>& before,
                                       const std::map<std::string, std::string>& after) {
  std::vector<std::string> out;
  for (const auto& [name, bytes] : after)
    if (auto it = before.find(name); it == before.end() || it->second != bytes) out.push_back(name);
  for (const auto& [name, bytes] : before)
    if (!after.contains(name)) out.push_back(name + " (removed)");
  return out;
}

// The options that write files, each in the forms Clang reads them: a repository's compile
// database or its `[cpp] fallback-flags` must not make static mode write anywhere.
std::vector<std::vector<std::string>> output_producing_options(const fs::path& victim, const fs::path& dir) {
  const std::string v = victim.string();
  const std::string d = dir.string();
  return {
      {"-Wp,-MD," + v},
      {"-Wp,-MMD," + v},
      {"-Wp,-MD," + v + ",-MT,x"},
      {"-MD", "-MF", v},
      {"-MMD", "-MF" + v},
      {"-M", "-MF", v},
      {"-MM", "-MF", v},
      {"-MD"},
      {"-MJ", v},
      {"--serialize-diagnostics", v},
      {"-Xclang", "-dependency-file", "-Xclang", v, "-Xclang", "-MT", "-Xclang", "x"},
      {"-Xclang", "-header-include-file", "-Xclang", v, "-H"},
      {"-Xclang", "-stats-file=" + v},
      {"-Xclang", "-emit-pch", "-o", v},
      {"-Xpreprocessor", "-MD", "-Xpreprocessor", "-MF", "-Xpreprocessor", v},
      {"-o", v},
      {"-save-temps=cwd"},
      {"-save-temps=obj", "-o", v},
      {"-ftime-trace", "-o", v},
      {"-fmodules", "-fmodules-cache-path=" + d},
      {"-fcrash-diagnostics-dir=" + d},
      {"--analyze", "-o", v},
      {"-mllvm", "-info-output-file=" + v, "-mllvm", "-stats"},
      {"-fproc-stat-report=" + v},
      {"-emit-ast", "-o", v},
      {"-E", "-o", v},
      {"-S", "-o", v},
      {"-fsave-optimization-record", "-foptimization-record-file=" + v},
      {"-Xarch_x86_64", "-MD"},
      {"--driver-mode=cl", "/Fo" + v, "/Fp" + v},
      {"@" + v},
  };
}

// A hostile repository's compile database and configuration name every output-producing form;
// nothing outside kvlint's cache directory is created or changed, and --verbose says what was
// left out. The header's odd name would turn a written dependency list into a shell command.
TEST(CppFrontEnd, CheckNeverWritesOutsideTheCacheWhateverTheCommandAsks) {
  TempDir repo;
  TempDir outside;
  const fs::path victim = outside.write("victim", "precious\n");
  const fs::path victim_dir = outside.path() / "dir";
  fs::create_directories(victim_dir);
  repo.write("third_party/torch/torch.h", kTensorHeader);
  repo.write("third_party/x;id>PROOF;.h", "#pragma once\n");
  repo.write("kvlint.toml", "");
  const std::string source = std::string("#include \"x;id>PROOF;.h\"\n") + kModelSource;
  const auto forms = output_producing_options(victim, victim_dir);
  json db = json::array();
  for (std::size_t i = 0; i < forms.size(); ++i) {
    const std::string file = "src/m" + std::to_string(i) + ".cpp";
    repo.write(file, source);
    json arguments = {"clang++", "-std=c++17", "-Ithird_party"};
    for (const auto& a : forms[i]) arguments.push_back(a);
    arguments.push_back("-c");
    arguments.push_back(file);
    db.push_back({{"directory", repo.path().string()}, {"file", file}, {"arguments", arguments}});
  }
  repo.write("compile_commands.json", db.dump(2));
  const fs::path cache = repo.path() / ".kvlint_cache";
  const auto repo_before = files_under(repo.path(), cache);
  const auto outside_before = files_under(outside.path());

  CliRun run = kvlint(repo.path(), {"check", "--verbose", "--format", "json", "-j", "2", "src"});
  json r = report(run);
  // Every file was still read with its include path (full types: no degraded note).
  for (std::size_t i = 0; i < forms.size(); ++i) {
    const std::string file = "m" + std::to_string(i) + ".cpp";
    EXPECT_EQ(codes_in(r, file), std::vector<std::string>{"KV101"}) << forms[i].front() << "\n" << run.err;
  }
  EXPECT_EQ(changed_files(repo_before, files_under(repo.path(), cache)), std::vector<std::string>{})
      << run.err;
  EXPECT_EQ(changed_files(outside_before, files_under(outside.path())), std::vector<std::string>{})
      << run.err;
  EXPECT_NE(run.err.find("left out 3 compile options that do not change how it is read: -MD -MF " +
                         victim.string()),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("-Wp,-MD," + victim.string()), std::string::npos) << run.err;

  // The same forms as the configuration's fallback flags (no database).
  fs::remove(repo.path() / "compile_commands.json");
  for (std::size_t i = 0; i < forms.size(); ++i) {
    json flags = {"-std=c++17", "-I" + (repo.path() / "third_party").string()};
    for (const auto& a : forms[i]) flags.push_back(a);
    repo.write("kvlint.toml", "[cpp]\nfallback-flags = " + flags.dump() + "\n");
    const auto before = files_under(repo.path(), cache);
    CliRun fallback = kvlint(repo.path(), {"check", "--no-cache", "--format", "json", "src/m0.cpp"});
    EXPECT_EQ(codes_in(report(fallback), "m0.cpp"), std::vector<std::string>{"KV101"})
        << forms[i].front() << "\n"
        << fallback.err;
    EXPECT_EQ(changed_files(before, files_under(repo.path(), cache)), std::vector<std::string>{})
        << forms[i].front();
    EXPECT_EQ(changed_files(outside_before, files_under(outside.path())), std::vector<std::string>{})
        << forms[i].front();
  }
}

TEST(CppFrontEnd, WithoutTheModuleOneDiagnosticNamesThePackageAndPythonIsUnaffected) {
  TempDir dir;
  dir.write("model.py",
            "from transformers import DynamicCache\nimport torch.nn as nn\n"
            "class M(nn.Module):\n    def f(self):\n        self.cache = DynamicCache()\n");
  dir.write("a.cpp", "struct A { int k_cache_ = 0; };\n");
  dir.write("b.cpp", "struct B { int v_cache_ = 0; };\n");
  CliRun run = kvlint(dir.path(), {"check", "--no-cache", "--format", "json", "."},
                      "KVLINT_CPP_FRONTEND=" + quote((dir.path() / "missing.so").string()));
  json r = report(run);
  EXPECT_EQ(codes_in(r, "model.py"), std::vector<std::string>{"KV101"});
  int naming_package = 0;
  for (const auto& d : r.value("diagnostics", json::array()))
    if (d.value("message", "").find("libclang-cpp14") != std::string::npos) ++naming_package;
  EXPECT_EQ(naming_package, 1) << run.out;
  EXPECT_TRUE(has(diagnostic_kinds(r, "a.cpp"), "not-analysed"));
  EXPECT_TRUE(has(diagnostic_kinds(r, "b.cpp"), "not-analysed"));
  EXPECT_EQ(run.exit_code, 1);
}

}  // namespace
