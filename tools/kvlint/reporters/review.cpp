#include "tools/kvlint/reporters/review.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace kvlint {
namespace {

// Products of measured bytes and an engine setting are computed in double and
// saturated, so a huge --max-num-seqs shows a huge number, never a wrapped one.
int64_t saturated(double value) {
  constexpr auto kMax = static_cast<double>(std::numeric_limits<int64_t>::max());
  if (!(value < kMax)) return std::numeric_limits<int64_t>::max();
  if (value < 0) return 0;
  return static_cast<int64_t>(std::llround(value));
}

}  // namespace

std::string review_key(const Finding& finding) {
  if (!finding.fingerprint.empty()) return finding.fingerprint;
  return fmt::format("{}\n{}\n{}\n{}", finding.code, finding.loc.file, finding.loc.line, finding.loc.column);
}

std::vector<ConcurrencyTotal> totals_by_concurrency(const std::vector<MemoryRow>& memory) {
  std::vector<ConcurrencyTotal> totals;
  for (const MemoryRow& row : memory) {
    auto same = [&row](const ConcurrencyTotal& t) {
      return t.model == row.model && t.path == row.path && t.concurrency == row.concurrency;
    };
    auto it = std::find_if(totals.begin(), totals.end(), same);
    if (it == totals.end()) it = totals.insert(totals.end(), {row.model, row.path, row.concurrency, 0, 0});
    it->declared_bytes =
        saturated(static_cast<double>(it->declared_bytes) + static_cast<double>(row.declared_bytes));
    it->observed_bytes =
        saturated(static_cast<double>(it->observed_bytes) + static_cast<double>(row.observed_bytes));
  }
  std::stable_sort(totals.begin(), totals.end(), [](const ConcurrencyTotal& a, const ConcurrencyTotal& b) {
    return std::tie(a.model, a.path, a.concurrency) < std::tie(b.model, b.path, b.concurrency);
  });
  return totals;
}

std::vector<Projection> project(const std::vector<MemoryRow>& memory, int64_t max_num_seqs) {
  // Per (model, owner): the row at the largest concurrency (the largest
  // observed total among paths there) and the row at the smallest.
  struct OwnerRows {
    const MemoryRow* largest = nullptr;
    const MemoryRow* smallest = nullptr;
  };
  std::map<std::pair<std::string, std::string>, OwnerRows> owners;
  for (const MemoryRow& row : memory) {
    OwnerRows& rows = owners[{row.model, row.owner}];
    if (!rows.largest || row.concurrency > rows.largest->concurrency ||
        (row.concurrency == rows.largest->concurrency && row.observed_bytes > rows.largest->observed_bytes))
      rows.largest = &row;
    if (!rows.smallest || row.concurrency < rows.smallest->concurrency ||
        (row.concurrency == rows.smallest->concurrency && row.observed_bytes > rows.smallest->observed_bytes))
      rows.smallest = &row;
  }
  std::vector<Projection> out;
  const auto seqs = static_cast<double>(max_num_seqs);
  for (const auto& [key, rows] : owners) {
    if (out.empty() || out.back().model != key.first) out.push_back({key.first, 0, 0});
    const MemoryRow& at = *rows.largest;
    const double declared = static_cast<double>(at.declared_fixed_bytes) +
                            static_cast<double>(at.declared_per_sequence_bytes) * seqs;
    const bool observed_scales =
        at.concurrency > rows.smallest->concurrency && at.observed_rows > rows.smallest->observed_rows;
    const double observed =
        observed_scales ? static_cast<double>(at.observed_bytes) * seqs / static_cast<double>(at.concurrency)
                        : static_cast<double>(at.observed_bytes);
    Projection& p = out.back();
    p.declared_bytes = saturated(static_cast<double>(p.declared_bytes) + declared);
    p.observed_bytes = saturated(static_cast<double>(p.observed_bytes) + observed);
  }
  return out;
}

Projection projection_total(const std::vector<Projection>& projections) {
  Projection total;
  for (const Projection& p : projections) {
    total.declared_bytes =
        saturated(static_cast<double>(total.declared_bytes) + static_cast<double>(p.declared_bytes));
    total.observed_bytes =
        saturated(static_cast<double>(total.observed_bytes) + static_cast<double>(p.observed_bytes));
  }
  return total;
}

std::string format_bytes(int64_t bytes) {
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024.0, kGiB = kMiB * 1024.0;
  const double magnitude = std::fabs(static_cast<double>(bytes));
  if (magnitude >= kGiB) return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / kGiB);
  if (magnitude >= kMiB) return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / kMiB);
  if (magnitude >= kKiB) {
    if (bytes % 1024 == 0) return fmt::format("{} KiB", bytes / 1024);
    return fmt::format("{:.2f} KiB", static_cast<double>(bytes) / kKiB);
  }
  return fmt::format("{} B", bytes);
}

}  // namespace kvlint
