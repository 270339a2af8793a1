#include "rules/common/rule_support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

namespace kvlint::rules {

namespace {

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

// "self._caches" -> "_caches"; "self.cfg.x" -> "cfg.x"; anything else -> "".
std::string strip_self(std::string_view dotted) {
  constexpr std::string_view kSelf = "self.";
  if (!dotted.starts_with(kSelf)) return {};
  return std::string(dotted.substr(kSelf.size()));
}

}  // namespace

bool contains_ci(std::string_view haystack, std::string_view needle) {
  if (needle.empty()) return true;
  auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                        [](char a, char b) { return lower(a) == lower(b); });
  return it != haystack.end();
}

bool mentions(const facts::Expression& expression, std::string_view word) {
  if (contains_ci(expression.text, word)) return true;
  return std::any_of(expression.names.begin(), expression.names.end(),
                     [&](const std::string& n) { return contains_ci(n, word); });
}

bool guard_mentions(const facts::Guard& guard, std::string_view word) {
  auto any = [&](const std::vector<std::string>& names) {
    return std::any_of(names.begin(), names.end(),
                       [&](const std::string& n) { return contains_ci(n, word); });
  };
  return mentions(guard.condition, word) || any(guard.self_attributes) || any(guard.parameters);
}

std::string quoted(std::string_view text) {
  return fmt::format("`{}`", text);
}

std::string describe_retention(const facts::CacheSite& site) {
  using R = facts::Retention;
  const std::string& as = site.retained_as;
  switch (site.retention) {
    case R::SelfAttribute:
      return as.empty() ? "keeps one on the instance" : fmt::format("keeps one as `{}`", as);
    case R::SelfContainer:
      if (site.container_key && !site.container_key->text.empty())
        return as.empty() ? fmt::format("keeps one per `{}`", site.container_key->text)
                          : fmt::format("keeps one per `{}` in `{}`", site.container_key->text, as);
      return as.empty() ? "keeps them in a container on the instance" : fmt::format("keeps them in `{}`", as);
    case R::Returned:
      return "builds one per call and returns it";
    case R::PassedToCall:
      // The front end records the keyword (`past_key_values`) for a direct argument and
      // the callee (`self.llm`) for a local handed on later.
      if (as.empty()) return "builds one per call and passes it on";
      return as.find('.') != std::string::npos ? fmt::format("builds one per call and passes it to `{}`", as)
                                               : fmt::format("builds one per call and passes it as `{}`", as);
    case R::Local:
      return "builds one per call";
    case R::ModuleGlobal:
      return "keeps one at module level";
  }
  return "builds one";
}

std::string describe_guard(const facts::Guard& guard) {
  using O = facts::Guard::Origin;
  const std::string& c = guard.condition.text;
  switch (guard.origin) {
    case O::If:
      return guard.negated ? fmt::format("`{}` being false", c) : fmt::format("`if {}`", c);
    case O::Else:
      return fmt::format("the `else` of `if {}`", c);
    case O::EarlyReturn:
      return fmt::format("the early return `if {}`", c);
    case O::Ternary:
      return fmt::format("the conditional expression on `{}`", c);
    case O::Loop:
      return fmt::format("the loop over `{}`", c);
    case O::CallerGuard:
      return fmt::format("`if {}` in its callers", c);
    case O::With:
      return fmt::format("`with {}`", c);
  }
  return quoted(c);
}

bool is_branching_guard(const facts::Guard& guard) {
  using O = facts::Guard::Origin;
  return guard.origin != O::Loop && guard.origin != O::With;
}

std::string retained_attribute(const facts::CacheSite& site) {
  using R = facts::Retention;
  if (site.retention != R::SelfAttribute && site.retention != R::SelfContainer) return {};
  return strip_self(site.retained_as);
}

const facts::Guard* owner_state_guard(const std::vector<facts::Guard>& guards, std::string_view retained) {
  for (const auto& g : guards) {
    if (!is_branching_guard(g) || g.self_attributes.empty()) continue;
    // `if self.cache is None:` tests the cache's own slot: lazy creation, not a mode.
    bool only_own_slot =
        !retained.empty() &&
        std::all_of(g.self_attributes.begin(), g.self_attributes.end(), [&](const std::string& a) {
          return a == retained ||
                 (a.starts_with(retained) && a.size() > retained.size() && a[retained.size()] == '.');
        });
    if (only_own_slot) continue;
    // `if bs in self.graphs:` picks replay or eager per call: dispatch, not a deployment mode.
    bool only_graph_state =
        std::all_of(g.self_attributes.begin(), g.self_attributes.end(),
                    [](const std::string& a) { return contains_ci(a, "graph") || contains_ci(a, "captur"); });
    if (only_graph_state) continue;
    return &g;
  }
  return nullptr;
}

bool is_graph_pool_spec(const facts::SpecFact& spec) {
  for (const char* field : {"name", "allocation_note", "capacity_source", "rows_reason"}) {
    const facts::Argument* a = spec.field(field);
    if (!a) continue;
    for (const char* word : {"graph", "captur", "bucket"})
      if (contains_ci(a->value.text, word) || contains_ci(a->value.literal_value, word)) return true;
  }
  return false;
}

bool declares_graph_pool(const facts::Declaration& declaration) {
  // A spec with `**kwargs` may carry the naming fields unseen: it may be the pool.
  return std::any_of(declaration.specs.begin(), declaration.specs.end(),
                     [](const facts::SpecFact& s) { return is_graph_pool_spec(s) || !s.unpacked.empty(); });
}

bool is_graph_wrapper(const facts::Project& project, facts::ClassRef cls) {
  if (!cls) return false;
  const std::string& n = cls.cls->name;
  for (const char* word : {"CUDAGraph", "GraphWrapper", "GraphRunner"})
    if (n.find(word) != std::string::npos) return true;
  // A module that captures (MiMo captures in its constructor) is still there under
  // enforce_eager; only a non-module that captures is a wrapper the eager path lacks.
  return project.is_module(cls) != facts::Tristate::Yes && !project.captures_of(cls).empty();
}

std::string declaration_name(const facts::Project& project) {
  return project.vocabulary().declaration_method;
}

std::string join_names(const std::vector<std::string>& names) {
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (const auto& n : names)
    if (seen.insert(n).second) unique.push_back(n);
  std::string out;
  for (std::size_t i = 0; i < unique.size(); ++i) {
    if (i > 0) out += (i + 1 == unique.size()) ? " and " : ", ";
    out += quoted(unique[i]);
  }
  return out;
}

RelatedLocation related(const facts::Location& loc, std::string message) {
  return RelatedLocation{loc, std::move(message)};
}

}  // namespace kvlint::rules
