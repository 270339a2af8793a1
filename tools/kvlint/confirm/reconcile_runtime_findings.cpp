// Runtime-only findings: what the runs observed that no static finding explains. RT001
// unflagged-cache (a cache no finding names and no declaration on its path covers, or a second cache
// beside the declared one), RT002 declared-bytes-drift, RT003 phantom-declaration (declared bytes on
// a completed path that allocated nothing), RT004 declared-rows-drift.
// Takes: the findings, their verdicts and the runs. Gives: the runtime findings sorted by file,
// line and code, one per site and code.
// Invariant: a cache measured while its owner's collected declarations report less is never
// silent: it is either a runtime finding or covered by a finding whose verdict speaks for it.
#include "tools/kvlint/confirm/reconcile_runtime_findings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "tools/kvlint/confirm/cpp_host_match.hpp"
#include "tools/kvlint/confirm/reconcile_observations.hpp"

namespace kvlint::confirm::detail {
namespace {

class RuntimeOnly : public Observations {
 public:
  using Observations::Observations;

  std::vector<RuntimeFinding> runtime_findings(const std::vector<InputFinding>& findings,
                                               const std::vector<FindingResult>& results) {
    std::set<Site> named;
    for (const auto& input : findings) {
      named.insert(Site{real_path(input.finding.loc.file.str(), options_.bases), input.finding.loc.line});
      for (const auto& related : input.finding.related)
        named.insert(Site{real_path(related.loc.file.str(), options_.bases), related.loc.line});
    }
    std::vector<RuntimeFinding> out;
    std::set<std::pair<std::string, std::string>> reported;  // code, observed cache
    for (const auto& run : runs_) {
      // A finding saying the class holds undeclared memory (KV101/KV102 presence, a confirmed KV302)
      // covers the caches whose creating chain passes through that class. A KV302 the run did not
      // confirm says nothing of the cache: it must not silence it.
      auto flagged_on_chain = [&](const CacheEvent& cache) {
        return std::any_of(results.begin(), results.end(), [&](const FindingResult& r) {
          const auto& code = r.input.finding.code;
          return (code == "KV101" || code == "KV102" ||
                  (code == "KV302" && r.verdict == Verdict::Confirmed)) &&
                 (owned_by(run, cache, r.input.finding.owner_class) ||
                  member_match(cache, r.input.finding) == MemberMatch::Same);
        });
      };
      // The widest observation of a site first: one report per site, with the most rows it held.
      std::vector<const CacheEvent*> by_rows;
      for (const auto& cache : run.caches) by_rows.push_back(&cache);
      std::stable_sort(by_rows.begin(), by_rows.end(),
                       [](const CacheEvent* a, const CacheEvent* b) { return a->rows > b->rows; });
      for (const CacheEvent* widest_first : by_rows) {
        const CacheEvent& cache = *widest_first;
        const Site site{canonical_.at(cache.file), cache.line};
        const std::string shown = display_path(cache.file);
        // A cache object that never held a byte (built, never filled) is no memory: not a finding.
        if (cache.bytes == 0 && cache.bytes_per_row == 0) continue;
        const auto sites = chain_sites(cache);
        const bool named_on_chain =
            std::any_of(sites.begin(), sites.end(), [&](const Site& s) { return named.count(s) != 0; });
        auto declarations = declarations_of(run, cache.path, cache.concurrency, cache.owner);
        // Declarations are collected per path: a cache the owner holds on a path where it declares
        // nothing is undeclared there, whatever it declares elsewhere (the build has no declarations
        // of its own: there, any of the owner's counts).
        bool owner_declares = !declarations.empty();
        if (cache.path == "build")
          for (const auto& d : run.declarations)
            if (d.declared && same_owner(run, d.owner, cache.owner)) owner_declares = true;
        const DeclarationEvent* closest = closest_declaration(declarations, cache.bytes_per_row);
        const bool drifts = closest != nullptr && !within_tolerance(closest->bytes_per_row,
                                                                    cache.bytes_per_row, options_.tolerance);
        // The owner's closest declaration already matches another of its caches on this path: this
        // one is a second cache nothing declares, not a drift of that declaration.
        const CacheEvent* declared_elsewhere =
            drifts ? cache_matching(run, cache, closest->bytes_per_row) : nullptr;
        if (declared_elsewhere != nullptr) {
          if (!reported.insert({"RT001", observed_cache_key(cache, site.first)}).second) continue;
          RuntimeFinding rt{"RT001", "unflagged-cache", Severity::Warning, shown, cache.line, cache.owner, {},
                            {}};
          rt.evidence = group_evidence(run, cache.path, cache.concurrency);
          rt.evidence.observed = observed_of(cache);
          rt.evidence.declared = declared_of(*closest);
          rt.message = fmt::format(
              "{} created at {}:{} (owner {}) holds {} per row and no declaration covers it: {}'s "
              "\"{}\" ({} per row) is the cache at {}:{} on path {} at concurrency {}, so this is a second, "
              "undeclared cache",
              cache_text(cache), shown, cache.line, cache.owner, format_bytes(cache.bytes_per_row),
              cache.owner, closest->name, format_bytes(closest->bytes_per_row),
              display_path(declared_elsewhere->file), declared_elsewhere->line, cache.path,
              cache.concurrency);
          rt.evidence.summary = fmt::format(
              "observed rows={} at concurrency {} ({}/row) beside the declared cache at line {}", cache.rows,
              cache.concurrency, format_bytes(cache.bytes_per_row), declared_elsewhere->line);
          out.push_back(std::move(rt));
          continue;
        }
        if (drifts) {
          if (!reported.insert({"RT002", observed_cache_key(cache, site.first)}).second) continue;
          RuntimeFinding rt{
              "RT002", "declared-bytes-drift", Severity::Error, shown, cache.line, cache.owner, {}, {}};
          rt.evidence = group_evidence(run, cache.path, cache.concurrency);
          rt.evidence.observed = observed_of(cache);
          rt.evidence.declared = declared_of(*closest);
          rt.message = fmt::format(
              "{} declares {} per row for \"{}\", observed {} per row ({} at {}:{}) on path {} at "
              "concurrency {}, beyond the {:g}% tolerance",
              cache.owner, format_bytes(closest->bytes_per_row), closest->name,
              format_bytes(cache.bytes_per_row), cache.cache_class, shown, cache.line, cache.path,
              cache.concurrency, options_.tolerance * 100);
          rt.evidence.summary =
              fmt::format("declared {} per row, observed {} per row", format_bytes(closest->bytes_per_row),
                          format_bytes(cache.bytes_per_row));
          out.push_back(std::move(rt));
          continue;
        }
        if (named_on_chain || owner_declares || flagged_on_chain(cache)) continue;
        if (!reported.insert({"RT001", observed_cache_key(cache, site.first)}).second) continue;
        RuntimeFinding rt{"RT001", "unflagged-cache", Severity::Warning, shown, cache.line, cache.owner, {},
                          {}};
        rt.evidence = group_evidence(run, cache.path, cache.concurrency);
        rt.evidence.observed = observed_of(cache);
        rt.message = fmt::format(
            "{} created at {}:{} (owner {}) holds {} per row and no static finding names it and "
            "no declaration covers it: a blind spot of the analyzer",
            cache_text(cache), shown, cache.line, cache.owner.empty() ? "unknown" : cache.owner,
            format_bytes(cache.bytes_per_row));
        rt.evidence.summary = fmt::format("observed rows={} at concurrency {} ({}/row), undeclared",
                                          cache.rows, cache.concurrency, format_bytes(cache.bytes_per_row));
        out.push_back(std::move(rt));
      }
    }
    phantom_declarations(findings, out);
    rows_drift(findings, out);
    std::sort(out.begin(), out.end(), [](const RuntimeFinding& a, const RuntimeFinding& b) {
      return std::tie(a.file, a.line, a.code) < std::tie(b.file, b.line, b.code);
    });
    return out;
  }

