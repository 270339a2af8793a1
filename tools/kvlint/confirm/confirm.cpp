#include "tools/kvlint/confirm/confirm.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <iostream>

#include "rules/registry.hpp"
#include "tools/kvlint/confirm/findings_input.hpp"
#include "tools/kvlint/confirm/interrupt.hpp"
#include "tools/kvlint/confirm/nvml.hpp"
#include "tools/kvlint/confirm/reconcile.hpp"
#include "tools/kvlint/confirm/runner.hpp"
#include "tools/kvlint/confirm/writers.hpp"
#include "tools/kvlint/engine/engine.hpp"

namespace kvlint {
namespace {

std::vector<confirm::InputFinding> findings_from_check(const ConfirmOptions& options) {
  CheckOptions check;
  check.paths = options.paths;
  if (check.paths.empty()) check.paths.push_back(options.config.root.empty() ? "." : options.config.root);
  check.config = options.config;
  CheckResult result = run_check(check);
  std::vector<confirm::InputFinding> out;
  for (auto& finding : result.findings) {
    std::string name;
    if (const RuleInfo* info = find_rule_info(finding.code)) name = std::string(info->name);
    out.push_back({std::move(finding), std::move(name)});
  }
  return out;
}

}  // namespace

int run_confirm(const ConfirmOptions& options) {
  using namespace confirm;
  try {
    if (options.format != "text" && options.format != "json" && options.format != "sarif" &&
        options.format != "markdown" && options.format != "html")
      throw InputError(
          fmt::format("unknown format \"{}\" (text, json, sarif, markdown or html)", options.format));
    if (!options.device_override.empty() && options.device_override != "cpu" &&
        options.device_override != "cuda")
      throw InputError(fmt::format("unknown device \"{}\" (cpu or cuda)", options.device_override));

    std::vector<InputFinding> findings = options.findings_file.empty()
                                             ? findings_from_check(options)
                                             : load_findings_file(options.findings_file);
    auto entries = select_entries(findings, options.config, options.models, options.all);
    for (const auto& entry : entries) validate_entry(*entry.model);

    RunSettings settings;
    settings.device_override = options.device_override;
    if (!entries.empty()) {
      settings.runtime_pythonpath = locate_runtime_pythonpath();
      if (settings.runtime_pythonpath.empty())
        throw InputError(
            "cannot find runtime/python (the kvlint_runtime harness); set KVLINT_RUNTIME_PYTHONPATH to its "
            "directory");
    }
    NvmlSampler nvml;  // absent library or GPU: no samples, not an error
    settings.nvml = &nvml;

    // From here on SIGINT/SIGTERM/SIGHUP stop the run in order: the running
    // child's process group and what the host adopted are killed, its
    // ENTRY.json directory removed, and no report is written (exit 128+N).
    InterruptWatch interrupt;
    settings.interrupt_fd = interrupt.fd();
    auto interrupted = [&interrupt]() {
      const int signal = interrupt.received();
      if (signal != 0)
        std::fprintf(stderr, "kvlint confirm: interrupted by %s; stopped the model processes, no report\n",
                     signal_name(signal).c_str());
      return signal;
    };

    std::vector<ModelRun> runs;
    for (const auto& entry : entries) {
      if (int signal = interrupted()) return 128 + signal;
      runs.push_back(run_model(entry, options.config, settings));
      if (int signal = interrupted()) return 128 + signal;
      // Stream progress as each model finishes; the report itself is written once, atomically.
      std::fputs((model_progress_line(runs.back()) + "\n").c_str(), stderr);
    }
    if (entries.empty())
      std::fputs(options.all ? "kvlint confirm: no boot entry is configured; nothing to run\n"
                             : "kvlint confirm: no boot entry covers a flagged owner class; nothing to run "
                               "(--all boots every entry)\n",
                 stderr);

    ReconcileOptions reconcile_options;
    reconcile_options.tolerance = options.config.runtime.tolerance;
    std::error_code ec;
    reconcile_options.bases = {std::filesystem::current_path(ec), options.config.root};
    ConfirmReport report = reconcile(findings, std::move(runs), reconcile_options);

    if (int signal = interrupted()) return 128 + signal;
    std::string rendered;
    render(report, options.format, kKvlintVersion, rendered, options.max_num_seqs);
    if (options.output.empty()) {
      std::cout << rendered << std::flush;
    } else {
      write_report_file(options.output, rendered);
    }
    return report.exit_code();
  } catch (const InputError& e) {
    std::fprintf(stderr, "kvlint confirm: %s\n", e.what());
    return 2;
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "kvlint confirm: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvlint confirm: %s\n", e.what());
    return 2;
  }
}

}  // namespace kvlint
