// Reconciles static findings with what the harness observed (runtime-protocol.md,
// "Verdicts"): each finding becomes confirmed / refuted / not-exercised /
// inconclusive / not-checked with evidence, and observations no finding explains
// become runtime-only findings (RT001 unflagged-cache, RT002 declared-bytes-drift,
// RT003 phantom-declaration).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "rules/finding.hpp"
#include "tools/kvlint/confirm/protocol.hpp"
#include "tools/kvlint/reporters/review.hpp"

namespace kvlint::confirm {

enum class Verdict { Confirmed, Refuted, NotExercised, Inconclusive, NotChecked };
std::string_view to_string(Verdict verdict);

// "4.44 MiB", "704 KiB", "24.00 MiB", "512 B" (shared with the reviewer reports).
using kvlint::format_bytes;

// A finding from `kvlint check` plus the rule name it was reported with.
struct InputFinding {
  Finding finding;
  std::string name;  // "undeclared-cache"
};

struct ObservedEvidence {
  std::string file;
  uint32_t line = 0;
  std::string cache_class, owner;
  int64_t rows = 0, bytes_per_row = 0, bytes = 0, objects = 0, positions = 0, layers = 0;
};

struct DeclaredEvidence {
  std::string owner, name, rows_driver;
  std::optional<int64_t> rows_fixed;
  int64_t rows = 0, bytes_per_row = 0, total_bytes = 0;
};

struct CaptureEvidence {
  std::string file, kind, owner;
  uint32_t line = 0;
  int64_t count = 0;
};

struct Evidence {
  std::string model;  // boot entry; empty when none was involved
  std::string path;
  int concurrency = 0;  // 0: not tied to one concurrency
  std::optional<ObservedEvidence> observed;
  std::optional<DeclaredEvidence> declared;
  std::optional<CaptureEvidence> capture;
  std::optional<int64_t> collected_total_bytes;  // KV302: what the collector reported on that path
  std::optional<int64_t> gpu_peak_bytes;         // NVML peak of the model's child
  std::string summary;                           // one human sentence
};

struct FindingResult {
  InputFinding input;
  Verdict verdict = Verdict::NotChecked;
  Evidence evidence;
};

struct RuntimeFinding {
  std::string code;  // "RT001" | "RT002" | "RT003"
  std::string name;  // "unflagged-cache" | "declared-bytes-drift" | "phantom-declaration"
  Severity severity = Severity::Warning;
  std::string file;  // relative to the working directory when under it, else absolute
  uint32_t line = 0;
  std::string owner;
  std::string message;
  Evidence evidence;
};

struct ReconcileOptions {
  double tolerance = 0.05;
  // Relative finding paths are tried against these, in order (cwd, config root).
  std::vector<std::filesystem::path> bases;
};

struct ConfirmReport {
  std::vector<ModelRun> models;
  std::vector<FindingResult> results;
  std::vector<RuntimeFinding> runtime_findings;
  double tolerance = 0.05;
  bool any_confirmed() const;
  // 0 when nothing is confirmed and no runtime-only finding exists, else 1.
  int exit_code() const;
};

// `runs[i].owners` lists the owner classes that run's entry boots.
ConfirmReport reconcile(const std::vector<InputFinding>& findings, std::vector<ModelRun> runs,
                        const ReconcileOptions& options);

}  // namespace kvlint::confirm
