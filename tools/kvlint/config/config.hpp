// [tool.kvlint] in pyproject.toml or kvlint.toml, discovered upward from the
// checked path. Unknown keys and wrong types are errors naming file, key and
// expected type (ConfigError; the CLI exits 2).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "analyzers/facts/vocabulary.hpp"
#include "rules/finding.hpp"

namespace kvlint {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One `[tool.kvlint.runtime.models.NAME]` boot entry (runtime companion).
struct RuntimeModel {
  std::string name;
  std::string factory;  // "pkg.module:build"
  std::string driver;   // "pkg.module:drive"
  // The owner classes it covers (simple names); empty: any class its package defines.
  std::vector<std::string> owners;
  std::vector<std::string> paths;  // named freely: the driver's names ("icl", "streaming", "graph")
  // `enforce-eager`: the paths the driver runs as a deployment with enforce_eager set (no CUDA-graph
  // wrapper, no capture expected). `true` marks every path, an array names some. KV303 needs it (a
  // capture is a fault only where enforce_eager is set); KV302 is refuted only on such a path.
  std::vector<std::string> enforce_eager_paths;
  std::string interpreter;      // empty: the configured default
  std::string device = "auto";  // auto | cpu | cuda
  std::vector<int> concurrency = {1, 4};
  int steps = 4;
  double timeout_s = 120;  // (0, kMaxTimeoutSeconds]
  std::map<std::string, std::string> env;
  std::vector<std::string> python_path;  // extra sys.path entries, relative to the config file
  // A C++ model: the plugin shared library (relative to the config file) that kvlint-model-host
  // boots instead of factory/driver, and its `config` table (values as strings).
  std::string plugin;
  std::map<std::string, std::string> plugin_config;
};

// The longest timeout a boot entry may ask for (one week): larger values would
// overflow the host's clock arithmetic, and no model boot legitimately needs more.
inline constexpr double kMaxTimeoutSeconds = 7 * 24 * 3600;

struct RuntimeConfig {
  std::string interpreter;  // default interpreter for every model; empty: "python3"
  std::string collector;    // "pkg.module:collect_model_local_kv_specs" when importable
  double tolerance = 0.05;  // relative tolerance between declared and observed bytes
  std::vector<RuntimeModel> models;
};

// [tool.kvlint.cpp]: the C++ front end (analyzers/cpp).
struct CppConfig {
  // File name endings analysed as C++ beside `.py`.
  std::vector<std::string> extensions = {".cpp", ".cc", ".cxx", ".cu", ".h", ".hpp", ".cuh"};
  // `compile-commands`: a compile_commands.json or the directory holding one (relative to
  // the config root). Empty: the nearest one found upward from the project root, as
  // clang-tidy does, else the fallback flags.
  std::string compile_commands;
  std::vector<std::string> fallback_flags = {"-std=c++17"};  // `fallback-flags`
  std::vector<std::string> include_dirs;  // `include-dirs`, relative to root; `include/` folders are added
};

struct Config {
  std::optional<std::filesystem::path> source;  // the file it came from, if any
  std::filesystem::path root;                   // its directory (paths in it are relative to this)
  std::vector<std::string> select = {"KV"};     // codes or prefixes
  std::vector<std::string> ignore;
  std::vector<std::string> extend_select;
  std::map<std::string, std::vector<std::string>> per_file_ignores;  // glob -> codes/prefixes
  std::vector<std::string> exclude;  // globs, gitignore-style, relative to root
  std::vector<std::string> extend_exclude;
  Severity fail_on = Severity::Warning;
  bool respect_gitignore = true;
  facts::Vocabulary vocabulary;  // extra-cache-classes and [tool.kvlint.protocol] applied
  RuntimeConfig runtime;
  CppConfig cpp;

  // Whether a file name is analysed: `.py`, or one of cpp.extensions.
  bool is_source_name(std::string_view name) const;
  bool is_cpp_name(std::string_view name) const;
  // Whether `code` is selected at all (select/extend-select minus ignore; longest prefix wins).
  bool is_selected(std::string_view code) const;
  // Whether `code` is ignored for `path` by per-file-ignores (path relative to root).
  bool is_ignored_for(std::string_view code, const std::filesystem::path& path) const;
  // Stable hash of everything that changes analysis output, for the result cache.
  std::string fingerprint() const;
  // Whether at least one rule is selected.
  bool selects_any_rule() const;
};

// Command-line settings applied on top of every configuration of a run.
struct ConfigOverrides {
  std::optional<std::vector<std::string>> select;  // replaces select and extend-select
  std::optional<std::vector<std::string>> ignore;  // replaces ignore
  std::vector<std::string> extend_select;          // added
  std::optional<Severity> fail_on;

  // Applies the overrides, then throws ConfigError when no rule is left selected:
  // an empty selection (`select = []`, an unset CI variable in `--select`) would
  // report success without checking anything.
  void apply(Config& config) const;
};

// Whether `code` is a rule code or a prefix of one ("KV", "KV1", "KV101"), engine rules included.
bool is_known_rule_code_or_prefix(std::string_view code);

// Finds pyproject.toml (with a [tool.kvlint] table) or kvlint.toml upward from
// `start` (a file or directory); kvlint.toml wins in the same directory.
// Returns defaults when none is found, rooted at the git work tree holding
// `start`, else at `start` itself (its directory when it is a file).
Config discover_config(const std::filesystem::path& start);
// The configuration file of directory `dir` itself (no upward search), if it has one.
std::optional<Config> load_config_in(const std::filesystem::path& dir);
// The top of the git work tree holding `dir` (the nearest ancestor with `.git`), if any.
std::optional<std::filesystem::path> git_work_tree_top(const std::filesystem::path& dir);
// Loads an explicit file (`--config FILE`).
Config load_config_file(const std::filesystem::path& file);

}  // namespace kvlint
