// Boots boot entries one at a time: writes ENTRY.json, spawns
// `<interpreter> -m kvlint_runtime run --entry ENTRY.json` with the right
// environment, feeds its stdout to a ModelRun and samples its GPU memory.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/kvlint/config/config.hpp"
#include "tools/kvlint/confirm/nvml.hpp"
#include "tools/kvlint/confirm/protocol.hpp"
#include "tools/kvlint/confirm/reconcile.hpp"

namespace kvlint::confirm {

// Where runtime/python (holding kvlint_runtime) is: $KVLINT_RUNTIME_PYTHONPATH,
// else ../runtime/python or ../../runtime/python beside the running executable,
// else the installed package's copy (pip install: the executable in <prefix>/bin,
// the harness in <prefix>/lib/pythonX.Y/site-packages/kvlint/runtime),
// else the source tree this was built from. Empty when none holds kvlint_runtime.
std::filesystem::path locate_runtime_pythonpath();

// kvlint-model-host (the C++ plugin host): $KVLINT_MODEL_HOST, else runtime-host/kvlint-model-host
// or kvlint-model-host beside the running executable. Empty when none is there.
std::filesystem::path locate_model_host();

struct SelectedEntry {
  const RuntimeModel* model = nullptr;
  std::vector<std::string> owners;  // owner classes this entry boots
};

// Entries whose owners include a finding's owner class (an entry with no
// owners boots the classes defined under its factory's top-level package), or
// exactly `requested` when not empty, or every entry with `all` (a model with no
// finding is checkable too: RT002/RT003 are what static analysis cannot see).
// Throws InputError for an unknown name.
std::vector<SelectedEntry> select_entries(const std::vector<InputFinding>& findings, const Config& config,
                                          const std::vector<std::string>& requested, bool all = false);

// Throws InputError for an entry the harness could not run (no factory/driver, bad values).
void validate_entry(const RuntimeModel& model);

struct RunSettings {
  std::filesystem::path runtime_pythonpath;
  std::string device_override;  // "", "cpu", "cuda"
  const NvmlSampler* nvml = nullptr;
  std::chrono::milliseconds kill_grace{2'000};
  int interrupt_fd = -1;             // InterruptWatch::fd: a signal kills the running child at once
  std::filesystem::path model_host;  // kvlint-model-host for plugin entries; empty: locate_model_host()
};

nlohmann::json entry_json(const RuntimeModel& model, const Config& config, const RunSettings& settings);
std::string resolve_interpreter(const RuntimeModel& model, const Config& config);
// The child's whole environment: the host's, with PYTHONPATH, the entry's env and HF_HUB_OFFLINE=1.
std::vector<std::string> child_environment(const RuntimeModel& model, const Config& config,
                                           const RunSettings& settings);

// The host's command line for a C++ plugin entry; empty when no host is found.
std::vector<std::string> model_host_argv(const RuntimeModel& model, const std::vector<std::string>& owners,
                                         const Config& config, const RunSettings& settings);

// Runs one entry to its end (or timeout) and returns what it reported; never throws for child failures.
ModelRun run_model(const SelectedEntry& entry, const Config& config, const RunSettings& settings);

}  // namespace kvlint::confirm
