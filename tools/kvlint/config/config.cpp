// Configuration: [tool.kvlint] in pyproject.toml or the top level of kvlint.toml.
// Every key is validated; errors name the file, the dotted key and the expected type.
#include "tools/kvlint/config/config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
// toml++'s internal self-checks stay off in every build type, as in Debian's NDEBUG-built shared
// library that kvlint linked before: one (parse_key, toml++ 3.3.0) fails on malformed keys that the
// parser then reports as a syntax error (fuzz/regressions/config/toml-key-assertion).
#define TOML_ASSERT(expr) static_assert(true)
#include <toml++/toml.h>
#include <xxhash.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "rules/registry.hpp"
#include "tools/kvlint/config/glob.hpp"

namespace kvlint {
namespace fs = std::filesystem;

namespace {

// Where a table sits, for messages: the file's display name and the table header.
struct Where {
  std::string file;
  std::string table;  // "[tool.kvlint]", "[tool.kvlint.protocol]"; empty: the top level of kvlint.toml

  // "[tool.kvlint] key 'select'", or "top-level key 'select'" in kvlint.toml.
  std::string key(std::string_view name) const {
    return table.empty() ? fmt::format("top-level key '{}'", name) : fmt::format("{} key '{}'", table, name);
  }
  std::string place() const { return table.empty() ? "the top-level table" : table; }
};

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string describe(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return "string " + quote(node.as_string()->get());
    case toml::node_type::integer:
      return fmt::format("integer {}", node.as_integer()->get());
    case toml::node_type::floating_point:
      return fmt::format("float {}", node.as_floating_point()->get());
    case toml::node_type::boolean:
      return node.as_boolean()->get() ? "boolean true" : "boolean false";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    default:
      return "nothing";
  }
}

[[noreturn]] void type_error(const Where& where, std::string_view key, std::string_view expected,
                             const toml::node& got) {
  throw ConfigError(
      fmt::format("{}: {} must be {}, got {}", where.file, where.key(key), expected, describe(got)));
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

void check_keys(const toml::table& table, const Where& where, const std::vector<std::string_view>& known) {
  for (auto&& [key, value] : table) {
    const std::string_view k = key.str();
    if (std::find(known.begin(), known.end(), k) != known.end()) continue;
    std::string_view best;
    std::size_t best_distance = 3;  // suggest only close spellings
    for (auto candidate : known) {
      std::size_t d = edit_distance(k, candidate);
      // `_` for `-` is the commonest slip.
      std::string dashed(k);
      std::replace(dashed.begin(), dashed.end(), '_', '-');
      if (dashed == candidate) d = 0;
      if (d < best_distance) {
        best_distance = d;
        best = candidate;
      }
    }
    std::string hint = best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best);
    throw ConfigError(fmt::format("{}: unknown key '{}' in {}{}", where.file, k, where.place(), hint));
  }
}

std::string get_string(const toml::node& node, const Where& where, std::string_view key) {
  if (!node.is_string()) type_error(where, key, "a string", node);
  return node.as_string()->get();
}

std::vector<std::string> get_strings(const toml::node& node, const Where& where, std::string_view key) {
  const auto* array = node.as_array();
  if (!array) type_error(where, key, "an array of strings", node);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < array->size(); ++i) {
    const toml::node& item = *array->get(i);
    if (!item.is_string())
      throw ConfigError(fmt::format("{}: {} must be an array of strings, got {} at index {}", where.file,
                                    where.key(key), describe(item), i));
    out.push_back(item.as_string()->get());
  }
  return out;
}

bool get_bool(const toml::node& node, const Where& where, std::string_view key) {
  if (!node.is_boolean()) type_error(where, key, "a boolean", node);
  return node.as_boolean()->get();
}

// A finite number within [low, high]; `expected` describes that range (nan and inf never pass).
double get_number_in(const toml::node& node, const Where& where, std::string_view key, double low,
                     double high, std::string_view expected) {
  double value = 0;
  if (node.is_integer())
    value = static_cast<double>(node.as_integer()->get());
  else if (node.is_floating_point())
    value = node.as_floating_point()->get();
  else
    type_error(where, key, expected, node);
  if (!(value >= low && value <= high)) type_error(where, key, expected, node);
  return value;
}

int get_positive_int(const toml::node& node, const Where& where, std::string_view key) {
  if (!node.is_integer() || node.as_integer()->get() < 1 || node.as_integer()->get() > 1'000'000)
    type_error(where, key, "a positive integer", node);
  return static_cast<int>(node.as_integer()->get());
}

