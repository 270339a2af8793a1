// Runs every rule's fixtures end to end (front end -> project -> rule ->
// suppressions) and compares findings with the inline expectations, in the
// style of clang-tidy's CHECK-MESSAGES:
//
//   self.cache = DynamicCache()  # expect: KV101
//
// rules/<code>_<name>/fixtures/fire_*.py or fire_*.cpp (or fire_*/ for a multi-file project)
// must produce at least one finding, silent_* none; each is run with only the
// rule's own code selected unless its first line says
// `# kvlint-fixture: select=KV101,KV102`. A kvlint.toml inside a fixture
// directory is honoured. C++ fixtures write the same comments with `//`
// (`// expect: KV101`); they run in degraded mode (no LibTorch headers here).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "rules/registry.hpp"
#include "tools/kvlint/engine/engine.hpp"

namespace fs = std::filesystem;

namespace {

struct Fixture {
  std::string rule_dir;  // "kv101_undeclared_cache"
  std::string code;      // "KV101"
  fs::path path;         // file or directory
  bool fires = false;
};

// Readable names in test listings instead of gtest's byte dump.
void PrintTo(const Fixture& fx, std::ostream* os) { *os << fx.path.generic_string(); }

// (path relative to the fixture, line, code)
using Expectation = std::tuple<std::string, uint32_t, std::string>;

std::vector<Fixture> discover() {
  std::vector<Fixture> out;
  fs::path rules = fs::path(KVLINT_SOURCE_DIR) / "rules";
  for (const auto& rule : fs::directory_iterator(rules)) {
    if (!rule.is_directory() || !fs::exists(rule.path() / "fixtures")) continue;
    std::string dir = rule.path().filename().string();
    std::string code = dir.substr(0, dir.find('_'));
    std::transform(code.begin(), code.end(), code.begin(), ::toupper);
    for (const auto& fx : fs::directory_iterator(rule.path() / "fixtures")) {
      std::string name = fx.path().filename().string();
      if (name.starts_with("fire_") || name.starts_with("silent_"))
        out.push_back({dir, code, fx.path(), name.starts_with("fire_")});
    }
  }
  std::sort(out.begin(), out.end(), [](const Fixture& a, const Fixture& b) { return a.path < b.path; });
  return out;
}

bool is_source(const fs::path& path) {
  static const std::set<std::string> kExtensions = {".py", ".cpp", ".cc", ".cxx", ".cu", ".h", ".hpp", ".cuh"};
  return kExtensions.count(path.extension().string()) > 0;
}

std::vector<fs::path> source_files(const fs::path& root) {
  std::vector<fs::path> files;
  if (fs::is_regular_file(root)) return {root};
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && is_source(e.path())) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string relative_to(const fs::path& file, const Fixture& fx) {
  fs::path base = fs::is_directory(fx.path) ? fx.path : fx.path.parent_path();
  return fs::relative(fs::weakly_canonical(file), fs::weakly_canonical(base)).generic_string();
}

std::set<Expectation> read_expectations(const Fixture& fx, std::vector<std::string>& select) {
  static const std::regex expect_re(R"((?:#|//)\s*expect:\s*([A-Z0-9, ]+))");
  static const std::regex select_re(R"((?:#|//)\s*kvlint-fixture:\s*select=([A-Z0-9,]+))");
  std::set<Expectation> out;
  for (const auto& file : source_files(fx.path)) {
    std::ifstream in(file);
    std::string line;
    uint32_t number = 0;
    while (std::getline(in, line)) {
      ++number;
      std::smatch m;
      if (std::regex_search(line, m, select_re)) {
        std::stringstream codes(m[1].str());
        for (std::string c; std::getline(codes, c, ',');) select.push_back(c);
      }
      if (!std::regex_search(line, m, expect_re)) continue;
      std::stringstream codes(m[1].str());
      for (std::string c; std::getline(codes, c, ',');) {
        c.erase(std::remove(c.begin(), c.end(), ' '), c.end());
        if (!c.empty()) out.emplace(relative_to(file, fx), number, c);
      }
    }
  }
  return out;
}

class RuleFixture : public ::testing::TestWithParam<Fixture> {};

TEST_P(RuleFixture, FindingsMatchInlineExpectations) {
  const Fixture& fx = GetParam();
#ifndef KVLINT_TEST_HAS_CPP_FRONTEND
  if (!fs::is_directory(fx.path) && fx.path.extension() != ".py")
    GTEST_SKIP() << "built without the C++ front end (-DKVLINT_CPP_FRONTEND=OFF)";
#endif
  std::vector<std::string> select;
  std::set<Expectation> expected = read_expectations(fx, select);
  if (select.empty()) select.push_back(fx.code);

  kvlint::CheckOptions options;
  options.paths = {fx.path};
  options.config = kvlint::discover_config(fx.path);
  options.config.select = select;
  options.config.ignore.clear();
  options.config.extend_select.clear();
  options.use_cache = false;
  // A fixture is a project by itself: nothing around it is loaded.
  options.load_project_context = false;
  kvlint::CheckResult result = kvlint::run_check(options);

  std::set<Expectation> actual;
  std::string details;
  for (const auto& f : result.findings) {
    actual.emplace(relative_to(f.loc.file, fx), f.loc.line, f.code);
    details += "  " + f.loc.file + ":" + std::to_string(f.loc.line) + ": " + f.code + " " + f.message + "\n";
  }
  for (const auto& d : result.diagnostics)
    if (d.kind != "parse-error" && d.kind != "degraded") details += "  diagnostic: " + d.path + ": " + d.message + "\n";

  if (fx.fires) {
    EXPECT_FALSE(expected.empty()) << fx.path << ": a fire_ fixture needs `# expect:` comments";
  } else {
    EXPECT_TRUE(expected.empty()) << fx.path << ": a silent_ fixture must not expect findings";
  }
  EXPECT_EQ(actual, expected) << fx.path << "\nfindings:\n" << details;
}

std::string fixture_name(const ::testing::TestParamInfo<Fixture>& info) {
  std::string name = info.param.code + "_" + info.param.path.stem().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Rules, RuleFixture, ::testing::ValuesIn(discover()), fixture_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RuleFixture);

// Every rule has fixtures that fire and fixtures that stay silent, and a doc
// with the sections `kvlint explain` promises.
TEST(RuleCatalog, EveryRuleHasFixturesAndDoc) {
  auto fixtures = discover();
  for (const auto& rule : kvlint::make_all_rules()) {
    const auto& info = rule->info();
    bool fire = false, silent = false;
    for (const auto& fx : fixtures) {
      if (fx.code != info.code) continue;
      (fx.fires ? fire : silent) = true;
    }
    EXPECT_TRUE(fire) << info.code << " has no fire_ fixture";
    EXPECT_TRUE(silent) << info.code << " has no silent_ fixture";
    for (const char* section : {"## What it does", "## Why it matters", "## Example", "## How to fix"})
      EXPECT_NE(info.doc.find(section), std::string_view::npos) << info.code << " doc lacks " << section;
    EXPECT_EQ(info.doc.find("TODO"), std::string_view::npos) << info.code << " doc is a placeholder";
  }
}

TEST(RuleCatalog, CodesAreUniqueAndSorted) {
  auto infos = kvlint::all_rule_infos();
  for (std::size_t i = 1; i < infos.size(); ++i) EXPECT_LT(infos[i - 1].code, infos[i].code);
  for (const auto& info : infos) EXPECT_NE(kvlint::find_rule_info(info.code), nullptr);
}

}  // namespace
