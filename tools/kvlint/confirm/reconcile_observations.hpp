// Matching what the harness observed to what a finding names (shared by the per-code verdicts in
// reconcile_verdicts.cpp and the runtime-only findings in reconcile_runtime_findings.cpp).
// Takes: the runs (their caches, captures, declarations, completed paths) and the options.
// Gives: sites compared by real path, a run's (path, concurrency) groups, the caches created at a
// site or owned by a class, the declarations of an owner on a path and the one that covers a cache,
// and Evidence built from them.
// Invariant: every file a cache, a frame of its chain or a capture names has its real path in
// `canonical_` (filled once by the constructor), so lookups never touch the file system again.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tools/kvlint/confirm/reconcile.hpp"

namespace kvlint::confirm::detail {

// A source position compared by real path.
using Site = std::pair<std::string, uint32_t>;

std::string real_path(const std::filesystem::path& path, const std::vector<std::filesystem::path>& bases);

// The harness names a cache's owner after the class defining the running method,
// which may be a base class of the declaring module; an entry's `owners` lists
// such related classes together, so owners are the same when both are listed.
bool same_owner(const ModelRun& run, const std::string& a, const std::string& b);

// Whether `owner` is the cache's owner or the owner of a frame on its creating call chain: a
// cache built several frames below the flagged class's call (a vendored model's helper calling
// the transformers model with use_cache=True) belongs to that class too.
bool owned_by(const ModelRun& run, const CacheEvent& c, const std::string& owner);

// Whether the member a finding names holds the cache's memory: Unknown when the finding names no
// member or the run saw none (the Python harness, a C++ host without debug information); Same when
// the member of that name belongs to the finding's class (the declaring class, or the cache's owner
// for a member inherited from a base), or is the finding's class's member the cache's objects are
// held in (a std::vector of state structs); Other when the cache is other members' memory only (a
// scratch tensor beside the K/V, another class's member of the same name).
enum class MemberMatch { Unknown, Same, Other };

MemberMatch member_match(const CacheEvent& c, const Finding& f);

std::string members_text(const CacheEvent& c);

bool ran_on_cuda(const ModelRun& run);

std::string rows_text(const DeclarationEvent& d);

// How a message names an observed cache: its class, or for raw tensor K/V (class "raw-tensor") the
// attribute path keeping it, which is what a reader finds in the model's code.
std::string cache_text(const CacheEvent& c);

ObservedEvidence observed_of(const CacheEvent& c);

DeclaredEvidence declared_of(const DeclarationEvent& d);

// In doubles: the difference of two int64 values need not fit in one.
bool within_tolerance(int64_t declared, int64_t observed, double tolerance);

// Runtime-only findings are printed beside static ones, whose paths are as the user
// wrote them: show a file under the working directory relative to it, like those.
std::string display_path(const std::string& observed);

class Observations {
 public:
  Observations(const std::vector<ModelRun>& runs, const ReconcileOptions& options)
      : runs_(runs), options_(options) {
    for (const auto& run : runs_)
      for (const auto& cache : run.caches) {
        canonical_.emplace(cache.file, real_path(cache.file, {}));
        for (const auto& frame : cache.chain) canonical_.emplace(frame.file, real_path(frame.file, {}));
      }
    for (const auto& run : runs_)
      for (const auto& capture : run.captures) canonical_.emplace(capture.file, real_path(capture.file, {}));
  }

  struct Group {
    std::string path;
    int concurrency;
    bool operator<(const Group& o) const {
      return std::tie(path, concurrency) < std::tie(o.path, o.concurrency);
    }
  };

  static std::set<Group> groups_of(const ModelRun& run) {
    std::set<Group> groups;
    for (const auto& c : run.caches) groups.insert({c.path, c.concurrency});
    for (const auto& c : run.captures) groups.insert({c.path, c.concurrency});
    for (const auto& d : run.declarations) groups.insert({d.path, d.concurrency});
    for (const auto& p : run.paths_done) groups.insert({p.path, p.concurrency});
    return groups;
  }

  Evidence group_evidence(const ModelRun& run, const std::string& path, int concurrency) const {
    Evidence e;
    e.model = run.name;
    e.path = path;
    e.concurrency = concurrency;
    e.gpu_peak_bytes = run.gpu_peak_bytes;
    return e;
  }

  // Created at `site`: the cache's own line or any frame of its creating call chain.
  bool at_site(const CacheEvent& c, const Site& site) const {
    if (c.line == site.second && canonical_.at(c.file) == site.first) return true;
    return std::any_of(c.chain.begin(), c.chain.end(), [&](const CacheFrame& frame) {
      return frame.line == site.second && canonical_.at(frame.file) == site.first;
    });
  }

  // The chain frames as sites (the cache's own site first).
  std::vector<Site> chain_sites(const CacheEvent& c) const {
    std::vector<Site> out{Site{canonical_.at(c.file), c.line}};
    for (const auto& frame : c.chain) out.push_back(Site{canonical_.at(frame.file), frame.line});
    return out;
  }

  // Caches of the finding in one group: created at one of its sites, else owned by its owner class.
  // One observed cache against the declaration it is compared with.
  Evidence observation(const ModelRun& run, const CacheEvent& cache, const DeclarationEvent& declared) const {
    Evidence e = group_evidence(run, cache.path, cache.concurrency);
    e.observed = observed_of(cache);
    e.declared = declared_of(declared);
    return e;
  }

  static std::vector<const DeclarationEvent*> declarations_of(const ModelRun& run, const std::string& path,
                                                              int concurrency, const std::string& owner) {
    std::vector<const DeclarationEvent*> out;
    for (const auto& d : run.declarations)
      if (d.declared && d.path == path && d.concurrency == concurrency && same_owner(run, d.owner, owner))
        out.push_back(&d);
    return out;
  }

  static const DeclarationEvent* closest_declaration(const std::vector<const DeclarationEvent*>& declarations,
                                                     int64_t bytes_per_row) {
    const DeclarationEvent* best = nullptr;
    for (const auto* d : declarations)
      if (best == nullptr ||
          std::llabs(d->bytes_per_row - bytes_per_row) < std::llabs(best->bytes_per_row - bytes_per_row))
        best = d;
    return best;
  }

  // Of the declarations whose bytes per row match the cache's, the one its rows fit best: the
  // fewest rows that still hold it, else the most. An owner may declare two allocations of one
  // geometry (MiMo's per-call cache and its graph pool of captured buckets, both 704 KiB a row);
  // the rows a cache held are drift only when no such declaration holds them. Null: none matches.
  const DeclarationEvent* covering_declaration(const std::vector<const DeclarationEvent*>& declarations,
                                               const CacheEvent& cache) const {
    const DeclarationEvent* best = nullptr;
    for (const auto* d : declarations) {
      if (!within_tolerance(d->bytes_per_row, cache.bytes_per_row, options_.tolerance)) continue;
      if (best == nullptr) {
        best = d;
        continue;
      }
      const bool holds = d->rows >= cache.rows, best_holds = best->rows >= cache.rows;
      if (holds != best_holds ? holds : (holds ? d->rows < best->rows : d->rows > best->rows)) best = d;
    }
    return best;
  }

 protected:
  const std::vector<ModelRun>& runs_;
  const ReconcileOptions& options_;
  std::map<std::string, std::string> canonical_;  // observed file -> real path
};

}  // namespace kvlint::confirm::detail