const toml::table& get_table(const toml::node& node, const Where& where, std::string_view key) {
  const auto* table = node.as_table();
  if (!table) type_error(where, key, "a table", node);
  return *table;
}

std::vector<std::string> get_codes(const toml::node& node, const Where& where, std::string_view key) {
  auto codes = get_strings(node, where, key);
  for (const auto& c : codes)
    if (!is_known_rule_code_or_prefix(c))
      throw ConfigError(fmt::format("{}: {} names unknown rule code or prefix '{}' (see `kvlint rules`)",
                                    where.file, where.key(key), c));
  return codes;
}

const std::set<std::string_view>& canonical_fields() {
  static const std::set<std::string_view> kFields = {
      "name",  "layers", "kv_heads",   "head_dim",    "dtype",           "physical_capacity_positions",
      "scope", "rows",   "rows_fixed", "rows_reason", "allocation_note", "capacity_source"};
  return kFields;
}

void load_protocol(const toml::table& table, const Where& where, facts::Vocabulary& vocab) {
  check_keys(table, where,
             {"declaration-method", "spec-constructors", "collector", "unwrap", "runnable", "row-driver",
              "row-fixed", "row-max-num-seqs", "fixed-call", "fixed-reason-keyword", "max-num-seqs-call",
              "field-aliases", "module-bases", "scope-enum"});
  auto string_key = [&](std::string_view key, std::string& field) {
    if (const toml::node* n = table.get(key)) {
      field = get_string(*n, where, key);
      if (field.empty()) type_error(where, key, "a non-empty string", *n);
    }
  };
  string_key("declaration-method", vocab.declaration_method);
  string_key("collector", vocab.collector);
  string_key("unwrap", vocab.unwrap);
  string_key("runnable", vocab.runnable);
  string_key("row-driver", vocab.row_driver);
  string_key("row-fixed", vocab.row_fixed);
  string_key("row-max-num-seqs", vocab.row_max_num_seqs);
  string_key("fixed-call", vocab.fixed_call);
  string_key("fixed-reason-keyword", vocab.fixed_reason_keyword);
  string_key("max-num-seqs-call", vocab.max_num_seqs_call);
  string_key("scope-enum", vocab.scope_enum);
  // Renames replace the protocol's spellings; module bases extend the defaults.
  if (const toml::node* n = table.get("spec-constructors"))
    vocab.spec_constructors = get_strings(*n, where, "spec-constructors");
  if (const toml::node* n = table.get("module-bases"))
    for (auto& base : get_strings(*n, where, "module-bases")) vocab.module_bases.push_back(std::move(base));
  if (const toml::node* n = table.get("field-aliases")) {
    const auto& aliases = get_table(*n, where, "field-aliases");
    Where alias_where{where.file, where.table.substr(0, where.table.size() - 1) + ".field-aliases]"};
    for (auto&& [written, canonical] : aliases) {
      std::string canon = get_string(canonical, alias_where, written.str());
      if (!canonical_fields().count(canon))
        throw ConfigError(
            fmt::format("{}: {} key '{}' must name a spec field (name, layers, kv_heads, head_dim, "
                        "dtype, physical_capacity_positions, capacity_source, scope, rows, "
                        "rows_fixed, rows_reason, allocation_note), got string {}",
                        where.file, alias_where.table, written.str(), quote(canon)));
      vocab.field_aliases.emplace_back(std::string(written.str()), std::move(canon));
    }
  }
}

