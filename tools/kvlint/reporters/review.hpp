// What `kvlint confirm` measured, in the shape the reviewer reports (HTML,
// Markdown) show beside the static findings: a verdict per finding, the
// runtime-only findings, each model's status, and declared vs observed bytes
// per owner at each measured (path, concurrency). Read from confirm's JSON
// (tools/kvlint/confirm/review_input.*), so a report can be made later, on
// another machine, from the files CI kept.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rules/finding.hpp"

namespace kvlint {

// The key that pairs a finding from `kvlint check` with its confirm result:
// the fingerprint when there is one, else code, path, line and column.
std::string review_key(const Finding& finding);

struct ReviewVerdict {
  std::string verdict;  // "confirmed" | "refuted" | "not-exercised" | "inconclusive" | "not-checked"
  std::string summary;  // the evidence in one sentence
  std::string model;    // boot entry; empty when none was involved
  std::string path;     // driven path
  int64_t concurrency = 0;
};

struct ReviewRuntimeFinding {
  Finding finding;   // code RT001..RT003, path, line, owner, message
  std::string name;  // "unflagged-cache"
  ReviewVerdict evidence;
};

struct ReviewModel {
  std::string name, status, reason, device;
};

// One owner's caches and declarations on one (model, path, concurrency).
struct MemoryRow {
  std::string model, path, owner;
  int64_t concurrency = 0;
  int64_t declared_bytes = 0, observed_bytes = 0;
  int64_t declared_bytes_per_row = 0, observed_bytes_per_row = 0;
  int64_t observed_rows = 0;
  // The declared total split by row driver: FIXED rows cost the same at any
  // engine setting, MAX_NUM_SEQS rows scale with it.
  int64_t declared_fixed_bytes = 0, declared_per_sequence_bytes = 0;
};

struct ReviewData {
  std::map<std::string, ReviewVerdict> verdicts;  // by review_key
  std::vector<ReviewRuntimeFinding> runtime_findings;
  std::vector<ReviewModel> models;
  std::vector<MemoryRow> memory;
  // The same measurements on the base revision (`kvlint report --base-confirm`),
  // for the change in declared bytes a pull request introduces.
  std::optional<std::vector<MemoryRow>> base_memory;
  std::optional<int64_t> max_num_seqs;  // the engine setting to project to
};

// Declared and observed totals of one model on one (path, concurrency).
struct ConcurrencyTotal {
  std::string model, path;
  int64_t concurrency = 0;
  int64_t declared_bytes = 0, observed_bytes = 0;
};
std::vector<ConcurrencyTotal> totals_by_concurrency(const std::vector<MemoryRow>& memory);

// A model's local KV projected to `max_num_seqs` from its largest measured
// concurrency. Declared: FIXED bytes plus MAX_NUM_SEQS bytes per row times
// max_num_seqs. Observed: an owner whose observed rows grew with the
// concurrency is scaled by max_num_seqs / concurrency, any other owner is
// taken as measured.
struct Projection {
  std::string model;
  int64_t declared_bytes = 0, observed_bytes = 0;
};
std::vector<Projection> project(const std::vector<MemoryRow>& memory, int64_t max_num_seqs);
// All models' projections added up, saturated at int64's maximum as each projection is: a
// projection can reach it (bytes up to 2^53 times --max-num-seqs), so a plain sum would wrap.
Projection projection_total(const std::vector<Projection>& projections);

// "4.44 MiB", "704 KiB", "1.11 GiB", "512 B".
std::string format_bytes(int64_t bytes);

}  // namespace kvlint