  // RT004 declared-rows-drift: the declarations that cover a cache's bytes per row all name fewer
  // rows than the cache held at that concurrency (a FIXED count, or MAX_NUM_SEQS below it), or the
  // one that fits scales with MAX_NUM_SEQS while the cache's rows stayed the same as concurrency
  // grew. Static KV202 / KV203 (and KV103 for caches built inside captures) say the same from the
  // source; an owner one of them names is left to its verdict.
  void rows_drift(const std::vector<InputFinding>& findings, std::vector<RuntimeFinding>& out) const {
    std::set<std::pair<std::string, std::string>> reported;  // model, observed cache
    for (const auto& run : runs_) {
      auto flagged = [&](const std::string& owner, bool in_capture) {
        return std::any_of(findings.begin(), findings.end(), [&](const InputFinding& input) {
          const auto& code = input.finding.code;
          return (code == "KV202" || code == "KV203" || (in_capture && code == "KV103")) &&
                 same_owner(run, input.finding.owner_class, owner);
        });
      };
      for (const auto& cache : run.caches) {
        if (cache.path == "build" || cache.bytes_per_row == 0 ||
            !run.path_completed(cache.path, cache.concurrency) || flagged(cache.owner, cache.in_capture))
          continue;
        const DeclarationEvent* d =
            covering_declaration(declarations_of(run, cache.path, cache.concurrency, cache.owner), cache);
        if (d == nullptr) continue;
        std::string why;
        if (cache.rows > d->rows) {
          why = fmt::format(
              "declares {} for \"{}\" ({} rows at concurrency {}), observed {} rows ({} at {}:{})",
              rows_text(*d), d->name, d->rows, cache.concurrency, cache.rows,
              format_bytes(cache.bytes_per_row * cache.rows), display_path(cache.file), cache.line);
        } else if (d->rows_driver == "MAX_NUM_SEQS" && cache.concurrency > cache.rows) {
          // The same site at the lowest concurrency of the path: rows that do not grow with it.
          const CacheEvent* lowest = nullptr;
          for (const auto& other : run.caches)
            if (other.path == cache.path && other.concurrency < cache.concurrency &&
                same_observed_cache(other, cache) &&
                (lowest == nullptr || other.concurrency < lowest->concurrency))
              lowest = &other;
          if (lowest == nullptr || lowest->rows != cache.rows) continue;
          why = fmt::format(
              "declares \"{}\" per sequence (MAX_NUM_SEQS), observed {} rows at concurrency {} and at "
              "concurrency {} ({} at {}:{}): the rows do not grow with the sequences",
              d->name, cache.rows, lowest->concurrency, cache.concurrency, cache.cache_class,
              display_path(cache.file), cache.line);
        } else {
          continue;
        }
        if (!reported.insert({run.name, observed_cache_key(cache, canonical_.at(cache.file))}).second)
          continue;
        RuntimeFinding rt{"RT004",
                          "declared-rows-drift",
                          Severity::Error,
                          display_path(cache.file),
                          cache.line,
                          cache.owner,
                          {},
                          {}};
        rt.evidence = observation(run, cache, *d);
        rt.message = fmt::format("{} {} on path {}", cache.owner, why, cache.path);
        rt.evidence.summary =
            cache.rows > d->rows
                ? fmt::format("declared {} rows, observed {} at concurrency {}", d->rows, cache.rows,
                              cache.concurrency)
                : fmt::format("declared MAX_NUM_SEQS, observed rows fixed at {}", cache.rows);
        out.push_back(std::move(rt));
      }
    }
  }