RuntimeModel load_model(std::string_view name, const toml::table& table, const Where& where) {
  check_keys(table, where,
             {"factory", "driver", "owners", "paths", "interpreter", "device", "concurrency", "steps",
              "timeout", "env", "python-path", "plugin", "config", "enforce-eager"});
  RuntimeModel model;
  model.name = std::string(name);
  if (const toml::node* n = table.get("factory")) model.factory = get_string(*n, where, "factory");
  if (const toml::node* n = table.get("driver")) model.driver = get_string(*n, where, "driver");
  if (const toml::node* n = table.get("owners")) model.owners = get_strings(*n, where, "owners");
  if (const toml::node* n = table.get("paths")) model.paths = get_strings(*n, where, "paths");
  if (const toml::node* n = table.get("interpreter"))
    model.interpreter = get_string(*n, where, "interpreter");
  if (const toml::node* n = table.get("enforce-eager")) {
    if (n->is_boolean())
      model.enforce_eager_paths = n->as_boolean()->get() ? model.paths : std::vector<std::string>{};
    else if (n->is_array())
      model.enforce_eager_paths = get_strings(*n, where, "enforce-eager");
    else
      type_error(where, "enforce-eager", "a boolean or an array of path names", *n);
    for (const auto& path : model.enforce_eager_paths)
      if (std::find(model.paths.begin(), model.paths.end(), path) == model.paths.end())
        throw ConfigError(fmt::format("{}: {} names \"{}\", which is not one of the entry's paths",
                                      where.file, where.key("enforce-eager"), path));
  }
  if (const toml::node* n = table.get("device")) {
    model.device = get_string(*n, where, "device");
    if (model.device != "auto" && model.device != "cpu" && model.device != "cuda")
      type_error(where, "device", R"(one of "auto", "cpu", "cuda" (a string))", *n);
  }
  if (const toml::node* n = table.get("concurrency")) {
    const auto* array = n->as_array();
    if (!array || array->empty())
      type_error(where, "concurrency", "a non-empty array of positive integers", *n);
    model.concurrency.clear();
    for (std::size_t i = 0; i < array->size(); ++i) {
      const toml::node& item = *array->get(i);
      if (!item.is_integer() || item.as_integer()->get() < 1 || item.as_integer()->get() > 1'000'000)
        throw ConfigError(fmt::format("{}: {} must be an array of positive integers, got {} at index {}",
                                      where.file, where.key("concurrency"), describe(item), i));
      model.concurrency.push_back(static_cast<int>(item.as_integer()->get()));
    }
  }
  if (const toml::node* n = table.get("steps")) model.steps = get_positive_int(*n, where, "steps");
  if (const toml::node* n = table.get("timeout")) {
    const std::string expected =
        fmt::format("a positive number of seconds, at most {:g} (one week)", kMaxTimeoutSeconds);
    model.timeout_s = get_number_in(*n, where, "timeout", 0, kMaxTimeoutSeconds, expected);
    if (!(model.timeout_s > 0)) type_error(where, "timeout", expected, *n);
  }
  if (const toml::node* n = table.get("env")) {
    const auto& env = get_table(*n, where, "env");
    Where env_where{where.file, where.table.substr(0, where.table.size() - 1) + ".env]"};
    for (auto&& [key, value] : env)
      model.env[std::string(key.str())] = get_string(value, env_where, key.str());
  }
  if (const toml::node* n = table.get("python-path"))
    model.python_path = get_strings(*n, where, "python-path");
  if (const toml::node* n = table.get("plugin")) model.plugin = get_string(*n, where, "plugin");
  if (const toml::node* n = table.get("config")) {
    // A C++ plugin's config: strings, integers, floats and booleans, passed on as text.
    const auto& config = get_table(*n, where, "config");
    Where config_where{where.file, where.table.substr(0, where.table.size() - 1) + ".config]"};
    for (auto&& [key, value] : config) {
      std::string text;
      if (const auto* s = value.as_string())
        text = s->get();
      else if (const auto* i = value.as_integer())
        text = std::to_string(i->get());
      else if (const auto* f = value.as_floating_point())
        text = fmt::format("{}", f->get());
      else if (const auto* b = value.as_boolean())
        text = b->get() ? "true" : "false";
      else
        type_error(config_where, key.str(), "a string, number or boolean", value);
      model.plugin_config[std::string(key.str())] = std::move(text);
    }
  }
  if (!model.plugin.empty() && (!model.factory.empty() || !model.driver.empty()))
    throw ConfigError(fmt::format("{}: {} has both plugin (a C++ model) and factory/driver (a Python model)",
                                  where.file, where.table));
  return model;
}

void load_runtime(const toml::table& table, const Where& where, RuntimeConfig& runtime) {
  check_keys(table, where, {"interpreter", "collector", "tolerance", "models"});
  if (const toml::node* n = table.get("interpreter"))
    runtime.interpreter = get_string(*n, where, "interpreter");
  if (const toml::node* n = table.get("collector")) runtime.collector = get_string(*n, where, "collector");
  if (const toml::node* n = table.get("tolerance")) {
    runtime.tolerance = get_number_in(*n, where, "tolerance", 0, 1, "a number in [0, 1]");
  }
  if (const toml::node* n = table.get("models")) {
    const auto& models = get_table(*n, where, "models");
    const std::string prefix = where.table.substr(0, where.table.size() - 1) + ".models";
    for (auto&& [name, value] : models) {
      Where model_where{where.file, prefix + "." + std::string(name.str()) + "]"};
      if (!value.is_table())
        throw ConfigError(fmt::format("{}: {}] key '{}' must be a table, got {}", where.file, prefix,
                                      name.str(), describe(value)));
      runtime.models.push_back(load_model(name.str(), *value.as_table(), model_where));
    }
  }
}

