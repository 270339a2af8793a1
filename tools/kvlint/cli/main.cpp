// The kvlint command line: check, rules, explain, facts, confirm.
// Exit codes: 0 clean, 1 findings at or above the fail level, 2 usage or configuration error.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyzers/facts/facts_json.hpp"
#include "analyzers/python/python_frontend.hpp"
#include "rules/registry.hpp"
#include "tools/kvlint/config/config.hpp"
#include "tools/kvlint/confirm/confirm.hpp"
#include "tools/kvlint/engine/engine.hpp"
#include "tools/kvlint/engine/fixes.hpp"
#include "tools/kvlint/engine/result_cache.hpp"
#include "tools/kvlint/engine/source_file.hpp"
#include "tools/kvlint/reporters/reporters.hpp"

namespace {

namespace fs = std::filesystem;
using kvlint::ConfigError;

constexpr int kExitClean = 0;
constexpr int kExitFindings = 1;
constexpr int kExitUsage = 2;

// A usage error found after parsing (bad code in --select, unreadable file for `facts`).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The report could not be written to standard output (a full disk, /dev/full,
// a closed descriptor): the run failed, whatever it found.
struct StdoutError : std::runtime_error {
  StdoutError() : std::runtime_error("cannot write the report to standard output") {}
};

// Flushes stdout (and std::cout, which shares it) and says whether every write
// so far reached it.
bool stdout_is_intact() {
  std::cout.flush();
  return std::fflush(stdout) == 0 && !std::ferror(stdout) && std::cout.good();
}

int stdout_failure() {
  const int error = errno;
  fmt::print(stderr, "kvlint: error: cannot write the report to standard output{}\n",
             error != 0 ? fmt::format(": {}", std::strerror(error)) : std::string());
  return kExitUsage;
}

constexpr const char* kCheckFooter = R"(Exit status:
  0  no finding at or above the fail level (--fail-on, default "warning")
  1  a finding at or above the fail level; or files were named or found but none
     could be analysed (all missing, unreadable, binary, not UTF-8 or too large)
  2  usage or configuration error (message on stderr, nothing on stdout)
Diagnostics about single files (parse errors, binary files, invalid UTF-8,
dangling links) are reported but do not by themselves fail the run.
--select and --ignore replace the configured lists; --extend-select adds to them.
--fix applies the fixes, then reports and exits on what remains; --fix --dry-run prints
the fixes as a unified diff, changes nothing, and exits 1 when it would change a file.)";

struct CheckArgs {
  std::vector<std::string> paths;
  std::string format = "text";
  std::string output;
  bool exit_zero = false;
  bool statistics = false;
  bool no_cache = false;
  std::string cache_dir;
  std::string config_file;
  std::vector<std::string> select, ignore, extend_select;
  bool given_select = false, given_ignore = false;  // an option given with an empty value still counts
  std::string fail_on;
  unsigned jobs = 0;
  std::string color = "auto";
  bool force_exclude = false;
  bool quiet = false;
  bool verbose = false;
  bool fix = false;
  bool unsafe_fixes = false;
  bool dry_run = false;
};

struct ConfirmArgs {
  std::vector<std::string> paths;
  std::string findings;
  std::string format = "text";
  std::string output;
  std::vector<std::string> models;
  bool all = false;
  std::string device;
  std::string config_file;
};

kvlint::Config load_config(const std::string& explicit_file, const std::vector<std::string>& paths) {
  if (!explicit_file.empty()) return kvlint::load_config_file(explicit_file);
  return kvlint::discover_config(paths.empty() ? fs::path(".") : fs::path(paths.front()));
}

std::vector<std::string> validated_codes(const std::vector<std::string>& codes, std::string_view option) {
  std::vector<std::string> out;
  for (const auto& c : codes) {
    // An empty value is usually an unset variable (`--select "$CODES"`): never read it as "no rule".
    if (c.empty())
      throw UsageError(
          fmt::format("{}: empty rule code (an unset variable?); name codes or prefixes, e.g. "
                      "{} KV101,KV2",
                      option, option));
    if (!kvlint::is_known_rule_code_or_prefix(c))
      throw UsageError(fmt::format("{}: unknown rule code or prefix '{}' (see `kvlint rules`)", option, c));
    out.push_back(c);
  }
  return out;
}

