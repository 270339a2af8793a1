// The kvlint command line: check, rules, explain, facts, confirm, report.
// Exit codes: 0 clean, 1 findings at or above the fail level, 2 usage or configuration error.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "analyzers/facts/facts_json.hpp"
#include "analyzers/python/python_frontend.hpp"
#include "rules/registry.hpp"
#include "tools/kvlint/config/config.hpp"
#include "tools/kvlint/confirm/confirm.hpp"
#include "tools/kvlint/confirm/findings_input.hpp"
#include "tools/kvlint/confirm/review_input.hpp"
#include "tools/kvlint/engine/cpp_module.hpp"
#include "tools/kvlint/engine/engine.hpp"
#include "tools/kvlint/engine/fixes.hpp"
#include "tools/kvlint/engine/sanitized_build.hpp"
#include "tools/kvlint/engine/result_cache.hpp"
#include "tools/kvlint/engine/source_file.hpp"
#include "tools/kvlint/reporters/reporters.hpp"
#include "tools/kvlint/review/baseline.hpp"
#include "tools/kvlint/review/changed_lines.hpp"

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
--diff REF reports the findings with a location (primary or related) on a line
changed since the merge base of REF and HEAD, uncommitted and untracked files
included; --baseline FILE hides the findings an earlier report already had;
the exit status counts only the findings reported. --write-baseline FILE
records every finding of the run and exits 0 whatever it found.
--fix applies the fixes, then reports and exits on what remains; --fix --dry-run prints
the fixes as a unified diff (no report: not with --format or --output), changes nothing,
and exits 1 when it would change a file.)";

struct CheckArgs {
  std::vector<std::string> paths;
  std::string format = "text";
  std::string output;
  bool exit_zero = false;
  bool statistics = false;
  bool no_cache = false;
  bool no_defer = false;
  std::string cache_dir;
  std::string compile_commands;  // -p
  std::string config_file;
  std::vector<std::string> select, ignore, extend_select;
  bool given_select = false, given_ignore = false;  // an option given with an empty value still counts
  std::string fail_on;
  unsigned jobs = 0;
  std::string color = "auto";
  bool force_exclude = false;
  bool quiet = false;
  bool verbose = false;
  bool given_diff = false;
  std::string diff_ref;        // --diff: report what changed since the merge base with this
  std::string baseline;        // --baseline: a JSON or SARIF report of known findings
  std::string write_baseline;  // --write-baseline: record every finding here
  std::string list_parsed;     // --list-parsed: the files parsed this run (bench/run's parser floor)
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
  int64_t max_num_seqs = 0;
};

struct ReportArgs {
  std::string findings, confirm, base_confirm;
  std::string root;  // --root: the project the findings were produced for
  std::string format = "html";
  std::string output;
  int64_t max_num_seqs = 0;  // 0: no projection
};

// Writes a finished report to FILE atomically, or to stdout.
void emit_report(const std::string& output, const std::string& report) {
  if (!output.empty()) {
    std::string error;
    if (!kvlint::write_output_file(output, report, error))
      throw UsageError(fmt::format("--output: {}", error));
  } else {
    std::fwrite(report.data(), 1, report.size(), stdout);
    if (!stdout_is_intact()) throw StdoutError();
  }
}

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

