#include "tools/kvlint/confirm/cpp_host_match.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

namespace kvlint::confirm {
namespace {

std::set<std::pair<std::string, std::string>> member_set(const CacheEvent& cache) {
  std::set<std::pair<std::string, std::string>> out;
  for (const auto& member : cache.members) out.emplace(member.owner, member.name);
  return out;
}

}  // namespace

bool same_observed_cache(const CacheEvent& a, const CacheEvent& b) {
  if (!a.members.empty() && !b.members.empty()) return a.owner == b.owner && member_set(a) == member_set(b);
  return a.members.empty() && b.members.empty() && a.file == b.file && a.line == b.line;
}

std::string observed_cache_key(const CacheEvent& cache, const std::string& canonical_file) {
  if (cache.members.empty()) return fmt::format("{}:{}", canonical_file, cache.line);
  std::string key = cache.owner;
  for (const auto& [owner, name] : member_set(cache)) key += fmt::format(" {}::{}", owner, name);
  return key;
}

}  // namespace kvlint::confirm
