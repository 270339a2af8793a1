// C++ model boot entries: `plugin` and `config` in the configuration, their validation, and the
// kvlint-model-host command line the runner starts for them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/engine/temp_dir.hpp"
#include "tools/kvlint/config/config.hpp"
#include "tools/kvlint/confirm/findings_input.hpp"
#include "tools/kvlint/confirm/runner.hpp"

namespace kvlint::confirm {
namespace {

using kvlint::testing::TempDir;
using ::testing::HasSubstr;

constexpr const char* kPluginEntry = R"([runtime.models.talker]
plugin = "plugins/libtalker.so"
owners = ["CppTalker"]
paths = ["generate"]
concurrency = [1, 4]
steps = 3
config = { declared_positions = 1024, mode = "serialized", fast = true, scale = 0.5 }
)";

TEST(PluginEntry, ConfigReadsPluginAndItsConfigAsStrings) {
  TempDir dir;
  const Config config = load_config_file(dir.write("kvlint.toml", kPluginEntry));
  const RuntimeModel& model = config.runtime.models.at(0);
  EXPECT_EQ(model.plugin, "plugins/libtalker.so");
  EXPECT_TRUE(model.factory.empty());
  EXPECT_EQ(model.plugin_config,
            (std::map<std::string, std::string>{
                {"declared_positions", "1024"}, {"fast", "true"}, {"mode", "serialized"}, {"scale", "0.5"}}));
  EXPECT_NO_THROW(validate_entry(model));
}

TEST(PluginEntry, HostCommandLineCarriesTheEntry) {
  TempDir dir;
  const Config config = load_config_file(dir.write("kvlint.toml", kPluginEntry));
  RunSettings settings;
  settings.model_host = "/opt/kvlint-model-host";
  settings.device_override = "cpu";
  const auto argv = model_host_argv(config.runtime.models.at(0), {"CppTalker"}, config, settings);
  const std::vector<std::string> expected{"/opt/kvlint-model-host",
                                          "--name",
                                          "talker",
                                          "--plugin",
                                          (config.root / "plugins/libtalker.so").lexically_normal().string(),
                                          "--device",
                                          "cpu",
                                          "--steps",
                                          "3",
                                          "--path",
                                          "generate",
                                          "--concurrency",
                                          "1",
                                          "--concurrency",
                                          "4",
                                          "--owner",
                                          "CppTalker",
                                          "--config",
                                          "declared_positions=1024",
                                          "--config",
                                          "fast=true",
                                          "--config",
                                          "mode=serialized",
                                          "--config",
                                          "scale=0.5"};
  EXPECT_EQ(argv, expected);
}

TEST(PluginEntry, PluginAndFactoryExcludeEachOther) {
  TempDir dir;
  try {
    load_config_file(dir.write("kvlint.toml", "[runtime.models.a]\nplugin = \"x.so\"\nfactory = \"m:f\"\n"));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("has both plugin (a C++ model) and factory/driver (a Python model)"));
  }
  try {
    load_config_file(
        dir.write("kvlint.toml", "[runtime.models.a]\nplugin = \"x.so\"\nconfig = { a = [1] }\n"));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[runtime.models.a.config] key 'a' must be a string, number or boolean"));
  }
}

TEST(PluginEntry, PluginEntryMustNameItsOwners) {
  RuntimeModel model;
  model.name = "talker";
  model.plugin = "libtalker.so";
  try {
    validate_entry(model);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("a plugin entry must list its owner classes in owners"));
  }
  model.owners = {"CppTalker"};
  EXPECT_NO_THROW(validate_entry(model));
}

}  // namespace
}  // namespace kvlint::confirm
