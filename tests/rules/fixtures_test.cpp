// Runs every rule's fixtures end to end (front end -> project -> rule ->
// suppressions) and compares findings with the inline expectations, in the
// style of clang-tidy's CHECK-MESSAGES:
//
//   self.cache = DynamicCache()  # expect: KV101
//
// rules/<code>_<name>/fixtures/fire_*.py or fire_*.cpp (or fire_*/ for a multi-file project)
// must produce at least one finding, silent_* none; each is compared with the findings of
// the rule's own code only, unless its first line says `# kvlint-fixture: select=KV101,KV102`
// (a C++ fixture runs every rule, and every finding on it must read as C++). A kvlint.toml
// inside a fixture directory is honoured. C++ fixtures write the same comments with `//`
// (`// expect: KV101`); they run in degraded mode (no LibTorch headers here). A C++ fixture
// folder is a project as real ones are laid out: headers and the .cpp files that define their
// classes' methods, each analysed as a file of its own.
// A code may be followed by `{{text}}` blocks, each a piece of the finding's message
// that must appear in it (`// expect: KV202 {{declares `RowDriver::Fixed`}}`): the C++
// fixtures pin the C++ spelling of their findings that way.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "rules/registry.hpp"
#include "tools/kvlint/engine/engine.hpp"
#include "tools/kvlint/reporters/reporters.hpp"

namespace fs = std::filesystem;

namespace {

struct Fixture {
  std::string rule_dir;  // "kv101_undeclared_cache"
  std::string code;      // "KV101"
  fs::path path;         // file or directory
  bool fires = false;
};

// Readable names in test listings instead of gtest's byte dump.
void PrintTo(const Fixture& fx, std::ostream* os) {
  *os << fx.path.generic_string();
}

// (path relative to the fixture, line, code)
using Expectation = std::tuple<std::string, uint32_t, std::string>;
// Pieces of text each expected finding's message must contain.
using MessageExpectations = std::map<Expectation, std::vector<std::string>>;

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
  static const std::set<std::string> kExtensions = {".py", ".cpp", ".cc",  ".cxx",
                                                    ".cu", ".h",   ".hpp", ".cuh"};
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

// A C++ fixture: a C++ file, or a folder holding one (a header + .cpp project).
bool is_cpp_fixture(const fs::path& path) {
  for (const auto& file : source_files(path))
    if (file.extension() != ".py") return true;
  return false;
}

std::string relative_to(const fs::path& file, const Fixture& fx) {
  fs::path base = fs::is_directory(fx.path) ? fx.path : fx.path.parent_path();
  return fs::relative(fs::weakly_canonical(file), fs::weakly_canonical(base)).generic_string();
}

// "KV101 {{a}} {{b}}, KV104" -> {KV101: [a, b], KV104: []}, in order.
std::vector<std::pair<std::string, std::vector<std::string>>> parse_expect(std::string_view rest) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  std::size_t i = 0;
  auto skip = [&](std::string_view chars) {
    while (i < rest.size() && chars.find(rest[i]) != std::string_view::npos) ++i;
  };
  while (true) {
    skip(" ,");
    std::size_t start = i;
    while (i < rest.size() && (std::isupper(static_cast<unsigned char>(rest[i])) ||
                               std::isdigit(static_cast<unsigned char>(rest[i]))))
      ++i;
    if (i == start) break;
    out.emplace_back(std::string(rest.substr(start, i - start)), std::vector<std::string>{});
    for (skip(" "); rest.substr(i).starts_with("{{"); skip(" ")) {
      const std::size_t end = rest.find("}}", i + 2);
      if (end == std::string_view::npos) break;
      out.back().second.emplace_back(rest.substr(i + 2, end - i - 2));
      i = end + 2;
    }
  }
  return out;
}

std::set<Expectation> read_expectations(const Fixture& fx, std::vector<std::string>& select,
                                        MessageExpectations& messages, MessageExpectations& related) {
  static const std::regex expect_re(R"((?:#|//)\s*expect:\s*(.*)$)");
  static const std::regex related_re(R"((?:#|//)\s*related:\s*(.*)$)");
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
      if (std::regex_search(line, m, related_re))
        for (auto& [code, texts] : parse_expect(m[1].str())) {
          auto& pieces = related[Expectation{relative_to(file, fx), number, code}];
          pieces.insert(pieces.end(), texts.begin(), texts.end());
        }
      if (!std::regex_search(line, m, expect_re)) continue;
      for (auto& [code, texts] : parse_expect(m[1].str())) {
        Expectation e{relative_to(file, fx), number, code};
        out.insert(e);
        auto& pieces = messages[e];
        pieces.insert(pieces.end(), texts.begin(), texts.end());
      }
    }
  }
  return out;
}