void load_cpp(const toml::table& table, const Where& where, CppConfig& cpp, facts::Vocabulary& vocab) {
  check_keys(table, where,
             {"extensions", "compile-commands", "fallback-flags", "include-dirs", "kv-tensor-names",
              "not-kv-tensor-names", "tensor-allocators"});
  if (const toml::node* n = table.get("extensions")) {
    cpp.extensions = get_strings(*n, where, "extensions");
    for (const auto& e : cpp.extensions)
      if (e.size() < 2 || e.front() != '.' || e == ".py")
        throw ConfigError(
            fmt::format("{}: {} entries must be file endings such as \".cpp\" (not .py), got {}", where.file,
                        where.key("extensions"), quote(e)));
  }
  if (const toml::node* n = table.get("compile-commands"))
    cpp.compile_commands = get_string(*n, where, "compile-commands");
  if (const toml::node* n = table.get("fallback-flags"))
    cpp.fallback_flags = get_strings(*n, where, "fallback-flags");
  if (const toml::node* n = table.get("include-dirs"))
    cpp.include_dirs = get_strings(*n, where, "include-dirs");
  if (const toml::node* n = table.get("kv-tensor-names"))
    vocab.cpp.kv_tensor_names = get_strings(*n, where, "kv-tensor-names");
  if (const toml::node* n = table.get("not-kv-tensor-names"))
    vocab.cpp.not_kv_tensor_names = get_strings(*n, where, "not-kv-tensor-names");
  if (const toml::node* n = table.get("tensor-allocators"))
    vocab.cpp.tensor_allocators = get_strings(*n, where, "tensor-allocators");
}

constexpr std::string_view kTopLevelKeys[] = {
    "select",         "ignore",  "extend-select",     "per-file-ignores",    "exclude",
    "extend-exclude", "fail-on", "respect-gitignore", "extra-cache-classes", "protocol",
    "runtime",        "cpp",
};

// Fills `config` from the kvlint table. `nested_prefix` is how sub-tables are
// spelled in this file ("tool.kvlint." in pyproject.toml, "" in kvlint.toml).
void load_table(const toml::table& table, const std::string& file, const std::string& nested_prefix,
                Config& config) {
  // Top-level keys: the [tool.kvlint] table of pyproject.toml, the top level of kvlint.toml.
  const Where top{file,
                  nested_prefix.empty() ? "" : "[" + nested_prefix.substr(0, nested_prefix.size() - 1) + "]"};
  check_keys(table, top, std::vector<std::string_view>(std::begin(kTopLevelKeys), std::end(kTopLevelKeys)));
  if (const toml::node* n = table.get("select")) config.select = get_codes(*n, top, "select");
  if (const toml::node* n = table.get("ignore")) config.ignore = get_codes(*n, top, "ignore");
  if (const toml::node* n = table.get("extend-select"))
    config.extend_select = get_codes(*n, top, "extend-select");
  if (const toml::node* n = table.get("per-file-ignores")) {
    const auto& pfi = get_table(*n, top, "per-file-ignores");
    const Where where{file, "[" + nested_prefix + "per-file-ignores]"};
    for (auto&& [glob, codes] : pfi) {
      GlobPattern pattern;
      if (!GlobPattern::parse_config(glob.str(), pattern) || pattern.negated)
        throw ConfigError(fmt::format("{}: {} is not a usable glob", file, where.key(glob.str())));
      config.per_file_ignores[std::string(glob.str())] = get_codes(codes, where, glob.str());
    }
  }
  auto globs = [&](std::string_view key, std::vector<std::string>& out) {
    if (const toml::node* n = table.get(key)) {
      out = get_strings(*n, top, key);
      for (const auto& g : out) {
        GlobPattern pattern;
        if (!GlobPattern::parse_config(g, pattern))
          throw ConfigError(
              fmt::format("{}: {} holds an empty or comment-only glob '{}'", file, top.key(key), g));
      }
    }
  };
  globs("exclude", config.exclude);
  globs("extend-exclude", config.extend_exclude);
  if (const toml::node* n = table.get("fail-on")) {
    if (!n->is_string() || !parse_severity(n->as_string()->get(), config.fail_on))
      type_error(top, "fail-on", R"(one of "error", "warning", "info" (a string))", *n);
  }
  if (const toml::node* n = table.get("respect-gitignore"))
    config.respect_gitignore = get_bool(*n, top, "respect-gitignore");
  if (const toml::node* n = table.get("extra-cache-classes"))
    for (auto& name : get_strings(*n, top, "extra-cache-classes"))
      if (std::find(config.vocabulary.cache_classes.begin(), config.vocabulary.cache_classes.end(), name) ==
          config.vocabulary.cache_classes.end())
        config.vocabulary.cache_classes.push_back(std::move(name));
  if (const toml::node* n = table.get("protocol"))
    load_protocol(get_table(*n, top, "protocol"), Where{file, "[" + nested_prefix + "protocol]"},
                  config.vocabulary);
  if (const toml::node* n = table.get("cpp"))
    load_cpp(get_table(*n, top, "cpp"), Where{file, "[" + nested_prefix + "cpp]"}, config.cpp,
             config.vocabulary);
  if (const toml::node* n = table.get("runtime"))
    load_runtime(get_table(*n, top, "runtime"), Where{file, "[" + nested_prefix + "runtime]"},
                 config.runtime);
}

