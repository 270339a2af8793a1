// The report: each finding's verdict (reconcile_verdicts.cpp), then the runtime-only findings
// (reconcile_runtime_findings.cpp), which a confirmed finding's verdict may already speak for.
// Takes the findings and the runs; gives the ConfirmReport owning the runs.
#include "tools/kvlint/confirm/reconcile.hpp"

#include <algorithm>

#include "tools/kvlint/confirm/reconcile_runtime_findings.hpp"
#include "tools/kvlint/confirm/reconcile_verdicts.hpp"

namespace kvlint::confirm {

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::Confirmed:
      return "confirmed";
    case Verdict::Refuted:
      return "refuted";
    case Verdict::NotExercised:
      return "not-exercised";
    case Verdict::Inconclusive:
      return "inconclusive";
    case Verdict::NotChecked:
      return "not-checked";
  }
  return "not-checked";
}

bool ConfirmReport::any_confirmed() const {
  return std::any_of(results.begin(), results.end(),
                     [](const FindingResult& r) { return r.verdict == Verdict::Confirmed; });
}

int ConfirmReport::exit_code() const {
  return any_confirmed() || !runtime_findings.empty() ? 1 : 0;
}

ConfirmReport reconcile(const std::vector<InputFinding>& findings, std::vector<ModelRun> runs,
                        const ReconcileOptions& options) {
  ConfirmReport report;
  report.tolerance = options.tolerance;
  report.models = std::move(runs);
  report.results = detail::finding_verdicts(findings, report.models, options);
  report.runtime_findings = detail::runtime_only_findings(findings, report.results, report.models, options);
  return report;
}

}  // namespace kvlint::confirm