// Applies (or, with --dry-run, prints as a unified diff) the findings' fixes, and says on
// stderr how many were fixed, as ruff does; the report that follows lists what remains.
kvlint::FixOutcome run_fixes(const CheckArgs& args, const kvlint::CheckResult& result) {
  const kvlint::FixOutcome outcome = kvlint::apply_fixes(result, {args.unsafe_fixes, args.dry_run});
  for (const auto& note : outcome.notes) fmt::print(stderr, "kvlint: note: {}\n", note);
  if (args.dry_run) {
    std::fwrite(outcome.diff.data(), 1, outcome.diff.size(), stdout);
    if (!stdout_is_intact()) throw StdoutError();
  }
  if (!args.quiet) {
    fmt::print(stderr, "kvlint: {} {} finding{} in {} file{}.\n", args.dry_run ? "would fix" : "fixed",
               outcome.fixed, outcome.fixed == 1 ? "" : "s", outcome.files_changed,
               outcome.files_changed == 1 ? "" : "s");
    if (outcome.unsafe_hidden > 0)
      fmt::print(stderr, "kvlint: {} more fix{} available with --unsafe-fixes.\n", outcome.unsafe_hidden,
                 outcome.unsafe_hidden == 1 ? "" : "es");
  }
  return outcome;
}

int run_check_command(const CheckArgs& args) {
  kvlint::CheckOptions options;
  if (args.given_select) options.overrides.select = validated_codes(args.select, "--select");
  if (args.given_ignore) options.overrides.ignore = validated_codes(args.ignore, "--ignore");
  options.overrides.extend_select = validated_codes(args.extend_select, "--extend-select");
  if (!args.fail_on.empty()) {
    kvlint::Severity fail_on{};
    if (!kvlint::parse_severity(args.fail_on, fail_on))
      throw UsageError(fmt::format("--fail-on: expected error, warning or info, got '{}'", args.fail_on));
    options.overrides.fail_on = fail_on;
  }
  kvlint::OutputFormat format{};
  if (!kvlint::parse_output_format(args.format, format))
    throw UsageError(fmt::format("--format: unsupported format '{}'", args.format));

  for (const auto& p : args.paths) options.paths.emplace_back(p);
  if (options.paths.empty()) options.paths.emplace_back(".");
  // --config governs every file; otherwise each file gets its nearest config file.
  if (args.config_file.empty())
    options.nearest_config = true;
  else
    options.config = kvlint::load_config_file(args.config_file);
  options.use_cache = !args.no_cache;
  if (!args.cache_dir.empty()) options.cache_dir = args.cache_dir;
  options.jobs = args.jobs;
  options.force_exclude = args.force_exclude;
  kvlint::CheckResult result = kvlint::run_check(options);
  if (args.fix) {
    const auto fixed = run_fixes(args, result);
    if (args.dry_run) return fixed.files_changed > 0 ? kExitFindings : kExitClean;
    if (fixed.files_changed > 0) result = kvlint::run_check(options);  // report what remains
  }

  if (!args.quiet)
    for (const auto& note : result.notes) fmt::print(stderr, "kvlint: note: {}\n", note);
  if (args.verbose) {
    const auto& s = result.stats;
    fmt::print(
        stderr,
        "kvlint: stats: files_found={} files_context={} files_parsed={} files_cached={} files_skipped={} "
        "files_failed={} bytes_read={} findings={} suppressed={} diagnostics={}\n",
        s.files_found, s.files_context, s.files_parsed, s.files_cached, s.files_skipped, s.files_failed,
        s.bytes_read, result.findings.size(), result.suppressed, result.diagnostics.size());
    for (const auto& detail : result.details) fmt::print(stderr, "kvlint: {}\n", detail);
  }

  kvlint::ReportOptions report_options;
  const bool to_terminal = args.output.empty() && ::isatty(STDOUT_FILENO) == 1;
  report_options.color =
      args.color == "always" || (args.color == "auto" && to_terminal && !std::getenv("NO_COLOR"));
  report_options.statistics = args.statistics;
  report_options.tool_version = std::string(kvlint::kKvlintVersion);
  const std::string report = kvlint::render_report(result, format, report_options);
  if (!args.output.empty()) {
    std::string error;
    if (!kvlint::write_output_file(args.output, report, error))
      throw UsageError(fmt::format("--output: {}", error));
  } else {
    std::fwrite(report.data(), 1, report.size(), stdout);
    if (!stdout_is_intact()) throw StdoutError();
  }

  if (args.exit_zero) return kExitClean;
  if (result.findings_failing > 0) return kExitFindings;
  const auto& s = result.stats;
  const std::size_t analysed = s.files_parsed + s.files_cached + s.files_skipped;
  if (analysed == 0 && s.files_failed > 0) return kExitFindings;
  return kExitClean;
}