std::string display_name(const fs::path& file) {
  std::error_code ec;
  fs::path rel = fs::proximate(file, fs::current_path(ec), ec);
  // Relative when under the working directory, else absolute: never "../../x".
  if (ec || rel.empty() || *rel.begin() == "..") return fs::absolute(file, ec).lexically_normal().string();
  return rel.string();
}

toml::table parse_toml(const fs::path& file, const std::string& shown) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(fmt::format("{}: cannot read the configuration file", shown));
  std::stringstream content;
  content << in.rdbuf();
  try {
    return toml::parse(content.str(), shown);
  } catch (const toml::parse_error& e) {
    throw ConfigError(fmt::format("{}:{}:{}: TOML syntax error: {}", shown, e.source().begin.line,
                                  e.source().begin.column, e.description()));
  }
}

// Loads `file`; nullopt for a pyproject.toml without [tool.kvlint].
std::optional<Config> try_load(const fs::path& file, bool explicit_file) {
  const std::string shown = display_name(file);
  toml::table root = parse_toml(file, shown);
  Config config;
  config.source = fs::absolute(file).lexically_normal();
  config.root = config.source->parent_path();
  const bool is_pyproject = file.filename() == "pyproject.toml";
  if (is_pyproject) {
    const toml::node* tool = root.get("tool");
    const toml::node* kvlint = tool && tool->is_table() ? tool->as_table()->get("kvlint") : nullptr;
    if (!kvlint) {
      if (!explicit_file) return std::nullopt;
      return config;  // named explicitly: an empty configuration
    }
    if (!kvlint->is_table())
      throw ConfigError(
          fmt::format("{}: key 'tool.kvlint' must be a table, got {}", shown, describe(*kvlint)));
    load_table(*kvlint->as_table(), shown, "tool.kvlint.", config);
  } else {
    load_table(root, shown, "", config);
  }
  return config;
}

void hash_string(XXH3_state_t* state, std::string_view s) {
  const uint64_t n = s.size();
  XXH3_64bits_update(state, &n, sizeof n);
  XXH3_64bits_update(state, s.data(), s.size());
}

// Longest select/ignore prefix matching `code`; 0 when none.
std::size_t longest_prefix(const std::vector<std::string>& prefixes, std::string_view code) {
  std::size_t best = 0;
  for (const auto& p : prefixes)
    if (!p.empty() && code.starts_with(p)) best = std::max(best, p.size());
  return best;
}

}  // namespace

bool is_known_rule_code_or_prefix(std::string_view code) {
  if (code.empty()) return false;
  for (const auto& info : all_rule_infos())
    if (info.code.starts_with(code)) return true;
  return false;
}

bool Config::is_selected(std::string_view code) const {
  const std::size_t selected = std::max(longest_prefix(select, code), longest_prefix(extend_select, code));
  if (selected == 0) return false;
  // Longest prefix wins; on a tie ignore wins (`select = ["KV1"], ignore = ["KV1"]` selects nothing).
  return selected > longest_prefix(ignore, code);
}

