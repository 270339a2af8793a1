// Runtime-only findings RT001..RT004 (reconcile_runtime_findings.cpp has what it takes and gives).
#pragma once

#include <vector>

#include "tools/kvlint/confirm/reconcile.hpp"

namespace kvlint::confirm::detail {

std::vector<RuntimeFinding> runtime_only_findings(const std::vector<InputFinding>& findings,
                                                  const std::vector<FindingResult>& results,
                                                  const std::vector<ModelRun>& runs,
                                                  const ReconcileOptions& options);

}  // namespace kvlint::confirm::detail
