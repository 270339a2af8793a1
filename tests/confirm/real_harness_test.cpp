// The host against the real harness (runtime/python/kvlint_runtime) and the
// fixture models in tests/runtime/fixtures. Skipped where the harness's
// interpreter (runtime/setup-env) is not installed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "support.hpp"
#include "tools/kvlint/confirm/confirm.hpp"
#include "tools/kvlint/confirm/runner.hpp"

namespace kvlint {
namespace {

using confirm::testing::read_file;
using confirm::testing::ScratchDir;
using confirm::testing::write_file;
using nlohmann::json;

TEST(RealHarness, ConfirmsAFixedRowClaimOnTheFixture) {
  const auto fixtures = std::filesystem::path(KVLINT_SOURCE_DIR) / "tests" / "runtime" / "fixtures";
  Config config = load_config_file(fixtures / "kvlint.toml");
  const RuntimeModel* entry = nullptr;
  for (const auto& m : config.runtime.models)
    if (m.name == "local_transformer_fixed_rows") entry = &m;
  ASSERT_NE(entry, nullptr);
  const std::string interpreter = confirm::resolve_interpreter(*entry, config);
  if (!std::filesystem::exists(interpreter))
    GTEST_SKIP() << interpreter << " not installed (runtime/setup-env)";
  ::unsetenv("KVLINT_RUNTIME_PYTHONPATH");  // found beside the test executable or from the source tree
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

}  // namespace
}  // namespace kvlint
