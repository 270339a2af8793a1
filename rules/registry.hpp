// The one map from codes to rules.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "rules/rule.hpp"

namespace kvlint {

// Every rule, ordered by code. Built once per call; rules are stateless.
std::vector<std::unique_ptr<Rule>> make_all_rules();
// Docs of every code, engine rules included, ordered by code.
std::vector<RuleInfo> all_rule_infos();
// nullptr when unknown.
const RuleInfo* find_rule_info(std::string_view code);

}  // namespace kvlint
