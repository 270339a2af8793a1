// Every option of Clang's own driver option table, in every form it takes a value, given as a
// compile database entry and as the configuration's fallback flags: the front end analyses the
// file and nothing in the watched directory (the command's directory, the process's working
// directory and every path the options name) is created or changed. The table is the one the
// front end links, so an option added by a newer Clang is tried without editing this test.
#include <clang/Driver/Options.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Tooling/Tooling.h>
#include <gtest/gtest.h>
#include <llvm/Option/OptTable.h>
#include <llvm/Option/Option.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "analyzers/cpp/compile_flags.hpp"
#include "analyzers/cpp/cpp_frontend.hpp"
#include "analyzers/facts/vocabulary.hpp"
#include "tests/engine/temp_dir.hpp"

namespace fs = std::filesystem;
using kvlint::testing::slurp;
using kvlint::testing::files_under;
using kvlint::testing::TempDir;

namespace {

constexpr std::size_t kOptionsPerCommand = 48;

// One option spelled with `value` wherever it takes one; empty for groups and inputs.
std::vector<std::string> spelled(const llvm::opt::Option& option, const std::string& value) {
  using llvm::opt::Option;
  const auto kind = option.getKind();
  if (kind == Option::GroupClass || kind == Option::InputClass || kind == Option::UnknownClass ||
      kind == Option::ValuesClass)
    return {};  // no spelling of their own (and no prefix to read)
  const std::string name = option.getPrefixedName();
  switch (kind) {
    case Option::FlagClass:
      return {name};
    case Option::JoinedClass:
    case Option::CommaJoinedClass:
      return {name + value};
    case Option::SeparateClass:
    case Option::RemainingArgsClass:
      return {name, value};
    case Option::JoinedOrSeparateClass:
      return {name, value};
    case Option::JoinedAndSeparateClass:
    case Option::RemainingArgsJoinedClass:
      return {name + value, value};
    case Option::MultiArgClass: {
      std::vector<std::string> out = {name};
      for (unsigned i = 0; i < option.getNumArgs(); ++i) out.push_back(value);
      return out;
    }
    default:
      return {};
  }
}

// Every option spelled with each value, deduplicated (a flag is one spelling whatever the value).
// An option the front end keeps gets a command of its own: it may stop the driver (`-x <path>`),
// and a command it stopped would prove nothing about the options beside it. The options it drops
// go kOptionsPerCommand to a command (those taking the rest of the line last).
std::vector<std::vector<std::string>> commands_over_the_table(const std::vector<std::string>& values) {
  const llvm::opt::OptTable& table = clang::driver::getDriverOptTable();
  std::vector<std::vector<std::string>> commands;
  std::vector<std::vector<std::string>> rest_of_line;
  std::vector<std::string> current;
  std::size_t in_current = 0;
  for (unsigned id = 1; id <= table.getNumOptions(); ++id) {
    const llvm::opt::Option option = table.getOption(id);
    std::set<std::vector<std::string>> forms;
    for (const auto& value : values)
      if (auto pieces = spelled(option, value); !pieces.empty()) forms.insert(std::move(pieces));
    for (const auto& pieces : forms) {
      std::vector<std::string> argv = {"clang++"};
      argv.insert(argv.end(), pieces.begin(), pieces.end());
      const bool kept = kvlint::cpp::reading_options_only(argv, "/src/a.cpp").arguments.size() > 2;
      const auto kind = option.getKind();
      if (kept) {
        commands.push_back(pieces);
      } else if (kind == llvm::opt::Option::RemainingArgsClass ||
                 kind == llvm::opt::Option::RemainingArgsJoinedClass) {
        rest_of_line.push_back(pieces);
      } else {
        current.insert(current.end(), pieces.begin(), pieces.end());
        if (++in_current == kOptionsPerCommand) {
          commands.push_back(std::move(current));
          current.clear();
          in_current = 0;
        }
      }
    }
  }
  if (!current.empty()) commands.push_back(std::move(current));
  for (auto& pieces : rest_of_line) commands.push_back(std::move(pieces));
  return commands;
}

class WorkingDirectory {
 public:
  explicit WorkingDirectory(const fs::path& dir) : previous_(fs::current_path()) { fs::current_path(dir); }
  ~WorkingDirectory() {
    std::error_code ec;
    fs::current_path(previous_, ec);
  }
  WorkingDirectory(const WorkingDirectory&) = delete;
  WorkingDirectory& operator=(const WorkingDirectory&) = delete;

