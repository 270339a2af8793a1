// The documentation and layout a contributor relies on stay true to the registry:
// the README rules table, and one folder per rule named after its code and name.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "rules/registry.hpp"

namespace fs = std::filesystem;

namespace kvlint {
namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string registry_row(const RuleInfo& info) {
  return "| " + std::string(info.code) + " | " + std::string(info.name) + " | " +
         std::string(to_string(info.severity)) + " |";
}

TEST(ReadmeRulesTable, ListsExactlyTheRegisteredRulesWithTheirNamesAndSeverities) {
  const std::string readme = read_file(fs::path(KVLINT_SOURCE_DIR) / "README.md");
  ASSERT_FALSE(readme.empty());
  std::vector<std::string> table;
  const std::regex row(R"(^\| KV\d+ \|.*$)");
  std::istringstream lines(readme);
  for (std::string line; std::getline(lines, line);)
    if (std::regex_match(line, row)) table.push_back(line);
  std::vector<std::string> expected;
  for (const auto& info : all_rule_infos()) expected.push_back(registry_row(info));
  EXPECT_EQ(table, expected) << "README.md's rules table must list every rule of all_rule_infos(), in code "
                                "order, as `| CODE | name | severity |`";
}

// rules/kv202_unsupported_fixed_row_claim/ holds the rule whose code is KV202 and whose
// name is unsupported-fixed-row-claim, so the folder, the factory and `kvlint rules` agree.
TEST(RuleFolders, EachFolderIsNamedAfterARegisteredRuleAndEachRuleHasAFolderWithFixtures) {
  std::set<std::string> folders;
  for (const auto& entry : fs::directory_iterator(fs::path(KVLINT_SOURCE_DIR) / "rules")) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || !name.starts_with("kv")) continue;
    folders.insert(name);
    EXPECT_TRUE(fs::exists(entry.path() / "rule.cpp")) << name;
    bool fires = false, silent = false;
    if (fs::is_directory(entry.path() / "fixtures"))
      for (const auto& fixture : fs::directory_iterator(entry.path() / "fixtures")) {
        fires = fires || fixture.path().filename().string().starts_with("fire_");
        silent = silent || fixture.path().filename().string().starts_with("silent_");
      }
    EXPECT_TRUE(fires && silent) << name << " needs fixtures/fire_* and fixtures/silent_*";
  }
  std::set<std::string> expected;
  for (const auto& rule : make_all_rules()) {
    std::string folder = std::string(rule->info().code) + "_" + std::string(rule->info().name);
    for (char& c : folder)
      c = c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    expected.insert(folder);
  }
  EXPECT_EQ(folders, expected);
}

}  // namespace
}  // namespace kvlint
