#include "tools/kvlint/confirm/reconcile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <tuple>

namespace kvlint::confirm {
namespace fs = std::filesystem;

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::Confirmed:
      return "confirmed";
    case Verdict::Refuted:
      return "refuted";
    case Verdict::NotExercised:
      return "not-exercised";
    case Verdict::Inconclusive:
      return "inconclusive";
    case Verdict::NotChecked:
      return "not-checked";
  }
  return "not-checked";
}

bool ConfirmReport::any_confirmed() const {
  return std::any_of(results.begin(), results.end(),
                     [](const FindingResult& r) { return r.verdict == Verdict::Confirmed; });
}

int ConfirmReport::exit_code() const {
  return any_confirmed() || !runtime_findings.empty() ? 1 : 0;
}

namespace {

// A source position compared by real path.
using Site = std::pair<std::string, uint32_t>;

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

// The harness names a cache's owner after the class defining the running method,
// which may be a base class of the declaring module; an entry's `owners` lists
// such related classes together, so owners are the same when both are listed.
bool same_owner(const ModelRun& run, const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  if (a == b) return true;
  auto listed = [&run](const std::string& name) {
    return std::find(run.owners.begin(), run.owners.end(), name) != run.owners.end();
  };
  return listed(a) && listed(b);
}

// Whether `owner` is the cache's owner or the owner of a frame on its creating call chain: a
// cache built several frames below the flagged class's call (a vendored model's helper calling
// the transformers model with use_cache=True) belongs to that class too.
bool owned_by(const ModelRun& run, const CacheEvent& c, const std::string& owner) {
  if (same_owner(run, c.owner, owner)) return true;
  return std::any_of(c.chain.begin(), c.chain.end(),
                     [&](const CacheFrame& frame) { return same_owner(run, frame.owner, owner); });
}

// Whether the member a finding names holds the cache's memory: Unknown when the finding names no
// member or the run saw none (the Python harness, a C++ host without debug information); Same when
// the member of that name belongs to the finding's class (the declaring class, or the cache's owner
// for a member inherited from a base); Other when the cache is other members' memory only (a
// scratch tensor beside the K/V, another class's member of the same name).
enum class MemberMatch { Unknown, Same, Other };
MemberMatch member_match(const CacheEvent& c, const Finding& f) {
  if (c.members.empty() || f.member.empty()) return MemberMatch::Unknown;
  for (const auto& m : c.members)
    if (m.name == f.member && (m.owner == f.owner_class || c.owner == f.owner_class))
      return MemberMatch::Same;
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

// How a message names an observed cache: its class, or for raw tensor K/V (class "raw-tensor") the
// attribute path keeping it, which is what a reader finds in the model's code.
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

// In doubles: the difference of two int64 values need not fit in one.
bool within_tolerance(int64_t declared, int64_t observed, double tolerance) {
  const double reference = std::max(std::fabs(static_cast<double>(observed)), 1.0);
  return std::fabs(static_cast<double>(declared) - static_cast<double>(observed)) / reference <= tolerance;
}

class Reconciler {
 public:
  Reconciler(const std::vector<ModelRun>& runs, const ReconcileOptions& options)
      : runs_(runs), options_(options) {
    for (const auto& run : runs_)
      for (const auto& cache : run.caches) {
        canonical_.emplace(cache.file, real_path(cache.file, {}));
        for (const auto& frame : cache.chain) canonical_.emplace(frame.file, real_path(frame.file, {}));
      }
    for (const auto& run : runs_)
      for (const auto& capture : run.captures) canonical_.emplace(capture.file, real_path(capture.file, {}));
  }

  FindingResult reconcile(const InputFinding& input) {
    FindingResult result{input, Verdict::NotChecked, {}};
    const auto& f = input.finding;
    primary_ = Site{real_path(f.loc.file.str(), options_.bases), f.loc.line};
    sites_.clear();
    sites_.insert(primary_);
    for (const auto& related : f.related)
      sites_.insert(Site{real_path(related.loc.file.str(), options_.bases), related.loc.line});
    booting_.clear();
    for (const auto& run : runs_)
      if (std::find(run.owners.begin(), run.owners.end(), f.owner_class) != run.owners.end())
        booting_.push_back(&run);

    const std::string& code = f.code;
    if (code == "KV101" || code == "KV102")
      presence(f, result);
    else if (code == "KV202")
      fixed_rows(f, result);
    else if (code == "KV203")
      serialized(f, result);
    else if (code == "KV301")
      unconditional(f, result);
    else if (code == "KV302")
      wrapper_declaration(f, result);
    else if (code == "KV103")
      graph_pool(f, result);
    else if (code == "KV303")
      eager_capture(f, result);
    else if (code == "KV401" || code == "KV402")
      capacity(f, result);
    else if (code == "KV105")
      unreachable_declarer(f, result);
    else {
      result.evidence.summary = "static only: the runtime companion does not check this rule";
      if (!booting_.empty()) result.evidence.model = booting_.front()->name;  // listed under that model
    }
    return result;
  }

  // Runtime-only findings are printed beside static ones, whose paths are as the user
  // wrote them: show a file under the working directory relative to it, like those.
  static std::string display_path(const std::string& observed) {
    std::error_code ec;
    const std::filesystem::path cwd = std::filesystem::current_path(ec);
    if (ec) return observed;
    const std::filesystem::path rel = std::filesystem::path(observed).lexically_relative(cwd);
    if (rel.empty() || *rel.begin() == "..") return observed;
    return rel.generic_string();
  }

  std::vector<RuntimeFinding> runtime_findings(const std::vector<InputFinding>& findings,
                                               const std::vector<FindingResult>& results) {
    std::set<Site> named;
    for (const auto& input : findings) {
      named.insert(Site{real_path(input.finding.loc.file.str(), options_.bases), input.finding.loc.line});
      for (const auto& related : input.finding.related)
        named.insert(Site{real_path(related.loc.file.str(), options_.bases), related.loc.line});
    }
    std::vector<RuntimeFinding> out;
    std::set<std::tuple<std::string, std::string, uint32_t>> reported;  // code, real file, line
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
          if (!reported.insert({"RT001", site.first, site.second}).second) continue;
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
          if (!reported.insert({"RT002", site.first, site.second}).second) continue;
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
        if (!reported.insert({"RT001", site.first, site.second}).second) continue;
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
    std::set<std::tuple<std::string, std::string, uint32_t>> reported;  // model, real file, line
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
                other.file == cache.file && other.line == cache.line &&
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
        if (!reported.insert({run.name, canonical_.at(cache.file), cache.line}).second) continue;
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

 private:
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
  static std::string fixed_rows_summary(int64_t rows_fixed, const CacheEvent& cache) {
    return fmt::format("declared FIXED rows_fixed={}, observed rows={} at concurrency {} ({}/row)",
                       rows_fixed, cache.rows, cache.concurrency, format_bytes(cache.bytes_per_row));
  }
  static std::string scaling_rows_summary(const DeclarationEvent& declared, const CacheEvent& cache) {
    return fmt::format("declared MAX_NUM_SEQS rows={}, observed rows={} at concurrency {} ({}/row)",
                       declared.rows, cache.rows, cache.concurrency, format_bytes(cache.bytes_per_row));
  }

  // The caches of a finding on a path: those at its sites, else those of its owner; `only` narrows
  // the candidates before that choice (an eager cache at a site must not hide captured ones).
  std::vector<const CacheEvent*> finding_caches(
      const ModelRun& run, const Group& g, const std::string& owner,
      const std::function<bool(const CacheEvent&)>& only = nullptr) const {
    std::vector<const CacheEvent*> by_site, by_owner;
    for (const auto& c : run.caches) {
      if (c.path != g.path || c.concurrency != g.concurrency || (only && !only(c))) continue;
      bool site_match =
          std::any_of(sites_.begin(), sites_.end(), [&](const Site& s) { return at_site(c, s); });
      if (site_match)
        by_site.push_back(&c);
      else if (owned_by(run, c, owner))
        by_owner.push_back(&c);
    }
    return by_site.empty() ? by_owner : by_site;
  }

  // Another cache of `cache`'s owner, on its path and concurrency and at another line, whose bytes per
  // row are `declared_bytes_per_row` within the tolerance (the one a declaration describes), if any.
  const CacheEvent* cache_matching(const ModelRun& run, const CacheEvent& cache,
                                   int64_t declared_bytes_per_row) const {
    for (const auto& other : run.caches)
      if (&other != &cache && other.path == cache.path && other.concurrency == cache.concurrency &&
          (other.file != cache.file || other.line != cache.line) &&
          same_owner(run, other.owner, cache.owner) &&
          within_tolerance(declared_bytes_per_row, other.bytes_per_row, options_.tolerance))
        return &other;
    return nullptr;
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

  static const CacheEvent* widest(const std::vector<const CacheEvent*>& caches) {
    const CacheEvent* best = nullptr;
    for (const auto* c : caches)
      if (best == nullptr || c->rows > best->rows) best = c;
    return best;
  }

  // When no evidence decided: the first inconclusive run booting the owner, else `otherwise`.
  void undecided(const Finding& f, FindingResult& result, Verdict otherwise, std::string summary) const {
    for (const auto* run : booting_) {
      if (run->status == RunStatus::Inconclusive) {
        result.verdict = Verdict::Inconclusive;
        result.evidence = Evidence{};
        result.evidence.model = run->name;
        result.evidence.gpu_peak_bytes = run->gpu_peak_bytes;
        result.evidence.summary = run->reason;
        return;
      }
    }
    if (booting_.empty()) {
      result.verdict = Verdict::NotExercised;
      result.evidence.summary = fmt::format("no boot entry that was run covers {}", f.owner_class);
      return;
    }
    result.verdict = otherwise;
    if (result.evidence.model.empty()) result.evidence.model = booting_.front()->name;
    result.evidence.summary = std::move(summary);
  }

  // Path errors of the booting runs, for "nothing completed" summaries.
  std::string path_errors() const {
    std::string out;
    for (const auto* run : booting_)
      for (const auto& e : run->errors)
        out += fmt::format("{}{} {} {}: {}", out.empty() ? "; " : ", ", run->name, e.path, e.kind, e.message);
    return out;
  }

  void presence(const Finding& f, FindingResult& result) const {
    // The widest cache created at the finding's line (its own or any frame of its chain), over
    // every run, unless it is other members' memory.
    const ModelRun* site_run = nullptr;
    const CacheEvent* site_cache = nullptr;
    for (const auto& run : runs_)
      for (const auto& c : run.caches)
        if (at_site(c, primary_) && member_match(c, f) != MemberMatch::Other &&
            (site_cache == nullptr || c.rows > site_cache->rows)) {
          site_run = &run;
          site_cache = &c;
        }
    // Else the widest cache whose memory the finding's member holds: K and V are one cache at one
    // line, and a member built empty (first construction) and grown later (torch::cat) is alive
    // only from its growth line.
    bool by_member = false;
    if (site_cache == nullptr)
      for (const auto& run : runs_)
        for (const auto& c : run.caches)
          if (c.bytes > 0 && member_match(c, f) == MemberMatch::Same &&
              (site_cache == nullptr || c.rows > site_cache->rows)) {
            site_run = &run;
            site_cache = &c;
            by_member = true;
          }
    // Else a cache of a run booting the owner whose creating chain passes through the owner class
    // (the call the finding names may sit in a loop or branch the chain records on another line).
    bool by_owner = false;
    if (site_cache == nullptr)
      for (const auto* run : booting_)
        for (const auto& c : run->caches)
          if (c.path != "build" && c.bytes > 0 && owned_by(*run, c, f.owner_class) &&
              member_match(c, f) == MemberMatch::Unknown &&
              (site_cache == nullptr || c.rows > site_cache->rows)) {
            site_run = run;
            site_cache = &c;
            by_owner = true;
          }
    if (site_cache != nullptr) {
      const CacheEvent& c = *site_cache;
      auto declarations = declarations_of(*site_run, c.path, c.concurrency, f.owner_class);
      for (const auto* d : declarations_of(*site_run, c.path, c.concurrency, c.owner))
        if (std::find(declarations.begin(), declarations.end(), d) == declarations.end())
          declarations.push_back(d);
      const DeclarationEvent* d = closest_declaration(declarations, c.bytes_per_row);
      result.evidence = group_evidence(*site_run, c.path, c.concurrency);
      result.evidence.observed = observed_of(c);
      if (d != nullptr) result.evidence.declared = declared_of(*d);
      auto observed = fmt::format(
          "observed {} rows={} at concurrency {} ({}/row){}", c.cache_class.empty() ? "cache" : c.cache_class,
          c.rows, c.concurrency, format_bytes(c.bytes_per_row),
          by_member  ? fmt::format(" created at {}:{}, held in {} of {}", display_path(c.file), c.line,
                                   members_text(c), c.owner)
          : by_owner ? fmt::format(" created at {}:{}, {} on its call chain", display_path(c.file), c.line,
                                   f.owner_class)
                     : std::string());
      // A declaration the runtime collected that covers these bytes means the cache is declared after all
      // (through a hop or inheritance the static analysis did not follow).
      if (d != nullptr && within_tolerance(d->bytes_per_row, c.bytes_per_row, options_.tolerance)) {
        result.verdict = Verdict::Refuted;
        result.evidence.summary = fmt::format("{}, but {} declares it ({}, {}/row)", observed, d->owner,
                                              rows_text(*d), format_bytes(d->bytes_per_row));
      } else {
        result.verdict = Verdict::Confirmed;
        result.evidence.summary = d != nullptr
                                      ? fmt::format("{}, closest declaration {} ({}/row) does not cover it",
                                                    observed, rows_text(*d), format_bytes(d->bytes_per_row))
                                      : observed + ", no declaration";
      }
      return;
    }
    std::vector<std::string> completed;
    for (const auto* run : booting_)
      for (const auto& done : run->paths_done)
        if (done.ok) completed.push_back(fmt::format("{} c={}", done.path, done.concurrency));
    if (!completed.empty()) {
      std::string list;
      for (const auto& c : completed) list += (list.empty() ? "" : ", ") + c;
      undecided(
          f, result, Verdict::Refuted,
          fmt::format("no cache created at {}:{} on completed paths ({})", f.loc.file, f.loc.line, list));
      return;
    }
    undecided(f, result, Verdict::Inconclusive, "no path of the entry ran to completion" + path_errors());
  }

  void fixed_rows(const Finding& f, FindingResult& result) {
    bool any_fixed = false;
    const CacheEvent* refuting = nullptr;
    const ModelRun* refuting_run = nullptr;
    const DeclarationEvent* refuting_decl = nullptr;
    for (const auto* run : booting_) {
      for (const auto& g : groups_of(*run)) {
        auto caches = finding_caches(*run, g, f.owner_class);
        std::vector<const DeclarationEvent*> fixed;
        for (const auto* d : declarations_of(*run, g.path, g.concurrency, f.owner_class))
          if (d->rows_driver == "FIXED") fixed.push_back(d);
        if (fixed.empty()) continue;
        any_fixed = true;
        const CacheEvent* cache = widest(caches);
        if (cache == nullptr) continue;
        const DeclarationEvent* d = closest_declaration(fixed, cache->bytes_per_row);
        const int64_t rows_fixed = d->rows_fixed.value_or(1);
        if (cache->rows > rows_fixed) {
          result.verdict = Verdict::Confirmed;
          result.evidence = observation(*run, *cache, *d);
          result.evidence.summary = fixed_rows_summary(rows_fixed, *cache);
          return;
        }
        if (g.concurrency > rows_fixed && run->path_completed(g.path, g.concurrency) && refuting == nullptr) {
          refuting = cache;
          refuting_run = run;
          refuting_decl = d;
        }
      }
    }
    if (refuting != nullptr) {
      result.evidence = observation(*refuting_run, *refuting, *refuting_decl);
      undecided(f, result, Verdict::Refuted,
                fixed_rows_summary(refuting_decl->rows_fixed.value_or(1), *refuting));
      return;
    }
    undecided(f, result, any_fixed ? Verdict::NotExercised : Verdict::Inconclusive,
              any_fixed
                  ? "no completed path ran above rows_fixed with the cache observed"
                  : fmt::format("no FIXED declaration of {} was collected", f.owner_class) + path_errors());
  }

  void serialized(const Finding& f, FindingResult& result) {
    const CacheEvent* refuting = nullptr;
    const ModelRun* refuting_run = nullptr;
    const DeclarationEvent* refuting_decl = nullptr;
    for (const auto* run : booting_) {
      for (const auto& g : groups_of(*run)) {
        if (g.concurrency <= 1 || !run->path_completed(g.path, g.concurrency)) continue;
        const CacheEvent* cache = widest(finding_caches(*run, g, f.owner_class));
        if (cache == nullptr) continue;
        std::vector<const DeclarationEvent*> scaling;
        for (const auto* d : declarations_of(*run, g.path, g.concurrency, f.owner_class))
          if (d->rows_driver == "MAX_NUM_SEQS") scaling.push_back(d);
        const DeclarationEvent* d = closest_declaration(scaling, cache->bytes_per_row);
        if (d == nullptr) continue;
        if (cache->rows <= 1 && d->rows > 1) {
          result.verdict = Verdict::Confirmed;
          result.evidence = observation(*run, *cache, *d);
          result.evidence.summary = scaling_rows_summary(*d, *cache);
          return;
        }
        if (refuting == nullptr) {
          refuting = cache;
          refuting_run = run;
          refuting_decl = d;
        }
      }
    }
    if (refuting != nullptr) {
      result.evidence = observation(*refuting_run, *refuting, *refuting_decl);
      undecided(f, result, Verdict::Refuted, scaling_rows_summary(*refuting_decl, *refuting));
      return;
    }
    undecided(f, result, Verdict::NotExercised,
              "no completed path above concurrency 1 observed the cache with a MAX_NUM_SEQS declaration");
  }

  void unconditional(const Finding& f, FindingResult& result) {
    const ModelRun* inert_run = nullptr;
    std::string inert_path;
    int inert_concurrency = 0;
    for (const auto* run : booting_) {
      for (const auto& g : groups_of(*run)) {
        if (!run->path_completed(g.path, g.concurrency)) continue;
        if (!finding_caches(*run, g, f.owner_class).empty()) continue;  // this path allocates
        auto declarations = declarations_of(*run, g.path, g.concurrency, f.owner_class);
        const DeclarationEvent* reporting = nullptr;
        for (const auto* d : declarations)
          if (d->total_bytes > 0 && (reporting == nullptr || d->total_bytes > reporting->total_bytes))
            reporting = d;
        if (reporting != nullptr) {
          result.verdict = Verdict::Confirmed;
          result.evidence = group_evidence(*run, g.path, g.concurrency);
          result.evidence.declared = declared_of(*reporting);
          result.evidence.summary = fmt::format(
              "path {} allocates nothing at concurrency {}, yet the declaration reports {} ({}, {}/row)",
              g.path, g.concurrency, format_bytes(reporting->total_bytes), rows_text(*reporting),
              format_bytes(reporting->bytes_per_row));
          return;
        }
        if (inert_run == nullptr) {
          inert_run = run;
          inert_path = g.path;
          inert_concurrency = g.concurrency;
        }
      }
    }
    if (inert_run != nullptr) {
      result.evidence = group_evidence(*inert_run, inert_path, inert_concurrency);
      undecided(f, result, Verdict::Refuted,
                fmt::format("path {} allocates nothing at concurrency {} and the declaration reports nothing",
                            inert_path, inert_concurrency));
      return;
    }
    undecided(f, result, Verdict::NotExercised, "no completed path ran without allocating" + path_errors());
  }

  // Whether the run shows the group's path without a CUDA-graph wrapper: the entry sets
  // `enforce-eager` for it, or it ran on CUDA and neither it nor the build captured anything (a
  // wrapper that exists captures there). On a CPU nothing captures, so only the entry can say.
  static std::string_view without_wrapper(const ModelRun& run, const Group& g) {
    if (run.enforce_eager(g.path)) return "enforce-eager";
    if (!ran_on_cuda(run)) return {};
    const bool captured = std::any_of(run.captures.begin(), run.captures.end(), [&](const CaptureEvent& c) {
      return c.path == "build" || (c.path == g.path && c.concurrency == g.concurrency);
    });
    return captured ? std::string_view{} : std::string_view{"no capture on CUDA"};
  }

  // KV302: the declaration depends on the CUDA-graph wrapper. Decided from what each path showed,
  // whatever it is called: confirmed where the owner allocated while the collected declarations
  // reported nothing; refuted only on a completed path known to run without the wrapper (the
  // entry's `enforce-eager`, or CUDA with no capture) whose declarations cover what it allocated.
  void wrapper_declaration(const Finding& f, FindingResult& result) {
    bool eager_seen = false;
    const ModelRun* refuting_run = nullptr;
    std::string refuting_summary;
    Evidence refuting_evidence;
    for (const auto* run : booting_) {
      for (const auto& g : groups_of(*run)) {
        if (g.path == "build") continue;
        auto caches = finding_caches(*run, g, f.owner_class);
        if (caches.empty())  // the cache may belong to the wrapped module rather than the finding's class
          for (const auto& c : run->caches)
            if (c.path == g.path && c.concurrency == g.concurrency) caches.push_back(&c);
        int64_t allocated = 0;
        for (const auto* c : caches) allocated += c->bytes;
        int64_t collected = 0;
        for (const auto& d : run->declarations)
          if (d.declared && d.path == g.path && d.concurrency == g.concurrency) collected += d.total_bytes;
        Evidence e = group_evidence(*run, g.path, g.concurrency);
        e.collected_total_bytes = collected;
        if (const CacheEvent* widest_cache = widest(caches)) e.observed = observed_of(*widest_cache);
        if (allocated > 0 && collected == 0) {
          result.verdict = Verdict::Confirmed;
          result.evidence = e;
          result.evidence.summary =
              fmt::format("path {} allocates {} at concurrency {}, the collected declarations report 0",
                          g.path, format_bytes(allocated), g.concurrency);
          return;
        }
        const std::string_view eager = without_wrapper(*run, g);
        if (eager.empty()) continue;  // the wrapper may be there: no evidence against the finding
        eager_seen = true;
        if (refuting_run == nullptr && run->path_completed(g.path, g.concurrency)) {
          refuting_run = run;
          refuting_evidence = e;
          refuting_summary =
              allocated == 0 ? fmt::format("path {} ({}) allocates nothing", g.path, eager)
                             : fmt::format("path {} ({}) allocates {}, the collected declarations report {}",
                                           g.path, eager, format_bytes(allocated), format_bytes(collected));
        }
      }
    }
    if (refuting_run != nullptr) {
      result.evidence = refuting_evidence;
      undecided(f, result, Verdict::Refuted, refuting_summary);
      return;
    }
    undecided(f, result, eager_seen ? Verdict::Inconclusive : Verdict::NotExercised,
              eager_seen ? "the path without the CUDA-graph wrapper did not complete" + path_errors()
                         : std::string("no path allocated while its collected declarations reported nothing, "
                                       "and none is known to run without the CUDA-graph wrapper (the "
                                       "entry's enforce-eager, or CUDA with no capture)"));
  }

  // The widest cache built inside a capture on the group's path (at the finding's sites, else of
  // its owner), else one the build captured that is still held (MiMo captures in its constructor).
  const CacheEvent* captured_cache(const ModelRun& run, const Group& g, const std::string& owner) const {
    auto captured = [](const CacheEvent& c) { return c.in_capture && c.bytes_per_row > 0; };
    if (const CacheEvent* on_path = widest(finding_caches(run, g, owner, captured))) return on_path;
    std::vector<const CacheEvent*> built;
    for (const auto& c : run.caches)
      if (c.path == "build" && captured(c) && c.alive_after_step && owned_by(run, c, owner))
        built.push_back(&c);
    return widest(built);
  }

  // KV103: on CUDA, the caches built inside the owner's captures (their K/V kept in the graphs'
  // pools; the harness counts each one while its graph lives) against the FIXED declarations of
  // the same bytes per row. A pool's rows are the captured shapes', never max_num_seqs: a
  // per-sequence declaration does not describe it, whatever its rows at one concurrency.
  void graph_pool(const Finding& f, FindingResult& result) {
    bool cuda_seen = false;
    const ModelRun* refuting_run = nullptr;
    const CacheEvent* refuting = nullptr;
    const DeclarationEvent* refuting_decl = nullptr;
    for (const auto* run : booting_) {
      if (!ran_on_cuda(*run)) continue;
      cuda_seen = true;
      for (const auto& g : groups_of(*run)) {
        if (g.path == "build" || !run->path_completed(g.path, g.concurrency)) continue;
        const CacheEvent* captured = captured_cache(*run, g, f.owner_class);
        if (captured == nullptr) continue;
        std::vector<const DeclarationEvent*> fixed;
        for (const auto* d : declarations_of(*run, g.path, g.concurrency, f.owner_class))
          if (d->rows_driver == "FIXED") fixed.push_back(d);
        const DeclarationEvent* d = covering_declaration(fixed, *captured);
        if (d != nullptr && d->rows >= captured->rows) {
          if (refuting == nullptr) {
            refuting_run = run;
            refuting = captured;
            refuting_decl = d;
          }
          continue;
        }
        result.verdict = Verdict::Confirmed;
        result.evidence = group_evidence(*run, g.path, g.concurrency);
        result.evidence.observed = observed_of(*captured);
        if (d != nullptr) result.evidence.declared = declared_of(*d);
        result.evidence.summary = fmt::format(
            "caches built inside captures{} hold {} rows ({}/row, {}) on path {} at concurrency {}; {}",
            captured->path == "build" ? " by the build" : "", captured->rows,
            format_bytes(captured->bytes_per_row), format_bytes(captured->bytes_per_row * captured->rows),
            g.path, g.concurrency,
            d != nullptr
                ? fmt::format("the FIXED declaration of those bytes, \"{}\", holds {}", d->name, d->rows)
                : std::string("no FIXED declaration of those bytes per row"));
        return;
      }
    }
    if (refuting != nullptr) {
      result.evidence = observation(*refuting_run, *refuting, *refuting_decl);
      undecided(f, result, Verdict::Refuted,
                fmt::format("caches built inside captures hold {} rows ({}/row), declared by \"{}\" ({})",
                            refuting->rows, format_bytes(refuting->bytes_per_row), refuting_decl->name,
                            rows_text(*refuting_decl)));
      return;
    }
    undecided(f, result, Verdict::NotExercised,
              cuda_seen ? std::string("no cache was built inside a capture on the paths that ran")
                        : std::string("graph capture needs a CUDA device; the paths ran on the CPU"));
  }

  void eager_capture(const Finding& f, FindingResult& result) {
    bool eager_seen = false, cuda_seen = false;
    const ModelRun* refuting_run = nullptr;
    Evidence refuting_evidence;
    for (const auto* run : booting_) {
      for (const auto& g : groups_of(*run)) {
        if (!run->enforce_eager(g.path)) continue;  // a capture is a fault only under enforce_eager
        eager_seen = true;
        if (!ran_on_cuda(*run)) continue;  // no capture can happen without CUDA: no evidence either way
        cuda_seen = true;
        const CaptureEvent* capture = nullptr;
        for (const auto& c : run->captures) {
          // A graph an earlier path captured is held here, not captured here.
          if (c.path != g.path || c.concurrency != g.concurrency || c.retained) continue;
          bool site_match = std::any_of(sites_.begin(), sites_.end(), [&](const Site& s) {
            return c.line == s.second && canonical_.at(c.file) == s.first;
          });
          if (capture == nullptr || site_match || same_owner(*run, c.owner, f.owner_class)) capture = &c;
          if (site_match) break;
        }
        if (capture != nullptr) {
          result.verdict = Verdict::Confirmed;
          result.evidence = group_evidence(*run, g.path, g.concurrency);
          result.evidence.capture =
              CaptureEvidence{capture->file, capture->kind, capture->owner, capture->line, capture->count};
          result.evidence.summary = fmt::format("{} capture(s) ({}) at {}:{} on path {}", capture->count,
                                                capture->kind, capture->file, capture->line, g.path);
          return;
        }
        if (refuting_run == nullptr && run->path_completed(g.path, g.concurrency)) {
          refuting_run = run;
          refuting_evidence = group_evidence(*run, g.path, g.concurrency);
        }
      }
    }
    if (refuting_run != nullptr) {
      result.evidence = refuting_evidence;
      undecided(f, result, Verdict::Refuted, fmt::format("no capture on path {}", refuting_evidence.path));
      return;
    }
    if (eager_seen && !cuda_seen) {
      undecided(f, result, Verdict::NotExercised,
                "graph capture needs a CUDA device; the eager path ran on the CPU");
      return;
    }
    undecided(f, result, eager_seen ? Verdict::Inconclusive : Verdict::NotExercised,
              eager_seen ? "the enforce-eager path did not complete" + path_errors()
                         : std::string("the boot entry marks no path enforce-eager"));
  }

  // Whether a cache's length stopped at a bound: preallocated (a static cache), or its storage stayed
  // the same over the last update rounds while the drive kept feeding it (a sliding window).
  static bool bounded(const CacheEvent& c) {
    if (c.cache_class.find("Static") != std::string::npos) return true;
    const auto n = c.growth.size();
    return n >= 2 && c.growth[n - 1] == c.growth[n - 2];
  }

  // The declaration of the cache's geometry: closest bytes per position (layers x heads x dim x dtype),
  // which a wrong capacity does not change.
  static const DeclarationEvent* same_geometry(const std::vector<const DeclarationEvent*>& declarations,
                                               const CacheEvent& c) {
    const DeclarationEvent* best = nullptr;
    double best_gap = 0;
    if (c.positions <= 0) return nullptr;
    const double observed = static_cast<double>(c.bytes_per_row) / static_cast<double>(c.positions);
    for (const auto* d : declarations) {
      if (d->capacity <= 0) continue;
      const double declared = static_cast<double>(d->bytes_per_row) / static_cast<double>(d->capacity);
      const double gap = std::fabs(declared - observed);
      if (best == nullptr || gap < best_gap) {
        best = d;
        best_gap = gap;
      }
    }
    return best;
  }

  // KV401 / KV402: the positions the cache holds vs the declared capacity.
  void capacity(const Finding& f, FindingResult& result) {
    std::optional<Evidence> refuting, unreached;
    for (const auto* run : booting_) {
      for (const auto& g : groups_of(*run)) {
        if (!run->path_completed(g.path, g.concurrency)) continue;
        for (const auto* c : finding_caches(*run, g, f.owner_class)) {
          auto declarations = declarations_of(*run, g.path, g.concurrency, f.owner_class);
          for (const auto* d : declarations_of(*run, g.path, g.concurrency, c->owner))
            if (std::find(declarations.begin(), declarations.end(), d) == declarations.end())
              declarations.push_back(d);
          const DeclarationEvent* d = same_geometry(declarations, *c);
          if (d == nullptr) continue;
          Evidence e = observation(*run, *c, *d);
          const bool stops = bounded(*c);
          if (c->positions > d->capacity || (stops && c->positions != d->capacity)) {
            result.verdict = Verdict::Confirmed;
            result.evidence = e;
            result.evidence.summary =
                fmt::format("{} holds {} positions{} on path {} at concurrency {}, declared capacity {} ({})",
                            c->cache_class.empty() ? "the cache" : c->cache_class, c->positions,
                            stops ? " (its bound)" : " and was still growing", g.path, g.concurrency,
                            d->capacity, d->capacity_source.empty() ? d->name : d->capacity_source);
            return;
          }
          if (stops && !refuting) {
            refuting = e;
            refuting->summary =
                fmt::format("{} stops at {} positions on path {}, the declared capacity",
                            c->cache_class.empty() ? "the cache" : c->cache_class, c->positions, g.path);
          } else if (!stops && !unreached) {
            unreached = e;
            unreached->summary = fmt::format(
                "{} grew to {} positions on path {} without reaching its bound; declared capacity {}",
                c->cache_class.empty() ? "the cache" : c->cache_class, c->positions, g.path, d->capacity);
          }
        }
      }
    }
    if (refuting) {
      result.evidence = *refuting;
      undecided(f, result, Verdict::Refuted, refuting->summary);
      return;
    }
    if (unreached) {
      result.evidence = *unreached;
      undecided(f, result, Verdict::NotExercised, unreached->summary);
      return;
    }
    undecided(f, result, Verdict::NotExercised,
              fmt::format("no completed path observed a cache of {} beside a declaration with a capacity",
                          f.owner_class) +
                  path_errors());
  }

  // KV105: the collector's walk on a completed path returned no spec of the declaring class.
  void unreachable_declarer(const Finding& f, FindingResult& result) {
    const ModelRun* missing_run = nullptr;
    const PathDoneEvent* missing_path = nullptr;
    for (const auto* run : booting_) {
      for (const auto& done : run->paths_done) {
        if (!done.ok) continue;
        // Exact class: the harness names a declaration after the class whose method returned it
        // (or the object a hop reached), never a base class.
        const auto found =
            std::find_if(run->declarations.begin(), run->declarations.end(), [&](const auto& d) {
              return d.declared && d.path == done.path && d.concurrency == done.concurrency &&
                     d.owner == f.owner_class;
            });
        if (found != run->declarations.end()) {
          result.evidence = group_evidence(*run, done.path, done.concurrency);
          result.evidence.declared = declared_of(*found);
          undecided(f, result, Verdict::Refuted,
                    fmt::format("the collector reached {} on path {} (spec \"{}\", {}/row)", f.owner_class,
                                done.path, found->name, format_bytes(found->bytes_per_row)));
          return;
        }
        // Only an owner seen holding memory on the path shows the walk missed it; an owner that
        // allocated nothing there may just be inert (returning no spec) on that path.
        const bool holds = std::any_of(run->caches.begin(), run->caches.end(), [&](const CacheEvent& c) {
          return c.owner == f.owner_class && c.path == done.path && c.concurrency == done.concurrency;
        });
        if (holds && missing_run == nullptr) {
          missing_run = run;
          missing_path = &done;
        }
      }
    }
    if (missing_run != nullptr) {
      std::set<std::string> collected;
      for (const auto& d : missing_run->declarations)
        if (d.declared && d.path == missing_path->path && d.concurrency == missing_path->concurrency)
          collected.insert(d.owner);
      std::string owners;
      for (const auto& o : collected) owners += (owners.empty() ? "" : ", ") + o;
      result.verdict = Verdict::Confirmed;
      result.evidence = group_evidence(*missing_run, missing_path->path, missing_path->concurrency);
      result.evidence.summary =
          fmt::format("the collector's walk on path {} returned no spec of {} (collected: {})",
                      missing_path->path, f.owner_class, owners.empty() ? "nothing" : owners);
      return;
    }
    const bool any_completed = std::any_of(booting_.begin(), booting_.end(), [](const ModelRun* run) {
      return std::any_of(run->paths_done.begin(), run->paths_done.end(), [](const auto& p) { return p.ok; });
    });
    undecided(f, result, any_completed ? Verdict::NotExercised : Verdict::Inconclusive,
              any_completed
                  ? fmt::format("{} held no cache on a completed path and no spec of it was collected",
                                f.owner_class)
                  : "no path of the entry ran to completion" + path_errors());
  }

  const std::vector<ModelRun>& runs_;
  const ReconcileOptions& options_;
  std::map<std::string, std::string> canonical_;  // observed file -> real path
  Site primary_;
  std::set<Site> sites_;
  std::vector<const ModelRun*> booting_;
};

}  // namespace

ConfirmReport reconcile(const std::vector<InputFinding>& findings, std::vector<ModelRun> runs,
                        const ReconcileOptions& options) {
  ConfirmReport report;
  report.tolerance = options.tolerance;
  report.models = std::move(runs);
  Reconciler reconciler(report.models, options);
  for (const auto& input : findings) report.results.push_back(reconciler.reconcile(input));
  report.runtime_findings = reconciler.runtime_findings(findings, report.results);
  return report;
}

}  // namespace kvlint::confirm