int run_rules_command(const std::string& format) {
  const auto infos = kvlint::all_rule_infos();
  if (format == "json") {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& info : infos)
      out.push_back({{"code", info.code},
                     {"name", info.name},
                     {"severity", kvlint::to_string(info.severity)},
                     {"summary", info.summary},
                     {"engine", kvlint::is_engine_rule(info.code)}});
    fmt::print("{}\n", out.dump(2));
    return kExitClean;
  }
  for (const auto& info : infos)
    fmt::print("{}  {:<44} {:<8} {}\n", info.code, info.name, kvlint::to_string(info.severity), info.summary);
  return kExitClean;
}

int run_explain_command(std::string code) {
  for (auto& c : code) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const kvlint::RuleInfo* info = kvlint::find_rule_info(code);
  if (!info) throw UsageError(fmt::format("unknown rule code '{}' (see `kvlint rules`)", code));
  fmt::print("# {} {} ({})\n\n{}\n\n{}", info->code, info->name, kvlint::to_string(info->severity),
             info->summary, info->doc);
  if (!info->doc.empty() && info->doc.back() != '\n') fmt::print("\n");
  return kExitClean;
}

int run_facts_command(const std::string& file, const std::string& config_file) {
  const kvlint::Config config = load_config(config_file, {file});
  const kvlint::ReadOutcome read = kvlint::read_source(file, file);
  if (read.problem)
    throw UsageError(fmt::format("{}: {} ({})", file, read.problem->message, read.problem->kind));
  const kvlint::facts::FileFacts facts = kvlint::python::analyze(file, read.content, config.vocabulary);
  fmt::print("{}\n", kvlint::facts::to_json(facts).dump(2));
  return kExitClean;
}