bool Config::is_ignored_for(std::string_view code, const fs::path& path) const {
  if (per_file_ignores.empty()) return false;
  std::string relative = path.generic_string();
  if (path.is_absolute()) {
    fs::path rel = path.lexically_relative(root);
    if (!rel.empty() && *rel.begin() != "..") relative = rel.generic_string();
  }
  for (const auto& [glob, codes] : per_file_ignores) {
    GlobPattern pattern;
    if (!GlobPattern::parse_config(glob, pattern)) continue;
    if (!matches_path_or_ancestor({pattern}, relative, false)) continue;
    for (const auto& c : codes)
      if (code.starts_with(c)) return true;
  }
  return false;
}

bool Config::selects_any_rule() const {
  const auto infos = all_rule_infos();
  return std::any_of(infos.begin(), infos.end(),
                     [&](const RuleInfo& info) { return is_selected(info.code); });
}

void ConfigOverrides::apply(Config& config) const {
  if (select) {
    config.select = *select;
    config.extend_select.clear();
  }
  if (ignore) config.ignore = *ignore;
  config.extend_select.insert(config.extend_select.end(), extend_select.begin(), extend_select.end());
  if (fail_on) config.fail_on = *fail_on;
  if (config.selects_any_rule()) return;
  auto list = [](const std::vector<std::string>& codes) {
    return fmt::format("[{}]", fmt::join(codes, ", "));
  };
  const std::string origin = select || ignore || !extend_select.empty() ? "--select/--ignore/--extend-select"
                             : config.source                            ? display_name(*config.source)
                                                                        : "the default configuration";
  throw ConfigError(
      fmt::format("{}: no rule is selected (select {}, extend-select {}, ignore {}); an empty "
                  "selection would check nothing and report success",
                  origin, list(config.select), list(config.extend_select), list(config.ignore)));
}

std::string Config::fingerprint() const {
  XXH3_state_t* state = XXH3_createState();
  if (!state) throw std::bad_alloc();
  XXH3_64bits_reset(state);
  auto list = [&](std::string_view tag, const std::vector<std::string>& items) {
    hash_string(state, tag);
    for (const auto& i : items) hash_string(state, i);
  };
  list("select", select);
  list("ignore", ignore);
  list("extend-select", extend_select);
  for (const auto& [glob, codes] : per_file_ignores) list("pfi:" + glob, codes);
  hash_string(state, to_string(fail_on));
  hash_string(state, facts::signature(vocabulary));
  list("cpp-extensions", cpp.extensions);
  list("cpp-flags", cpp.fallback_flags);
  list("cpp-includes", cpp.include_dirs);
  hash_string(state, cpp.compile_commands);
  const uint64_t digest = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return fmt::format("{:016x}", digest);
}

bool Config::is_cpp_name(std::string_view name) const {
  return std::any_of(cpp.extensions.begin(), cpp.extensions.end(),
                     [&](const std::string& e) { return name.size() > e.size() && name.ends_with(e); });
}

bool Config::is_source_name(std::string_view name) const {
  return name.ends_with(".py") || is_cpp_name(name);
}

std::optional<Config> load_config_in(const fs::path& dir) {
  std::error_code ec;
  const fs::path kvlint_toml = dir / "kvlint.toml";
  if (fs::is_regular_file(kvlint_toml, ec)) return try_load(kvlint_toml, false);
  const fs::path pyproject = dir / "pyproject.toml";
  if (fs::is_regular_file(pyproject, ec)) return try_load(pyproject, false);
  return std::nullopt;
}

std::optional<fs::path> git_work_tree_top(const fs::path& dir) {
  std::error_code ec;
  for (fs::path d = fs::absolute(dir, ec).lexically_normal();; d = d.parent_path()) {
    if (fs::exists(d / ".git", ec)) return d;
    if (!d.has_relative_path()) return std::nullopt;
  }
}

Config discover_config(const fs::path& start) {
  std::error_code ec;
  fs::path dir = fs::absolute(start, ec).lexically_normal();
  if (!fs::is_directory(dir, ec)) dir = dir.parent_path();
  // Strip a trailing separator so parent_path() climbs.
  if (dir.has_relative_path() && !dir.has_filename()) dir = dir.parent_path();
  for (fs::path d = dir;; d = d.parent_path()) {
    if (auto config = load_config_in(d)) return std::move(*config);
    if (!d.has_relative_path()) break;
  }
  Config defaults;
  defaults.root = git_work_tree_top(dir).value_or(dir);
  return defaults;
}

Config load_config_file(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    throw ConfigError(fmt::format("{}: configuration file not found", file.string()));
  return *try_load(file, true);
}

}  // namespace kvlint