  // RT003: a completed path whose collected declaration reports bytes for an owner that allocated
  // nothing there (no cache or capture of that owner on the path, none kept alive from the build).
  // An owner a KV301 finding names is left to that finding's verdict.
  void phantom_declarations(const std::vector<InputFinding>& findings,
                            std::vector<RuntimeFinding>& out) const {
    std::set<std::tuple<std::string, std::string, std::string>> reported;  // model, owner, path
    for (const auto& run : runs_) {
      auto flagged_kv301 = [&](const std::string& owner) {
        return std::any_of(findings.begin(), findings.end(), [&](const InputFinding& input) {
          return input.finding.code == "KV301" && same_owner(run, input.finding.owner_class, owner);
        });
      };
      for (const auto& d : run.declarations) {
        if (!d.declared || d.owner.empty() || d.total_bytes <= 0) continue;
        if (!run.path_completed(d.path, d.concurrency) || allocates(run, d.path, d.concurrency, d.owner))
          continue;
        if (flagged_kv301(d.owner) || !reported.insert({run.name, d.owner, d.path}).second) continue;
        std::string names;
        int64_t total = 0;
        for (const auto& other : run.declarations)
          if (other.declared && other.path == d.path && other.concurrency == d.concurrency &&
              other.owner == d.owner && other.total_bytes > 0) {
            names += fmt::format("{}\"{}\"", names.empty() ? "" : ", ", other.name);
            total += other.total_bytes;
          }
        RuntimeFinding rt{"RT003",
                          "phantom-declaration",
                          Severity::Error,
                          d.file.empty() ? std::string() : display_path(d.file),
                          d.line,
                          d.owner,
                          {},
                          {}};
        rt.evidence = group_evidence(run, d.path, d.concurrency);
        rt.evidence.declared = declared_of(d);
        rt.message = fmt::format(
            "{} declares {} ({}) on path {}, which ran to completion at concurrency {} without allocating "
            "any "
            "cache or capture for it: the declaration invents memory this path never holds",
            d.owner, format_bytes(total), names, d.path, d.concurrency);
        rt.evidence.summary =
            fmt::format("path {} allocates nothing at concurrency {}, declared {} ({}, {}/row)", d.path,
                        d.concurrency, format_bytes(total), rows_text(d), format_bytes(d.bytes_per_row));
        out.push_back(std::move(rt));
      }
    }
  }