int run_confirm_command(const ConfirmArgs& args) {
  kvlint::ConfirmOptions options;
  for (const auto& p : args.paths) options.paths.emplace_back(p);
  if (options.paths.empty()) options.paths.emplace_back(".");
  options.findings_file = args.findings;
  options.config = load_config(args.config_file, args.paths);
  options.format = args.format;
  options.output = args.output;
  options.models = args.models;
  options.all = args.all;
  options.device_override = args.device;
  return kvlint::run_confirm(options);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "kvlint: finds attention KV caches a model keeps outside the serving engine\n"
      "and checks them against the model's model_local_kv_specs() declarations."};
  app.set_version_flag("--version", std::string(kvlint::kKvlintVersion));
  app.require_subcommand(1);

  CheckArgs check_args;
  CLI::App* check = app.add_subcommand("check", "Check Python files and directories (default: .)");
  check->footer(kCheckFooter);
  check->add_option("paths", check_args.paths, "Files or directories to check");
  check->add_option("--format", check_args.format, "Output format")
      ->check(CLI::IsMember({"text", "json", "sarif", "github", "markdown"}));
  check->add_option("--output,-o", check_args.output,
                    "Write the report to FILE (atomically) instead of stdout");
  check->add_flag("--exit-zero", check_args.exit_zero, "Exit 0 even when findings are reported");
  check->add_flag("--statistics", check_args.statistics, "Show counts per rule instead of each finding");
  check->add_flag("--no-cache", check_args.no_cache, "Neither read nor write the per-file result cache");
  check->add_option("--cache-dir", check_args.cache_dir,
                    "Cache directory (default: <config root>/.kvlint_cache)");
  check->add_option("--config", check_args.config_file, "Use this pyproject.toml or kvlint.toml");
  // Each of these takes exactly one value (a comma list, or repeat the option), so a
  // path after it is never read as a code.
  CLI::Option* select_option =
      check
          ->add_option("--select", check_args.select,
                       "Codes or prefixes to check, comma-separated or repeated (replaces config)")
          ->delimiter(',')
          ->allow_extra_args(false);
  CLI::Option* ignore_option =
      check
          ->add_option("--ignore", check_args.ignore,
                       "Codes or prefixes to skip, comma-separated or repeated (replaces config)")
          ->delimiter(',')
          ->allow_extra_args(false);
  check
      ->add_option("--extend-select", check_args.extend_select,
                   "Codes or prefixes to add, comma-separated or repeated")
      ->delimiter(',')
      ->allow_extra_args(false);
  check
      ->add_option("--fail-on", check_args.fail_on,
                   "Lowest severity that fails the run: error, warning, info")
      ->check(CLI::IsMember({"error", "warning", "info"}));
  check->add_option("--jobs,-j", check_args.jobs, "Worker threads (default: all cores)")
      ->check(CLI::Range(0u, 4096u));
  check->add_option("--color", check_args.color, "Colour text output: auto (a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  check->add_flag("--force-exclude", check_args.force_exclude,
                  "Apply exclude globs to paths named explicitly too");
  check->add_flag("--quiet,-q", check_args.quiet, "Print no notes on stderr");
  check->add_flag("--fix", check_args.fix,
                  "Apply safe fixes (unused suppressions), then report what remains");
  check
      ->add_flag("--unsafe-fixes", check_args.unsafe_fixes,
                 "With --fix, also write declaration skeletons for KV101/KV102")
      ->needs(check->get_option("--fix"));
  check
      ->add_flag("--dry-run", check_args.dry_run,
                 "With --fix: print the fixes as a unified diff on stdout and change nothing")
      ->needs(check->get_option("--fix"));
  check->add_flag("--verbose,-v", check_args.verbose,
                  "Print a statistics line (files parsed, cached, ...) on stderr");

  std::string rules_format = "text";
  CLI::App* rules = app.add_subcommand("rules", "List every rule");
  rules->add_option("--format", rules_format, "text or json")->check(CLI::IsMember({"text", "json"}));

  std::string explain_code;
  CLI::App* explain = app.add_subcommand("explain", "Print the documentation of a rule");
  explain->add_option("code", explain_code, "Rule code, e.g. KV101")->required();

  std::string facts_file, facts_config;
  CLI::App* facts_cmd =
      app.add_subcommand("facts", "Debug: print the facts the front end extracts from FILE as JSON");
  facts_cmd->add_option("file", facts_file, "A Python file")->required();
  facts_cmd->add_option("--config", facts_config, "Use this pyproject.toml or kvlint.toml");

  ConfirmArgs confirm_args;
  CLI::App* confirm = app.add_subcommand("confirm", "Boot flagged models and confirm findings at runtime");
  confirm->add_option("paths", confirm_args.paths,
                      "Files or directories to check when no --findings is given");
  confirm->add_option("--findings", confirm_args.findings, "Findings JSON from `kvlint check --format json`");
  confirm->add_option("--format", confirm_args.format, "text, json or sarif")
      ->check(CLI::IsMember({"text", "json", "sarif"}));
  confirm->add_option("--output,-o", confirm_args.output, "Write the report to FILE (atomically)");
  auto* model_option =
      confirm
          ->add_option("--model", confirm_args.models, "Only these boot entries, comma-separated or repeated")
          ->delimiter(',')
          ->allow_extra_args(false);
  confirm
      ->add_flag("--all", confirm_args.all,
                 "Boot every configured entry, flagged or not (declared-vs-observed drift needs no finding)")
      ->excludes(model_option);
  confirm->add_option("--device", confirm_args.device, "Override the device: cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  confirm->add_option("--config", confirm_args.config_file, "Use this pyproject.toml or kvlint.toml");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // help and --version go to stdout with code 0; errors to stderr
    return code == 0 ? kExitClean : kExitUsage;
  }
  check_args.given_select = select_option->count() > 0;
  check_args.given_ignore = ignore_option->count() > 0;

  try {
    int code = kExitUsage;
    if (*check) code = run_check_command(check_args);
    if (*rules) code = run_rules_command(rules_format);
    if (*explain) code = run_explain_command(explain_code);
    if (*facts_cmd) code = run_facts_command(facts_file, facts_config);
    if (*confirm) code = run_confirm_command(confirm_args);
    return stdout_is_intact() ? code : stdout_failure();
  } catch (const StdoutError&) {
    return stdout_failure();
  } catch (const ConfigError& e) {
    fmt::print(stderr, "kvlint: configuration error: {}\n", e.what());
    return kExitUsage;
  } catch (const UsageError& e) {
    fmt::print(stderr, "kvlint: error: {}\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    // fmt::print throws when stdout fails mid-report: that is a write error, not a bug.
    if (std::ferror(stdout)) return stdout_failure();
    fmt::print(stderr, "kvlint: internal error: {}\n", e.what());
    return kExitUsage;
  }
}