// `run_state` gets what the run built (CheckOptions::retain_run_state), for main to exit without
// freeing it.
int run_check_command(const CheckArgs& args, std::shared_ptr<void>& run_state) {
  kvlint::CheckOptions options;
  // Sanitizer builds free everything before exiting, so the leak checker sees a whole run.
  options.retain_run_state = !kvlint::kSanitizedBuild;
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
  // As ruff's --diff, --dry-run prints the diff and no report: a report asked for with it would
  // silently not be written.
  if (args.dry_run && (args.format != "text" || !args.output.empty()))
    throw UsageError(fmt::format(
        "--fix --dry-run prints the fixes as a diff and writes no report, so {} does not apply; run "
        "--fix --dry-run for the diff and `kvlint check` for the report",
        args.output.empty() ? "--format " + args.format : std::string("--output")));

  for (const auto& p : args.paths) options.paths.emplace_back(p);
  if (options.paths.empty()) options.paths.emplace_back(".");
  // --config governs every file; otherwise each file gets its nearest config file.
  if (args.config_file.empty())
    options.nearest_config = true;
  else
    options.config = kvlint::load_config_file(args.config_file);
  options.use_cache = !args.no_cache;
  options.defer_context = !args.no_defer;
  if (!args.cache_dir.empty()) options.cache_dir = args.cache_dir;
  if (!args.compile_commands.empty()) options.compile_commands = args.compile_commands;
  options.jobs = args.jobs;
  options.force_exclude = args.force_exclude;

  // --diff and --baseline narrow the report, never the analysis: a declaration in
  // an unchanged file still resolves, and an edit that breaks coverage elsewhere
  // still shows through the finding's related locations.
  std::optional<kvlint::review::ChangedLines> changed;
  std::optional<kvlint::review::Baseline> baseline;
  try {
    if (args.given_diff)
      changed = kvlint::review::changed_since_merge_base(args.diff_ref, options.paths.front());
    if (!args.baseline.empty()) baseline = kvlint::review::Baseline::load(args.baseline);
  } catch (const kvlint::review::GitError& e) {
    throw UsageError(e.what());
  } catch (const kvlint::review::BaselineError& e) {
    throw UsageError(fmt::format("--baseline: {}", e.what()));
  }
  const bool write_baseline = !args.write_baseline.empty();
  std::vector<kvlint::Finding> every_finding;  // for --write-baseline, whatever the report shows
  std::size_t hidden_by_baseline = 0, hidden_by_diff = 0;
  if (changed || baseline || write_baseline)
    options.report_filter = [&](const kvlint::Finding& f) {
      if (write_baseline) every_finding.push_back(f);
      const bool known = baseline && baseline->absorbs(f);  // every finding, so "fixed" counts right
      hidden_by_baseline += known ? 1 : 0;
      if (known) return false;
      const bool touched = !changed || changed->touches(f);
      hidden_by_diff += touched ? 0 : 1;
      return touched;
    };
  kvlint::CheckResult result = kvlint::run_check(options);
  run_state = std::move(result.run_state);
  if (args.fix) {
    const auto fixed = run_fixes(args, result);
    if (args.dry_run) return fixed.files_changed > 0 ? kExitFindings : kExitClean;
    if (fixed.files_changed > 0) {  // report what remains
      every_finding.clear();
      hidden_by_baseline = hidden_by_diff = 0;
      result = kvlint::run_check(options);
      run_state = std::move(result.run_state);
    }
  }
  // A file the change did not touch stays silent about its input problems too (a
  // parse error there would otherwise be annotated on every pull request).
  if (changed)
    std::erase_if(result.diagnostics, [&](const kvlint::Diagnostic& d) {
      return !d.path.empty() && !changed->touches_file(d.path);
    });

  if (!args.quiet)
    for (const auto& note : result.notes) fmt::print(stderr, "kvlint: note: {}\n", note);
  if (args.verbose) {
    const auto& s = result.stats;
    fmt::print(
        stderr,
        "kvlint: stats: files_found={} files_context={} files_parsed={} files_cached={} files_skipped={} "
        "files_deferred={} files_failed={} files_unread={} bytes_read={} bytes_reread={} bytes_parsed={} "
        "rule_rounds={} findings={} suppressed={} diagnostics={}\n",
        s.files_found, s.files_context, s.files_parsed, s.files_cached, s.files_skipped, s.files_deferred,
        s.files_failed, s.files_unread, s.bytes_read, s.bytes_reread, s.bytes_parsed, s.rule_rounds,
        result.findings.size(), result.suppressed, result.diagnostics.size());
    for (const auto& detail : result.details) fmt::print(stderr, "kvlint: {}\n", detail);
    if (changed)
      fmt::print(stderr, "kvlint: --diff {}: {} changed files\n", args.diff_ref, changed->file_count());
  }
  if (changed && !args.quiet && hidden_by_diff > 0)
    fmt::print(stderr, "kvlint: --diff {}: {} finding{} on lines this change did not touch not shown\n",
               args.diff_ref, hidden_by_diff, hidden_by_diff == 1 ? "" : "s");
  if (baseline && !args.quiet)
    fmt::print(stderr, "kvlint: baseline {}: {} of its {} findings fixed, {} still present (not reported)\n",
               args.baseline, baseline->unmatched(), baseline->size(), hidden_by_baseline);

  kvlint::ReportOptions report_options;
  const bool to_terminal = args.output.empty() && ::isatty(STDOUT_FILENO) == 1;
  report_options.color =
      args.color == "always" || (args.color == "auto" && to_terminal && !std::getenv("NO_COLOR"));
  report_options.statistics = args.statistics;
  report_options.tool_version = std::string(kvlint::kKvlintVersion);
  // Before the report: a baseline that cannot be written is exit 2 with nothing on stdout.
  if (write_baseline) {
    kvlint::CheckResult recorded = result;
    recorded.findings = std::move(every_finding);
    std::string error;
    if (!kvlint::write_output_file(
            args.write_baseline, kvlint::render_report(recorded, kvlint::OutputFormat::Json, report_options),
            error))
      throw UsageError(fmt::format("--write-baseline: {}", error));
    if (!args.quiet)
      fmt::print(stderr, "kvlint: wrote a baseline of {} findings to {}\n", recorded.findings.size(),
                 args.write_baseline);
  }

  if (!args.list_parsed.empty()) {
    std::string listing;
    for (const auto& p : result.parsed_files)
      listing +=
          fmt::format("{}\t{}\t{}\t{}\n", p.cpp ? "cpp" : "python", p.parses, p.bytes, p.path.string());
    std::string error;
    if (!kvlint::write_output_file(args.list_parsed, listing, error))
      throw UsageError(fmt::format("--list-parsed: {}", error));
  }
  emit_report(args.output, kvlint::render_report(result, format, report_options));

  if (args.exit_zero || write_baseline) return kExitClean;
  if (result.findings_failing > 0) return kExitFindings;
  const auto& s = result.stats;
  const std::size_t analysed = s.files_parsed + s.files_cached + s.files_skipped + s.files_deferred;
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
  if (config.is_cpp_name(file)) {
    const kvlint::CppFrontEndModule module;
    if (!module.loaded()) throw UsageError(module.problem());
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(file, ec);
    const kvlint::facts::CppProjectSettings settings = kvlint::cpp_project_settings(
        config, kvlint::find_compile_database({}, config.cpp.compile_commands, config.root));
    const auto analyzer = module.make(config.vocabulary, settings);
    if (!analyzer) throw UsageError(fmt::format("{} is stale; rebuild kvlint", module.path().string()));
    const kvlint::facts::CppAnalysis analysis =
        analyzer->analyze(file, absolute, read.content, analyzer->command_for(absolute));
    fmt::print("{}\n", kvlint::facts::to_json(analysis.facts).dump(2));
    if (!analysis.full_types)
      fmt::print(
          stderr, "kvlint: {}: analysed without full types ({} error(s){}{})\n", file, analysis.errors,
          analysis.missing_headers.empty() ? "" : "; missing: ", fmt::join(analysis.missing_headers, ", "));
    return kExitClean;
  }
  const kvlint::facts::FileFacts facts = kvlint::python::analyze(file, read.content, config.vocabulary);
  fmt::print("{}\n", kvlint::facts::to_json(facts).dump(2));
  return kExitClean;
}