  // Whether `owner` holds model-local memory on the path: a cache or capture of it observed there,
  // or one built while the factory ran (path "build") that is still alive. A cache on the path whose
  // owner declares nothing there may be this declaration's (the harness names the class running the
  // code, which can differ from the declaring one): it counts too, RT001 reports it.
  static bool allocates(const ModelRun& run, const std::string& path, int concurrency,
                        const std::string& owner) {
    for (const auto& c : run.caches) {
      const bool on_path = c.path == path && c.concurrency == concurrency;
      if (same_owner(run, c.owner, owner) && (on_path || (c.path == "build" && c.alive_after_step)))
        return true;
      if (on_path && declarations_of(run, path, concurrency, c.owner).empty()) return true;
    }
    for (const auto& c : run.captures)
      if (same_owner(run, c.owner, owner) &&
          ((c.path == path && c.concurrency == concurrency) || c.path == "build"))
        return true;
    return false;
  }

  // Another cache of `cache`'s owner, on its path and concurrency and at another line, whose bytes per
  // row are `declared_bytes_per_row` within the tolerance (the one a declaration describes), if any.
  const CacheEvent* cache_matching(const ModelRun& run, const CacheEvent& cache,
                                   int64_t declared_bytes_per_row) const {
    for (const auto& other : run.caches)
      if (&other != &cache && other.path == cache.path && other.concurrency == cache.concurrency &&
          !same_observed_cache(other, cache) && same_owner(run, other.owner, cache.owner) &&
          within_tolerance(declared_bytes_per_row, other.bytes_per_row, options_.tolerance))
        return &other;
    return nullptr;
  }
};

}  // namespace

std::vector<RuntimeFinding> runtime_only_findings(const std::vector<InputFinding>& findings,
                                                  const std::vector<FindingResult>& results,
                                                  const std::vector<ModelRun>& runs,
                                                  const ReconcileOptions& options) {
  return RuntimeOnly(runs, options).runtime_findings(findings, results);
}

}  // namespace kvlint::confirm::detail
