#include "tools/kvlint/config/config.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/engine/temp_dir.hpp"

namespace kvlint {
namespace {

using kvlint::testing::TempDir;
using ::testing::HasSubstr;

std::string error_of(const std::filesystem::path& file) {
  try {
    load_config_file(file);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Config, LoadsEveryKeyFromPyproject) {
  TempDir dir;
  auto file = dir.write("pyproject.toml", R"(
[project]
name = "x"

[tool.kvlint]
select = ["KV1", "KV2"]
ignore = ["KV104"]
extend-select = ["KV403"]
exclude = ["build/"]
extend-exclude = ["gen_*.py"]
fail-on = "error"
respect-gitignore = false
extra-cache-classes = ["MyCache"]

[tool.kvlint.per-file-ignores]
"tests/**" = ["KV101", "KV2"]

[tool.kvlint.protocol]
declaration-method = "kv_specs"
spec-constructors = ["make_spec"]
field-aliases = { capacity = "physical_capacity_positions" }
module-bases = ["mylib.Module"]

[tool.kvlint.runtime]
interpreter = "/usr/bin/python3"
tolerance = 0.1

[tool.kvlint.runtime.models.tts]
factory = "pkg.tts:build"
owners = ["Decoder"]
concurrency = [1, 8]
steps = 3
timeout = 30
env = { CUDA_VISIBLE_DEVICES = "0" }
python-path = ["src"]
)");
  const Config c = load_config_file(file);
  EXPECT_EQ(c.root, dir.path());
  EXPECT_EQ(c.select, (std::vector<std::string>{"KV1", "KV2"}));
  EXPECT_EQ(c.ignore, (std::vector<std::string>{"KV104"}));
  EXPECT_EQ(c.extend_select, (std::vector<std::string>{"KV403"}));
  EXPECT_EQ(c.exclude, (std::vector<std::string>{"build/"}));
  EXPECT_EQ(c.extend_exclude, (std::vector<std::string>{"gen_*.py"}));
  EXPECT_EQ(c.fail_on, Severity::Error);
  EXPECT_FALSE(c.respect_gitignore);
  EXPECT_EQ(c.vocabulary.cache_classes.back(), "MyCache");
  EXPECT_EQ(c.per_file_ignores.at("tests/**"), (std::vector<std::string>{"KV101", "KV2"}));
  EXPECT_EQ(c.vocabulary.declaration_method, "kv_specs");
  EXPECT_EQ(c.vocabulary.spec_constructors, (std::vector<std::string>{"make_spec"}));
  EXPECT_EQ(c.vocabulary.field_aliases.back(),
            (std::pair<std::string, std::string>{"capacity", "physical_capacity_positions"}));
  EXPECT_EQ(c.vocabulary.module_bases.back(), "mylib.Module");
  EXPECT_EQ(c.runtime.interpreter, "/usr/bin/python3");
  EXPECT_DOUBLE_EQ(c.runtime.tolerance, 0.1);
  ASSERT_EQ(c.runtime.models.size(), 1u);
  const RuntimeModel& m = c.runtime.models[0];
  EXPECT_EQ(m.name, "tts");
  EXPECT_EQ(m.factory, "pkg.tts:build");
  EXPECT_EQ(m.owners, (std::vector<std::string>{"Decoder"}));
  EXPECT_EQ(m.concurrency, (std::vector<int>{1, 8}));
  EXPECT_EQ(m.steps, 3);
  EXPECT_DOUBLE_EQ(m.timeout_s, 30);
  EXPECT_EQ(m.env.at("CUDA_VISIBLE_DEVICES"), "0");
  EXPECT_EQ(m.python_path, (std::vector<std::string>{"src"}));
}

TEST(Config, KvlintTomlUsesTheTopLevel) {
  TempDir dir;
  auto file = dir.write("kvlint.toml", "select = [\"KV5\"]\n[protocol]\ncollector = \"gather\"\n");
  const Config c = load_config_file(file);
  EXPECT_EQ(c.select, (std::vector<std::string>{"KV5"}));
  EXPECT_EQ(c.vocabulary.collector, "gather");
}

struct BadValue {
  const char* toml;
  const char* expected;  // a substring of the message
};

class ConfigTypeError : public ::testing::TestWithParam<BadValue> {};

TEST_P(ConfigTypeError, NamesFileKeyAndExpectedType) {
  TempDir dir;
  auto file = dir.write("pyproject.toml", std::string("[tool.kvlint]\n") + GetParam().toml + "\n");
  const std::string message = error_of(file);
  EXPECT_THAT(message, HasSubstr("pyproject.toml: "));
  EXPECT_THAT(message, HasSubstr(GetParam().expected));
}

INSTANTIATE_TEST_SUITE_P(
    EveryKey, ConfigTypeError,
    ::testing::Values(
        BadValue{
            "fail-on = 3",
            R"([tool.kvlint] key 'fail-on' must be one of "error", "warning", "info" (a string), got integer 3)"},
        BadValue{"fail-on = \"fatal\"",
                 R"(key 'fail-on' must be one of "error", "warning", "info" (a string), got string "fatal")"},
        BadValue{"select = \"KV1\"", R"(key 'select' must be an array of strings, got string "KV1")"},
        BadValue{"select = [1]", "key 'select' must be an array of strings, got integer 1 at index 0"},
        BadValue{"select = [\"KV999\"]", "key 'select' names unknown rule code or prefix 'KV999'"},
        BadValue{"ignore = [\"XY\"]", "key 'ignore' names unknown rule code or prefix 'XY'"},
        BadValue{"extend-select = true", "key 'extend-select' must be an array of strings, got boolean true"},
        BadValue{"exclude = {}", "key 'exclude' must be an array of strings, got a table"},
        BadValue{"extend-exclude = 2.5", "key 'extend-exclude' must be an array of strings, got float 2.5"},
        BadValue{"respect-gitignore = \"yes\"",
                 R"(key 'respect-gitignore' must be a boolean, got string "yes")"},
        BadValue{"extra-cache-classes = [true]", "key 'extra-cache-classes' must be an array of strings"},
        BadValue{"per-file-ignores = []", "key 'per-file-ignores' must be a table, got an array"},
        BadValue{"per-file-ignores = { \"a.py\" = \"KV1\" }",
                 R"([tool.kvlint.per-file-ignores] key 'a.py' must be an array of strings)"},
        BadValue{"protocol = 1", "key 'protocol' must be a table, got integer 1"},
        BadValue{"[tool.kvlint.protocol]\ncollector = 1",
                 "[tool.kvlint.protocol] key 'collector' must be a string"},
        BadValue{"[tool.kvlint.protocol]\nfield-aliases = { cap = \"nonsense\" }", "must name a spec field"},
        BadValue{"[tool.kvlint.protocol]\nrow-fixed = \"\"", "key 'row-fixed' must be a non-empty string"},
        BadValue{"[tool.kvlint.runtime]\ntolerance = \"x\"",
                 "[tool.kvlint.runtime] key 'tolerance' must be a number"},
        BadValue{
            "[tool.kvlint.runtime.models.a]\nconcurrency = [0]",
            "[tool.kvlint.runtime.models.a] key 'concurrency' must be an array of positive integers, got "
            "integer 0 at index 0"},
        BadValue{"[tool.kvlint.runtime.models.a]\nsteps = 1.5",
                 "key 'steps' must be a positive integer, got float"},
        BadValue{"[tool.kvlint.runtime.models.a]\ntimeout = -1", "key 'timeout' must be a positive number"},
        BadValue{"[tool.kvlint.runtime.models.a]\ndevice = \"tpu\"", "key 'device' must be one of"},
        BadValue{"[tool.kvlint.runtime.models.a]\nenv = { A = 1 }",
                 "[tool.kvlint.runtime.models.a.env] key 'A' must be a string"},
        BadValue{"[tool.kvlint.runtime.models]\na = 3", "key 'a' must be a table, got integer 3"}));

// Numbers that would overflow the host's clock (an immediate "timed out") or
// make every comparison false (nan) are refused by name, not run with.
TEST(Config, RuntimeNumbersOutsideTheirRangeAreRejectedByKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[tool.kvlint.runtime.models.a]\ntimeout = inf", "key 'timeout' must be a positive number of seconds"},
      {"[tool.kvlint.runtime.models.a]\ntimeout = 1e300", "key 'timeout' must be a positive number"},
      {"[tool.kvlint.runtime.models.a]\ntimeout = 1e10", "key 'timeout' must be a positive number"},
      {"[tool.kvlint.runtime.models.a]\ntimeout = nan", "key 'timeout' must be a positive number"},
      {"[tool.kvlint.runtime.models.a]\ntimeout = 604801", "at most 604800"},
      {"[tool.kvlint.runtime]\ntolerance = nan",
       "[tool.kvlint.runtime] key 'tolerance' must be a number in [0, 1], got float nan"},
      {"[tool.kvlint.runtime]\ntolerance = inf", "key 'tolerance' must be a number in [0, 1]"},
      {"[tool.kvlint.runtime]\ntolerance = -0.1", "key 'tolerance' must be a number in [0, 1]"},
  };
  for (const auto& [toml, expected] : cases) {
    TempDir dir;
    auto file = dir.write("pyproject.toml", "[tool.kvlint]\n" + toml + "\n");
    EXPECT_THAT(error_of(file), HasSubstr(expected)) << toml;
  }
  TempDir dir;
  auto file =
      dir.write("pyproject.toml",
                "[tool.kvlint.runtime]\ntolerance = 1\n[tool.kvlint.runtime.models.a]\ntimeout = 604800\n");
  Config c = load_config_file(file);
  EXPECT_DOUBLE_EQ(c.runtime.tolerance, 1);
  EXPECT_DOUBLE_EQ(c.runtime.models.at(0).timeout_s, 604800);
}

// The deployment setting a verdict needs (KV303, a refuted KV302) is the entry's, not a path's name.
TEST(Config, EnforceEagerMarksEveryPathOrTheNamedOnes) {
  TempDir dir;
  auto file = dir.write("kvlint.toml",
                        "[runtime.models.all]\npaths = [\"icl\", \"xvec\"]\nenforce-eager = true\n"
                        "[runtime.models.some]\npaths = [\"icl\", \"graph\"]\nenforce-eager = [\"icl\"]\n"
                        "[runtime.models.none]\npaths = [\"eager\"]\n");
  const Config c = load_config_file(file);
  ASSERT_EQ(c.runtime.models.size(), 3u);
  auto paths_of = [&c](std::string_view name) {
    for (const auto& m : c.runtime.models)
      if (m.name == name) return m.enforce_eager_paths;
    ADD_FAILURE() << "no model " << name;
    return std::vector<std::string>{};
  };
  EXPECT_EQ(paths_of("all"), (std::vector<std::string>{"icl", "xvec"}));
  EXPECT_EQ(paths_of("some"), (std::vector<std::string>{"icl"}));
  EXPECT_TRUE(paths_of("none").empty());
  TempDir bad;
  EXPECT_THAT(error_of(bad.write("kvlint.toml",
                                 "[runtime.models.a]\npaths = [\"icl\"]\nenforce-eager = [\"eager\"]\n")),
              HasSubstr("key 'enforce-eager' names \"eager\", which is not one of the entry's paths"));
  EXPECT_THAT(
      error_of(bad.write("kvlint.toml", "[runtime.models.a]\npaths = [\"icl\"]\nenforce-eager = 1\n")),
      HasSubstr("key 'enforce-eager' must be a boolean or an array of path names"));
}

TEST(Config, UnknownKeySuggestsTheClosestKnownKey) {
  TempDir dir;
  EXPECT_THAT(error_of(dir.write("kvlint.toml", "selec = [\"KV\"]\n")),
              ::testing::EndsWith(
                  "/kvlint.toml: unknown key 'selec' in the top-level table (did you mean 'select'?)"));
  EXPECT_THAT(error_of(dir.write("kvlint.toml", "fail_on = \"error\"\n")),
              HasSubstr("unknown key 'fail_on' in the top-level table (did you mean 'fail-on'?)"));
  EXPECT_THAT(
      error_of(dir.write("kvlint.toml", "zzzzzzzz = 1\n")),
      ::testing::AllOf(HasSubstr("unknown key 'zzzzzzzz'"), ::testing::Not(HasSubstr("did you mean"))));
  EXPECT_THAT(error_of(dir.write("kvlint.toml", "[runtime.models.m]\nfactry = \"a:b\"\n")),
              HasSubstr("unknown key 'factry' in [runtime.models.m] (did you mean 'factory'?)"));
}

TEST(Config, ErrorsNameTheTableAsEachKindOfFileSpellsIt) {
  TempDir dir;
  const std::string in_kvlint_toml = error_of(dir.write("kvlint.toml", "fail-on = 3\n"));
  EXPECT_THAT(in_kvlint_toml, HasSubstr("kvlint.toml: top-level key 'fail-on' must be one of"));
  EXPECT_THAT(in_kvlint_toml, ::testing::Not(HasSubstr("tool.kvlint")));
  EXPECT_THAT(error_of(dir.write("kvlint.toml", "exclude = [\"#x\"]\n")),
              HasSubstr("top-level key 'exclude' holds an empty or comment-only glob"));
  EXPECT_THAT(error_of(dir.write("kvlint.toml", "[protocol]\nfixed-call = 1\n")),
              HasSubstr("[protocol] key 'fixed-call' must be a string"));
  EXPECT_THAT(error_of(dir.write("pyproject.toml", "[tool.kvlint]\nfail-on = 3\n")),
              HasSubstr("pyproject.toml: [tool.kvlint] key 'fail-on' must be one of"));
}

TEST(Config, AnEmptySelectionIsAConfigurationError) {
  TempDir dir;
  Config from_file = load_config_file(dir.write("kvlint.toml", "select = []\n"));
  try {
    ConfigOverrides{}.apply(from_file);
    ADD_FAILURE() << "select = [] was accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("kvlint.toml: no rule is selected"));
  }
  // The command line may select what the file leaves out.
  ConfigOverrides select_some;
  select_some.select = std::vector<std::string>{"KV1"};
  Config again = load_config_file(dir.path() / "kvlint.toml");
  EXPECT_NO_THROW(select_some.apply(again));
  EXPECT_EQ(again.select, std::vector<std::string>{"KV1"});
  // Everything ignored is as empty as nothing selected.
  ConfigOverrides ignore_all;
  ignore_all.ignore = std::vector<std::string>{"KV"};
  Config defaults;
  EXPECT_THROW(ignore_all.apply(defaults), ConfigError);
  ConfigOverrides select_nothing;
  select_nothing.select = std::vector<std::string>{};
  Config more_defaults;
  EXPECT_THROW(select_nothing.apply(more_defaults), ConfigError);
  // An extend-select keeps a selection alive.
  Config extended = load_config_file(dir.write("kvlint.toml", "select = []\nextend-select = [\"KV2\"]\n"));
  EXPECT_NO_THROW(ConfigOverrides{}.apply(extended));
}

TEST(Config, PerFileIgnoresWithALeadingDotSlashMatchFromTheRoot) {
  TempDir dir;
  const Config c = load_config_file(
      dir.write("kvlint.toml", "[per-file-ignores]\n\"./tests/**\" = [\"KV1\"]\n\"./top.py\" = [\"KV2\"]\n"));
  EXPECT_TRUE(c.is_ignored_for("KV101", dir.path() / "tests/unit/a.py"));
  EXPECT_TRUE(c.is_ignored_for("KV201", dir.path() / "top.py"));
  EXPECT_FALSE(c.is_ignored_for("KV201", dir.path() / "pkg/top.py"));
}

TEST(Config, SyntaxErrorGivesFileLineAndColumn) {
  TempDir dir;
  const std::string message = error_of(dir.write("kvlint.toml", "select = [\"KV\"]\nfail-on = \n"));
  EXPECT_THAT(message, ::testing::ContainsRegex(R"(kvlint\.toml:2:[0-9]+: TOML syntax error: )"));
}

TEST(Config, DiscoveryWalksUpwardAndPrefersKvlintToml) {
  TempDir dir;
  dir.write("pyproject.toml", "[tool.kvlint]\nselect = [\"KV1\"]\n");
  dir.write("a/b/c/x.py", "");
  EXPECT_EQ(discover_config(dir.path() / "a/b/c/x.py").select, (std::vector<std::string>{"KV1"}));
  EXPECT_EQ(discover_config(dir.path() / "a/b").root, dir.path());
  // kvlint.toml wins over pyproject.toml in the same directory.
  dir.write("a/pyproject.toml", "[tool.kvlint]\nselect = [\"KV2\"]\n");
  dir.write("a/kvlint.toml", "select = [\"KV3\"]\n");
  EXPECT_EQ(discover_config(dir.path() / "a/b/c").select, (std::vector<std::string>{"KV3"}));
  // A pyproject.toml without [tool.kvlint] is skipped.
  dir.write("a/b/pyproject.toml", "[project]\nname = \"x\"\n");
  EXPECT_EQ(discover_config(dir.path() / "a/b/c").root, dir.path() / "a");
}

TEST(Config, SelectIgnoreLongestPrefixWins) {
  Config c;
  c.select = {"KV1", "KV201"};
  c.ignore = {"KV10", "KV2"};
  EXPECT_FALSE(c.is_selected("KV101"));  // KV10 (4) beats KV1 (3)
  EXPECT_FALSE(c.is_selected("KV202"));  // only the ignore matches... not selected at all
  EXPECT_TRUE(c.is_selected("KV201"));   // KV201 (5) beats KV2 (3)
  EXPECT_FALSE(c.is_selected("KV301"));  // not selected
  c.ignore = {"KV1"};
  EXPECT_FALSE(c.is_selected("KV105"));  // a tie goes to ignore
  c.extend_select = {"KV105"};
  EXPECT_TRUE(c.is_selected("KV105"));  // the longer extend-select wins
  Config defaults;
  EXPECT_TRUE(defaults.is_selected("KV101"));
  EXPECT_TRUE(defaults.is_selected("KV903"));
}

TEST(Config, PerFileIgnoresMatchGlobsRelativeToRoot) {
  Config c;
  c.root = "/proj";
  c.per_file_ignores["tests/**"] = {"KV1"};
  c.per_file_ignores["legacy_*.py"] = {"KV202"};
  EXPECT_TRUE(c.is_ignored_for("KV101", "/proj/tests/unit/a.py"));
  EXPECT_TRUE(c.is_ignored_for("KV104", "tests/a.py"));
  EXPECT_FALSE(c.is_ignored_for("KV201", "/proj/tests/a.py"));
  EXPECT_FALSE(c.is_ignored_for("KV101", "/proj/src/tests.py"));
  EXPECT_TRUE(c.is_ignored_for("KV202", "/proj/deep/down/legacy_x.py"));  // no slash: any depth
  EXPECT_FALSE(c.is_ignored_for("KV203", "/proj/deep/down/legacy_x.py"));
}

TEST(Config, FingerprintChangesWithAnalysisInputs) {
  Config a, b;
  EXPECT_EQ(a.fingerprint(), b.fingerprint());
  b.vocabulary.cache_classes.push_back("MyCache");
  EXPECT_NE(a.fingerprint(), b.fingerprint());
  Config c;
  c.select = {"KV1"};
  EXPECT_NE(a.fingerprint(), c.fingerprint());
  Config d;
  d.runtime.tolerance = 0.5;  // runtime settings do not change analysis
  EXPECT_EQ(a.fingerprint(), d.fingerprint());
}

}  // namespace
}  // namespace kvlint
