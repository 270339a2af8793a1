// The per-code verdicts of static findings (reconcile_verdicts.cpp has what it takes and gives).
#pragma once

#include <vector>

#include "tools/kvlint/confirm/reconcile.hpp"

namespace kvlint::confirm::detail {

std::vector<FindingResult> finding_verdicts(const std::vector<InputFinding>& findings,
                                            const std::vector<ModelRun>& runs,
                                            const ReconcileOptions& options);

}  // namespace kvlint::confirm::detail
