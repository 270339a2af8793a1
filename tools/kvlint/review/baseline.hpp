// A baseline: the fingerprints of a kvlint report (JSON or SARIF) from the
// target branch. `kvlint check --baseline FILE` reports only findings whose
// fingerprint the baseline lacks and says how many baseline findings are gone.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

#include "rules/finding.hpp"

namespace kvlint::review {

// Not a kvlint report, or one without fingerprints: exit 2.
class BaselineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The largest baseline read: a JSON report of about 200,000 findings.
inline constexpr std::size_t kMaxBaselineBytes = std::size_t{256} << 20;

// The SARIF partialFingerprints key kvlint writes its fingerprint under.
inline constexpr std::string_view kSarifFingerprintKey = "kvlintFingerprint/v1";

class Baseline {
 public:
  // A `kvlint check --format json` report (schema "kvlint-findings") or a
  // `--format sarif` report whose results carry kvlintFingerprint/v1.
  static Baseline parse(std::string_view text, std::string_view source);
  static Baseline load(const std::filesystem::path& file);

  // True when the baseline holds this finding's fingerprint (it is not new).
  // Each baseline entry matches one finding: fingerprints carry an occurrence
  // index, so a second identical finding is new.
  bool absorbs(const Finding& finding);
  // Baseline findings no current finding matched: fixed since the baseline
  // (or outside what this run checked).
  std::size_t unmatched() const;
  std::size_t size() const { return total_; }

 private:
  std::map<std::string, std::size_t> remaining_;  // fingerprint -> entries not yet matched
  std::size_t total_ = 0;
};

}  // namespace kvlint::review