// `kvlint report`: the reviewer report from saved check and confirm output.
int run_report_command(const ReportArgs& args) {
  namespace confirm = kvlint::confirm;
  if (args.findings.empty() && args.confirm.empty())
    throw UsageError(
        "report: give --findings (kvlint check --format json) and/or --confirm (kvlint confirm "
        "--format json)");
  if (!args.base_confirm.empty() && args.confirm.empty())
    throw UsageError("report: --base-confirm compares against --confirm; give both");
  constexpr std::string_view kCheckProducer = "kvlint check --format json";
  constexpr std::string_view kConfirmProducer = "kvlint confirm --format json";
  try {
    kvlint::CheckResult findings;
    std::optional<kvlint::ReviewData> review;
    if (!args.confirm.empty()) {
      const auto document = confirm::read_document(args.confirm, "kvlint-confirm", kConfirmProducer);
      review = confirm::review_from_confirm(document, args.confirm);
      if (args.findings.empty()) findings = confirm::check_result_from_confirm(document, args.confirm);
      if (args.max_num_seqs > 0) review->max_num_seqs = args.max_num_seqs;
      if (!args.base_confirm.empty())
        review->base_memory = confirm::memory_from_confirm(
            confirm::read_document(args.base_confirm, "kvlint-confirm", kConfirmProducer), args.base_confirm);
    }
    if (!args.findings.empty())
      findings = confirm::check_result_from_findings(
          confirm::read_document(args.findings, "kvlint-findings", kCheckProducer), args.findings);
    kvlint::ReportOptions options;
    options.tool_version = std::string(kvlint::kKvlintVersion);
    if (review) options.review = &*review;
    // The findings file is input: its paths may name any file on the machine. Excerpts come only
    // from the project the findings were produced for.
    std::error_code ec;
    const fs::path cwd = fs::current_path(ec);
    options.source_root =
        !args.root.empty() ? fs::path(args.root) : kvlint::git_work_tree_top(cwd).value_or(cwd);
    emit_report(args.output, kvlint::render_report(findings,
                                                   args.format == "markdown" ? kvlint::OutputFormat::Markdown
                                                                             : kvlint::OutputFormat::Html,
                                                   options));
  } catch (const confirm::InputError& e) {
    throw UsageError(e.what());
  }
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
  if (args.max_num_seqs > 0) options.max_num_seqs = args.max_num_seqs;
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
  CLI::App* check = app.add_subcommand("check", "Check Python and C++ files and directories (default: .)");
  check->footer(kCheckFooter);
  check->add_option("paths", check_args.paths, "Files or directories to check");
  check->add_option("--format", check_args.format, "Output format")
      ->check(CLI::IsMember({"text", "json", "sarif", "github", "markdown", "html"}));
  check->add_option("--output,-o", check_args.output,
                    "Write the report to FILE (atomically) instead of stdout");
  check->add_flag("--exit-zero", check_args.exit_zero, "Exit 0 even when findings are reported");
  check->add_flag("--statistics", check_args.statistics, "Show counts per rule instead of each finding");
  check->add_flag("--no-cache", check_args.no_cache, "Neither read nor write the per-file result cache");
  check->add_flag(
      "--no-defer", check_args.no_defer,
      "Analyse up front every file that names the vocabulary, also those that can only give "
      "context and that kvlint otherwise analyses when a rule needs them (same findings, slower)");
  check->add_option("-p,--compile-commands", check_args.compile_commands,
                    "C++ files: the directory holding compile_commands.json (or the file)");
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
  CLI::Option* diff_option =
      check
          ->add_option(
              "--diff", check_args.diff_ref,
              "Report only findings on lines changed since the merge base of REF and HEAD (git diff REF...), "
              "uncommitted edits included")
          ->type_name("REF");
  check
      ->add_option("--baseline", check_args.baseline,
                   "Report only findings not in FILE (a kvlint JSON or SARIF report)")
      ->type_name("FILE");
  check
      ->add_option("--list-parsed", check_args.list_parsed,
                   "Write the files parsed this run to FILE: language, parses, bytes, path (tab-separated)")
      ->type_name("FILE");
  check
      ->add_option("--write-baseline", check_args.write_baseline,
                   "Write every finding of this run to FILE (JSON, atomically) and exit 0")
      ->type_name("FILE");

  std::string rules_format = "text";
  CLI::App* rules = app.add_subcommand("rules", "List every rule");
  rules->add_option("--format", rules_format, "text or json")->check(CLI::IsMember({"text", "json"}));

  std::string explain_code;
  CLI::App* explain = app.add_subcommand("explain", "Print the documentation of a rule");
  explain->add_option("code", explain_code, "Rule code, e.g. KV101")->required();

  std::string facts_file, facts_config;
  CLI::App* facts_cmd =
      app.add_subcommand("facts", "Debug: print the facts the front end extracts from FILE as JSON");
  facts_cmd->add_option("file", facts_file, "A Python or C++ file")->required();
  facts_cmd->add_option("--config", facts_config, "Use this pyproject.toml or kvlint.toml");

  ConfirmArgs confirm_args;
  CLI::App* confirm = app.add_subcommand("confirm", "Boot flagged models and confirm findings at runtime");
  confirm->add_option("paths", confirm_args.paths,
                      "Files or directories to check when no --findings is given");
  confirm->add_option("--findings", confirm_args.findings, "Findings JSON from `kvlint check --format json`");
  confirm->add_option("--format", confirm_args.format, "text, json, sarif, markdown or html")
      ->check(CLI::IsMember({"text", "json", "sarif", "markdown", "html"}));
  confirm
      ->add_option("--max-num-seqs", confirm_args.max_num_seqs,
                   "markdown/html: project each model's local KV to this engine max_num_seqs")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
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

  ReportArgs report_args;
  CLI::App* report = app.add_subcommand(
      "report",
      "Reviewer report (HTML or Markdown) from check and confirm JSON, written whole or not at all");
  report->add_option("--findings", report_args.findings, "Findings JSON from `kvlint check --format json`");
  report->add_option("--confirm", report_args.confirm, "Results JSON from `kvlint confirm --format json`");
  report->add_option("--base-confirm", report_args.base_confirm,
                     "Confirm JSON of the base revision: show the change in declared bytes");
  report
      ->add_option("--max-num-seqs", report_args.max_num_seqs,
                   "Project each model's local KV to this engine max_num_seqs")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  report->add_option(
      "--root", report_args.root,
      "Project root the findings were produced for: source excerpts come only from files "
      "under it (default: the git work tree holding the working directory, else the directory)");
  report->add_option("--format", report_args.format, "html (default) or markdown")
      ->check(CLI::IsMember({"html", "markdown"}));
  report->add_option("--output,-o", report_args.output,
                     "Write the report to FILE (atomically) instead of stdout");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // help and --version go to stdout with code 0; errors to stderr
    return code == 0 ? kExitClean : kExitUsage;
  }
  check_args.given_select = select_option->count() > 0;
  check_args.given_ignore = ignore_option->count() > 0;
  check_args.given_diff = diff_option->count() > 0;

  try {
    int code = kExitUsage;
    std::shared_ptr<void> run_state;  // a check run's facts and caches, left for the exit to free
    if (*check || *facts_cmd)
      if (const std::string problem = kvlint::python::grammar_problem(); !problem.empty())
        throw std::runtime_error(problem);
    if (*check) code = run_check_command(check_args, run_state);
    if (*rules) code = run_rules_command(rules_format);
    if (*explain) code = run_explain_command(explain_code);
    if (*facts_cmd) code = run_facts_command(facts_file, facts_config);
    if (*confirm) code = run_confirm_command(confirm_args);
    if (*report) code = run_report_command(report_args);
    const int status = stdout_is_intact() ? code : stdout_failure();
    if (run_state) {
      // The report is written (a file: whole, by rename) and stdout flushed: the process ends
      // without freeing the run's facts, which was a sixth of a pre-commit-sized run.
      std::fflush(stderr);
      std::_Exit(status);
    }
    return status;
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
