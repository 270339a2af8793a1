// The host against the real harness (runtime/python/kvlint_runtime) and the
// fixture models in tests/runtime/fixtures. Skipped where the harness's
// interpreter (runtime/setup-env) is not installed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "support.hpp"
#include "tools/kvlint/confirm/confirm.hpp"
#include "tools/kvlint/confirm/runner.hpp"

namespace kvlint {
namespace {

using confirm::testing::read_file;
using confirm::testing::ScratchDir;
using confirm::testing::write_file;
using nlohmann::json;

std::filesystem::path fixtures_dir() {
  return std::filesystem::path(KVLINT_SOURCE_DIR) / "tests" / "runtime" / "fixtures";
}

// The fixtures' configuration, or nullopt when its interpreter is not installed.
std::optional<Config> fixture_config() {
  Config config = load_config_file(fixtures_dir() / "kvlint.toml");
  if (config.runtime.models.empty()) return std::nullopt;
  if (!std::filesystem::exists(confirm::resolve_interpreter(config.runtime.models.front(), config)))
    return std::nullopt;
  ::unsetenv("KVLINT_RUNTIME_PYTHONPATH");  // found beside the test executable or from the source tree
  return config;
}

uint32_t line_of(const std::filesystem::path& file, std::string_view text) {
  std::istringstream in(read_file(file));
  std::string line;
  for (uint32_t number = 1; std::getline(in, line); ++number)
    if (line.find(text) != std::string::npos) return number;
  return 0;
}

TEST(RealHarness, ConfirmsAFixedRowClaimOnTheFixture) {
  const auto fixtures = fixtures_dir();
  auto loaded = fixture_config();
  if (!loaded) GTEST_SKIP() << "the fixtures' interpreter is not installed (runtime/setup-env)";
  Config config = *loaded;
  ASSERT_FALSE(confirm::locate_runtime_pythonpath().empty());

  ScratchDir dir;
  const auto findings = dir.path() / "findings.json";
  write_file(findings, json{{"schema", "kvlint-findings"},
                            {"version", 1},
                            {"findings",
                             {{{"code", "KV202"},
                               {"name", "unsupported-fixed-row-claim"},
                               {"severity", "error"},
                               {"path", (fixtures / "local_transformer" / "wrong.py").string()},
                               {"line", 18},
                               {"owner", "FixedRowLocalTransformer"},
                               {"message", "FIXED rows on a per-request cache"}}}}}
                           .dump());
  ConfirmOptions options;
  options.findings_file = findings;
  options.config = config;
  options.models = {"local_transformer_fixed_rows"};
  options.device_override = "cpu";
  options.format = "json";
  options.output = dir.path() / "confirm.json";
  EXPECT_EQ(run_confirm(options), 1);
  json report = json::parse(read_file(options.output));
  ASSERT_EQ(report["models"].size(), 1u);
  EXPECT_EQ(report["models"][0]["status"], "complete") << report["models"][0].dump(2);
  const auto& result = report["results"][0];
  EXPECT_EQ(result["verdict"], "confirmed") << result.dump(2);
  EXPECT_EQ(result["evidence"]["declared"]["rows_fixed"], 1);
  EXPECT_GT(result["evidence"]["observed"]["rows"].get<int>(), 1);
  EXPECT_EQ(report["runtime_findings"].size(), 0u) << report["runtime_findings"].dump(2);
}

TEST(RealHarness, FactoryMissingAConfigFieldIsInconclusiveBesideAModelThatCompletes) {
  auto loaded = fixture_config();
  if (!loaded) GTEST_SKIP() << "the fixtures' interpreter is not installed (runtime/setup-env)";
  const auto talker = fixtures_dir() / "talker" / "model.py";
  const auto project = fixtures_dir() / "project_cache" / "model.py";
  ScratchDir dir;
  const auto findings = dir.path() / "findings.json";
  auto kv101 = [](const std::filesystem::path& file, uint32_t line, const std::string& owner) {
    return json{{"code", "KV101"},
                {"name", "undeclared-cache"},
                {"severity", "error"},
                {"path", file.string()},
                {"line", line},
                {"owner", owner},
                {"message", "undeclared cache"}};
  };
  write_file(findings, json{{"schema", "kvlint-findings"},
                            {"version", 1},
                            {"findings",
                             {kv101(talker, line_of(talker, "cache = StaticCache("), "MingAudioGenerator"),
                              kv101(project, line_of(project, "cache = RingCache("), "Holder")}}}
                           .dump());
  ConfirmOptions options;
  options.findings_file = findings;
  options.config = *loaded;
  options.models = {"missing_field", "project_cache"};
  options.device_override = "cpu";
  options.output = dir.path() / "confirm.txt";
  EXPECT_EQ(run_confirm(options), 1);  // the project cache is confirmed
  const std::string text = read_file(options.output);
  EXPECT_NE(
      text.find("model missing_field: inconclusive: the factory raised AttributeError: 'Qwen2Config' object "
                "has no attribute 'talker_max_cache_len'"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("model project_cache: complete"), std::string::npos) << text;
  EXPECT_NE(text.find("INCONCLUSIVE KV101"), std::string::npos) << text;
  EXPECT_NE(text.find("CONFIRMED KV101"), std::string::npos) << text;

  options.format = "json";
  options.output = dir.path() / "confirm.json";
  run_confirm(options);
  json report = json::parse(read_file(options.output));
  ASSERT_EQ(report["models"].size(), 2u);
  EXPECT_EQ(report["models"][0]["status"], "inconclusive");
  EXPECT_TRUE(report["models"][0]["observed"]["caches"].empty());
  EXPECT_EQ(report["results"][0]["verdict"], "inconclusive") << report["results"][0].dump(2);
  EXPECT_EQ(report["models"][1]["status"], "complete");
  EXPECT_EQ(report["results"][1]["verdict"], "confirmed") << report["results"][1].dump(2);
}

}  // namespace
}  // namespace kvlint
