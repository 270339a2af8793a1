#include "tools/kvlint/confirm/reconcile_observations.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kvlint::confirm::detail {
namespace fs = std::filesystem;

std::string real_path(const fs::path& path, const std::vector<fs::path>& bases) {
  std::error_code ec;
  if (path.is_relative()) {
    for (const auto& base : bases) {
      fs::path candidate = base / path;
      if (fs::exists(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
    }
  }
  fs::path canonical = fs::weakly_canonical(path, ec);
  return ec ? path.lexically_normal().string() : canonical.string();
}

bool same_owner(const ModelRun& run, const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  if (a == b) return true;
  auto listed = [&run](const std::string& name) {
    return std::find(run.owners.begin(), run.owners.end(), name) != run.owners.end();
  };
  return listed(a) && listed(b);
}

bool owned_by(const ModelRun& run, const CacheEvent& c, const std::string& owner) {
  if (same_owner(run, c.owner, owner)) return true;
  return std::any_of(c.chain.begin(), c.chain.end(),
                     [&](const CacheFrame& frame) { return same_owner(run, frame.owner, owner); });
}

MemberMatch member_match(const CacheEvent& c, const Finding& f) {
  if (c.members.empty() || f.member.empty()) return MemberMatch::Unknown;
  for (const auto& m : c.members) {
    if (m.name == f.member && (m.owner == f.owner_class || c.owner == f.owner_class))
      return MemberMatch::Same;
    // The holder's member: `streams_` of StreamPool for the K/V of the state structs in it.
    for (const auto& [holder, name] : m.held_in)
      if (name == f.member && holder == f.owner_class) return MemberMatch::Same;
  }
  return MemberMatch::Other;
}

std::string members_text(const CacheEvent& c) {
  std::string out;
  for (const auto& m : c.members) out += fmt::format("{}`{}`", out.empty() ? "" : ", ", m.name);
  return out;
}

bool ran_on_cuda(const ModelRun& run) {
  return run.start && run.start->device.rfind("cuda", 0) == 0;
}

std::string rows_text(const DeclarationEvent& d) {
  if (d.rows_driver == "FIXED") return fmt::format("FIXED rows_fixed={}", d.rows_fixed.value_or(0));
  return fmt::format("{} rows={}", d.rows_driver.empty() ? "rows" : d.rows_driver, d.rows);
}

std::string cache_text(const CacheEvent& c) {
  if (c.cache_class != "raw-tensor") return c.cache_class.empty() ? "a cache" : c.cache_class;
  if (c.kept_by.empty()) return "raw K/V tensors";
  return fmt::format("raw K/V tensors kept as `{}`{}", c.kept_by.front(),
                     c.kept_by.size() > 1 ? fmt::format(" (and {} more)", c.kept_by.size() - 1) : "");
}

ObservedEvidence observed_of(const CacheEvent& c) {
  return ObservedEvidence{c.file,          c.line,  c.cache_class, c.owner,     c.rows,
                          c.bytes_per_row, c.bytes, c.objects,     c.positions, c.layers};
}

DeclaredEvidence declared_of(const DeclarationEvent& d) {
  return DeclaredEvidence{d.owner, d.name,          d.rows_driver, d.rows_fixed,
                          d.rows,  d.bytes_per_row, d.total_bytes};
}

bool within_tolerance(int64_t declared, int64_t observed, double tolerance) {
  const double reference = std::max(std::fabs(static_cast<double>(observed)), 1.0);
  return std::fabs(static_cast<double>(declared) - static_cast<double>(observed)) / reference <= tolerance;
}

std::string display_path(const std::string& observed) {
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  if (ec) return observed;
  const std::filesystem::path rel = std::filesystem::path(observed).lexically_relative(cwd);
  if (rel.empty() || *rel.begin() == "..") return observed;
  return rel.generic_string();
}

}  // namespace kvlint::confirm::detail