#ifdef KVLINT_TEST_HAS_CPP_FRONTEND
// Python spellings a C++ reviewer must never read in a finding about C++ code: the facts'
// `self.` and `__init__`, and the Python protocol's names where the header has its own.
void expect_cpp_spelling(const kvlint::Finding& f, const std::string& origin) {
  std::vector<std::pair<std::string, std::string>> texts{{"message", f.message}};
  for (const auto& r : f.related) texts.emplace_back("related note", r.message);
  if (f.fix) {
    texts.emplace_back("fix", f.fix->description);
    for (const auto& e : f.fix->edits) texts.emplace_back("fix edit", e.replacement);
  }
  for (const auto& [what, text] : texts)
    for (const char* python : {"self.", "__init__", "RowDriver.", "ModelLocalKVScope", "spec_from_hf_config",
                               "nn.Module`", "def "})
      EXPECT_EQ(text.find(python), std::string::npos)
          << origin << ": " << f.loc.file.str() << ":" << f.loc.line << " " << f.code << " " << what
          << " has `" << python << "`: " << text;
}
#endif

class RuleFixture : public ::testing::TestWithParam<Fixture> {};

TEST_P(RuleFixture, FindingsMatchInlineExpectations) {
  const Fixture& fx = GetParam();
#ifndef KVLINT_TEST_HAS_CPP_FRONTEND
  if (is_cpp_fixture(fx.path)) GTEST_SKIP() << "built without the C++ front end (-DKVLINT_CPP_FRONTEND=OFF)";
#endif
  std::vector<std::string> select;
  MessageExpectations messages;
  MessageExpectations related;
  std::set<Expectation> expected = read_expectations(fx, select, messages, related);
  if (select.empty()) select.push_back(fx.code);

  kvlint::CheckOptions options;
  options.paths = {fx.path};
  options.config = kvlint::discover_config(fx.path);
  // A C++ fixture runs with every rule, so that a reviewer's reading of each finding on it (its
  // C++ spelling) covers the other rules' findings too; the expectations are then compared with
  // the selected rules' findings alone. One Clang parse a fixture serves both checks.
  const bool cpp = is_cpp_fixture(fx.path);
  options.config.select = cpp ? std::vector<std::string>{"KV"} : select;
  options.config.ignore.clear();
  options.config.extend_select.clear();
  options.use_cache = false;
  // A fixture is a project by itself: nothing around it is loaded.
  options.load_project_context = false;
  kvlint::CheckResult result = kvlint::run_check(options);
#ifdef KVLINT_TEST_HAS_CPP_FRONTEND
  if (cpp) {
    for (const auto& f : result.findings) expect_cpp_spelling(f, fx.path.generic_string());
    std::erase_if(result.findings, [&](const kvlint::Finding& f) {
      return std::none_of(select.begin(), select.end(),
                          [&](const std::string& code) { return f.code.starts_with(code); });
    });
  }
#endif

  std::set<Expectation> actual;
  std::string details;
  for (const auto& f : result.findings) {
    actual.emplace(relative_to(f.loc.file.str(), fx), f.loc.line, f.code);
    details +=
        "  " + f.loc.file.str() + ":" + std::to_string(f.loc.line) + ": " + f.code + " " + f.message + "\n";
  }
  for (const auto& d : result.diagnostics)
    if (d.kind != "parse-error" && d.kind != "degraded")
      details += "  diagnostic: " + d.path + ": " + d.message + "\n";

  if (fx.fires) {
    EXPECT_FALSE(expected.empty()) << fx.path << ": a fire_ fixture needs `# expect:` comments";
  } else {
    EXPECT_TRUE(expected.empty()) << fx.path << ": a silent_ fixture must not expect findings";
  }
  EXPECT_EQ(actual, expected) << fx.path << "\nfindings:\n" << details;
  for (const auto& entry : messages) {
    const Expectation& where = entry.first;  // a named variable: clang 14 cannot capture a structured binding
    for (const auto& piece : entry.second) {
      const bool found = std::any_of(result.findings.begin(), result.findings.end(), [&](const auto& f) {
        return Expectation{relative_to(f.loc.file.str(), fx), f.loc.line, f.code} == where &&
               f.message.find(piece) != std::string::npos;
      });
      EXPECT_TRUE(found) << fx.path << ":" << std::get<1>(where) << ": no " << std::get<2>(where)
                         << " message contains \"" << piece << "\"\nfindings:\n"
                         << details;
    }
  }
  // `// related: KV101 {{text}}`: a finding of that code gives the line as a related location whose
  // note holds each text. A fixture with such lines annotates every related location its findings
  // give inside it, so a look-alike that becomes evidence fails too.
  if (related.empty()) return;
  std::set<Expectation> expected_related;
  std::set<Expectation> actual_related;
  for (const auto& entry : related) expected_related.insert(entry.first);
  for (const auto& f : result.findings)
    for (const auto& r : f.related) {
      actual_related.emplace(relative_to(r.loc.file.str(), fx), r.loc.line, f.code);
      details += "  related " + r.loc.file.str() + ":" + std::to_string(r.loc.line) + " of " + f.code +
                 " at " + std::to_string(f.loc.line) + ": " + r.message + "\n";
    }
  EXPECT_EQ(actual_related, expected_related) << fx.path << "\nfindings:\n" << details;
  for (const auto& entry : related) {
    const Expectation& where = entry.first;
    for (const auto& piece : entry.second) {
      const bool found = std::any_of(result.findings.begin(), result.findings.end(), [&](const auto& f) {
        return f.code == std::get<2>(where) &&
               std::any_of(f.related.begin(), f.related.end(), [&](const auto& r) {
                 return relative_to(r.loc.file.str(), fx) == std::get<0>(where) &&
                        r.loc.line == std::get<1>(where) && r.message.find(piece) != std::string::npos;
               });
      });
      EXPECT_TRUE(found) << fx.path << ":" << std::get<1>(where) << ": no related note of "
                         << std::get<2>(where) << " contains \"" << piece << "\"\nfindings:\n"
                         << details;
    }
  }
}

