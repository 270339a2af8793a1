// Internal to the Project view (analyzers/facts/project*.cpp), not for rules: the index the
// constructor builds over every file's facts, the depth bounds of its walks, and the small
// name helpers they share.
// Invariant: the index is built once, in the constructor, before `demand_` is set; queries only
// read it, except the two lazily filled caches (method_calls, built_for), each under its own guard.
#pragma once

#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzers/facts/project.hpp"

namespace kvlint::facts {

namespace project_detail {

// Ownership chains in real projects are short (runner -> model -> generator);
// the bound keeps a pathological cycle of holders from exploding.
constexpr int kMaxHolderDepth = 6;
// Resolving an attribute's or parameter's class may go through callers' attributes and
// parameters in turn; real chains are two or three links.
constexpr int kMaxTypeDepth = 4;
// Calls followed from a capture: capture -> wrapper method -> model step -> transformer.
constexpr int kMaxCallDepth = 6;

inline std::vector<std::string_view> split_dotted(std::string_view dotted) {
  std::vector<std::string_view> parts;
  while (true) {
    const auto dot = dotted.find('.');
    parts.push_back(dotted.substr(0, dot));
    if (dot == std::string_view::npos) break;
    dotted.remove_prefix(dot + 1);
  }
  return parts;
}

inline bool is_uppercase(std::string_view name) {
  return !name.empty() && name.front() >= 'A' && name.front() <= 'Z';
}

inline std::optional<std::size_t> parameter_index(const MethodFact& method, std::string_view name) {
  for (std::size_t i = 0; i < method.parameters.size(); ++i)
    if (method.parameters[i] == name) return i;
  return std::nullopt;
}

inline bool ends_with_component(std::string_view dotted, std::string_view suffix) {
  if (dotted == suffix) return true;
  return dotted.size() > suffix.size() && dotted.ends_with(suffix) &&
         dotted[dotted.size() - suffix.size() - 1] == '.';
}

// "pkg.models.decoder" matches a written prefix ".decoder" or "pkg.models.decoder".
inline bool module_matches(std::string_view module_name, std::string_view prefix) {
  while (prefix.starts_with('.')) prefix.remove_prefix(1);
  if (prefix.empty() || module_name.empty()) return false;
  return ends_with_component(module_name, prefix);
}

}  // namespace project_detail

struct Project::Index {
  std::unordered_map<std::string, std::vector<ClassRef>> by_simple_name;
  // Per file, its first class of each simple name: class_of, which every find_class from a file
  // asks first, scanned the file's classes (a file of 5,000 classes each deriving from the last
  // made the ancestor walks cubic).
  std::unordered_map<const FileFacts*, std::unordered_map<std::string_view, const ClassFact*>> in_file;
  // Per class: sites whose owner_class is that class in the same file.
  std::unordered_map<const ClassFact*, std::vector<const CacheSite*>> cache_sites;
  std::unordered_map<const ClassFact*, std::vector<const ImplicitCacheSite*>> implicit_caches;
  std::unordered_map<const ClassFact*, std::vector<const CaptureSite*>> captures;
  std::unordered_map<const ClassFact*, std::vector<const BatchEvidence*>> batch_evidence;
  std::unordered_map<const ClassFact*, std::vector<const AttributeAssignment*>> attribute_assignments;
  std::unordered_map<const ClassFact*, const Declaration*> declarations;
  std::unordered_map<const ClassFact*, std::vector<const OwnershipHop*>> hops_from;
  std::unordered_map<const ClassFact*, std::vector<Holder>> holders_of;
  std::unordered_map<const ClassFact*, std::vector<ClassRef>> subclasses_of;  // transitive
  std::unordered_map<const ClassFact*, std::vector<Built>> constructions;
  std::deque<OwnershipHop> parameter_hops;  // stable addresses for Holder::hop
  std::unordered_map<const ClassFact*, std::vector<Holder>> parameter_holders_of;
  // C++ out-of-line entries: the class each is part of, and each class's parts (itself first).
  std::unordered_map<const ClassFact*, ClassRef> joined_to;
  std::unordered_map<const ClassFact*, std::vector<ClassRef>> parts;
  // `decoder._graph_wrapper = self`, as a hop from the receiving class (keyed by it).
  std::unordered_map<const ClassFact*, std::vector<const OwnershipHop*>> reverse_hops_from;
  // Calls of a bare function name (`capture_decode_step(self, bs)`), by that name.
  std::unordered_map<std::string, std::vector<std::pair<CodeRef, const CallFact*>>> function_calls;
  // Calls through an object (`self.decoder.enable_graphs()`), by the callee's last name, in the
  // order invocations_of visits them (each query scanned every call of the project); built on
  // the first query, which only the enforce_eager rules make.
  std::once_flag method_calls_built;
  std::unordered_map<std::string_view, std::vector<std::pair<CodeRef, const CallFact*>>> method_calls;
  // built_for's answers: coverage() asks it of every class on its holder walk, once per rule.
  std::mutex built_for_mutex;
  std::unordered_map<const ClassFact*, std::vector<ClassRef>> built_for;
};

}  // namespace kvlint::facts