 private:
  fs::path previous_;
};

constexpr const char* kSource = "struct Decoder { Decoder() { k_cache_ = 0; } int k_cache_; };\n";

TEST(CompileFlags, NoOptionOfTheDriverTableWritesAFile) {
  TempDir watched;
  const fs::path source = watched.write("src/decoder.cpp", kSource);
  watched.write("victim", "precious\n");
  fs::create_directories(watched.path() / "dir");
  const WorkingDirectory cwd(watched.path());
  kvlint::facts::Vocabulary vocabulary;
  const auto before = files_under(watched.path());

  // The detector can fail: Clang itself, given one of these options, does write.
  const fs::path proof = watched.path() / "proof.d";
  ASSERT_TRUE(clang::tooling::runToolOnCodeWithArgs(std::make_unique<clang::SyntaxOnlyAction>(), kSource,
                                                    {"-Wp,-MD," + proof.string()}, "proof.cpp"));
  ASSERT_TRUE(fs::exists(proof));
  fs::remove(proof);

  std::size_t runs = 0;
  std::size_t analysed = 0;
  // Paths, and for the options that hand their value on to another tool (-Wp, -Xclang,
  // -Xpreprocessor, -Xarch_*, -mllvm, ...) an output-producing option as the value.
  const std::string victim = (watched.path() / "victim").string();
  const std::vector<std::string> values = {victim,
                                           (watched.path() / "dir").string(),
                                           (watched.path() / "new-file").string(),
                                           "-MD,-MF," + victim,
                                           "-Wp,-MD," + victim,
                                           "-MD"};
  for (const auto& options : commands_over_the_table(values)) {
    std::string label;
    for (const auto& o : options) label += o + " ";
    // As a compile database entry.
    nlohmann::json arguments = {"clang++"};
    for (const auto& o : options) arguments.push_back(o);
    arguments.push_back("-c");
    arguments.push_back("src/decoder.cpp");
    const fs::path database = watched.path() / "build" / "compile_commands.json";
    watched.write(
        "build/compile_commands.json",
        nlohmann::json::array(
            {{{"directory", watched.path().string()}, {"file", "src/decoder.cpp"}, {"arguments", arguments}}})
            .dump());
    kvlint::facts::CppProjectSettings from_database;
    from_database.compile_database = database;
    // As fallback flags.
    kvlint::facts::CppProjectSettings from_config;
    from_config.fallback_flags = options;
    for (const auto* settings : {&from_database, &from_config}) {
      const auto analyzer = kvlint::cpp::make_analyzer(vocabulary, *settings);
      ASSERT_TRUE(analyzer->database_problem().empty()) << analyzer->database_problem();
      const auto command = analyzer->command_for(source);
      ASSERT_EQ(command.arguments.back(), source.string()) << label;
      const auto analysis = analyzer->analyze("src/decoder.cpp", source, kSource, command);
      ++runs;
      if (!analysis.facts.classes.empty()) ++analysed;
    }
    fs::remove_all(watched.path() / "build");
    ASSERT_TRUE(files_under(watched.path()) == before) << "written with: " << label;
  }
  // Clang did run over the commands (the ones whose options were all left out, at least).
  EXPECT_GT(analysed, runs / 2) << analysed << " of " << runs;
  EXPECT_GT(runs, 100u);
}

// What is kept reads the source as the project builds it; what writes is dropped and named.
TEST(CompileFlags, IncludePathsMacrosAndLanguageAreKeptOutputsAreDropped) {
  const std::vector<std::string> argv = {"/usr/bin/g++",
                                         "-Iinclude",
                                         "-isystem",
                                         "/opt/torch/include",
                                         "-DUSE_CUDA=1",
                                         "-std=c++17",
                                         "-include",
                                         "pch.h",
                                         "-fno-exceptions",
                                         "-O2",
                                         "-mavx2",
                                         "--target=x86_64-linux-gnu",
                                         "-Wp,-MD,/home/u/.bashrc",
                                         "-MMD",
                                         "-MF",
                                         "dep.d",
                                         "-Xclang",
                                         "-load",
                                         "-Xclang",
                                         "evil.so",
                                         "-o",
                                         "x.o",
                                         "-c",
                                         "other.cpp",
                                         "src/a.cpp"};
  const auto reading = kvlint::cpp::reading_options_only(argv, "/repo/src/a.cpp");
  // Kept in order, each in Clang's own rendering (separate values), the file analysed last.
  const std::vector<std::string> kept = {"clang++",
                                         "-I",
                                         "include",
                                         "-isystem",
                                         "/opt/torch/include",
                                         "-D",
                                         "USE_CUDA=1",
                                         "-std=c++17",
                                         "-include",
                                         "pch.h",
                                         "-fno-exceptions",
                                         "-O2",
                                         "-mavx2",
                                         "--target=x86_64-linux-gnu",
                                         "/repo/src/a.cpp"};
  EXPECT_EQ(reading.arguments, kept);
  const std::vector<std::string> dropped = {"-Wp,-MD,/home/u/.bashrc", "-MMD",   "-MF dep.d", "-Xclang -load",
                                            "-Xclang evil.so",         "-o x.o", "-c",        "other.cpp"};
  EXPECT_EQ(reading.dropped, dropped);
  EXPECT_TRUE(kvlint::cpp::reading_options_only({}, "/repo/a.cpp").arguments.empty());
  EXPECT_EQ(kvlint::cpp::reading_options_only({"gcc", "-I", "inc"}, "/repo/a.c").arguments,
            (std::vector<std::string>{"clang", "-I", "inc", "/repo/a.c"}));
  // A value missing at the end is left out, not read as the source.
  EXPECT_EQ(kvlint::cpp::reading_options_only({"clang++", "-DX", "-include"}, "/repo/a.cpp").dropped,
            std::vector<std::string>{"-include"});
}

}  // namespace