std::string fixture_name(const ::testing::TestParamInfo<Fixture>& info) {
  std::string name = info.param.code + "_" + info.param.path.stem().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Rules, RuleFixture, ::testing::ValuesIn(discover()), fixture_name);

// Deferring the files that can only give context (CheckOptions::defer_context) finds what
// analysing them all up front finds, with every rule on: the fixtures are the shapes the rules
// follow between classes and files. C++ files are never deferred: only the Python fixtures.
class DeferredFixture : public ::testing::TestWithParam<Fixture> {};

std::vector<Fixture> python_fixtures() {
  std::vector<Fixture> out = discover();
  std::erase_if(out, [](const Fixture& fx) { return is_cpp_fixture(fx.path); });
  return out;
}

TEST_P(DeferredFixture, FindsWhatAnalysingEveryFileUpFrontFinds) {
  const Fixture& fx = GetParam();
  auto run = [&](bool defer) {
    kvlint::CheckOptions options;
    options.paths = {fx.path};
    options.config = kvlint::discover_config(fx.path);
    options.config.select = {"KV"};
    options.config.ignore.clear();
    options.config.extend_select.clear();
    options.use_cache = false;
    options.load_project_context = false;
    options.defer_context = defer;
    return kvlint::render_report(kvlint::run_check(options), kvlint::OutputFormat::Json, {});
  };
  EXPECT_EQ(run(true), run(false)) << fx.path;
}

INSTANTIATE_TEST_SUITE_P(Rules, DeferredFixture, ::testing::ValuesIn(python_fixtures()), fixture_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DeferredFixture);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RuleFixture);

#ifdef KVLINT_TEST_HAS_CPP_FRONTEND
bool is_cpp_file(const fs::path& path) {
  return is_source(path) && path.extension() != ".py";
}

// The example tree's C++ models, checked together with its Python ones as the README does.
TEST(CppFindings, ExampleCppModelsSpeakCpp) {
  const fs::path examples = fs::path(KVLINT_SOURCE_DIR) / "examples" / "models";
  kvlint::CheckOptions options;
  options.paths = {examples};
  options.config = kvlint::discover_config(examples);
  options.use_cache = false;
  std::size_t cpp_findings = 0;
  for (const auto& f : kvlint::run_check(options).findings) {
    if (!is_cpp_file(f.loc.file.str())) continue;
    ++cpp_findings;
    expect_cpp_spelling(f, "examples/models");
  }
  EXPECT_EQ(cpp_findings, 4u) << "the example's planted C++ problems (KV103, KV303, two KV202)";
}
#endif

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
