// One rule is one unit: its code, its doc and its check, in rules/<code>_<name>/,
// with fixtures beside it. Rules read facts through facts::Project only.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analyzers/facts/project.hpp"
#include "rules/finding.hpp"

namespace kvlint {

struct RuleInfo {
  std::string_view code;     // "KV101"
  std::string_view name;     // "undeclared-cache"
  Severity severity;         // default severity
  std::string_view summary;  // one line, for `kvlint rules` and SARIF shortDescription
  // Markdown: "## What it does", "## Why it matters", "## Example", "## How to fix",
  // and for rules the runtime companion can check, "## Runtime verdict".
  std::string_view doc;
};

class Rule {
 public:
  virtual ~Rule() = default;
  virtual const RuleInfo& info() const = 0;
  // Appends findings; called once per run with the whole project.
  virtual void check(const facts::Project& project, std::vector<Finding>& out) const = 0;
};

// A finding of `info`'s code and default severity; callers fill message and evidence.
inline Finding make_finding(const RuleInfo& info, const facts::Location& loc, std::string owner_class) {
  Finding f;
  f.code = std::string(info.code);
  f.severity = info.severity;
  f.loc = loc;
  f.owner_class = std::move(owner_class);
  return f;
}

// `Owner.function` (or `function` at module level) in backticks, for messages about a
// protocol use.
inline std::string function_label(const facts::ProtocolUse& use) {
  return use.owner_class.empty() ? "`" + use.function + "`" : "`" + use.owner_class + "." + use.function + "`";
}

// Rules that the engine itself emits (suppression hygiene) have docs and codes
// but no check; `check` of those is never called and they return false here.
bool is_engine_rule(std::string_view code);

}  // namespace kvlint
