// Per-code verdicts: each static finding the runtime can check (KV101/KV102 presence, KV103 graph
// pools, KV105, KV202, KV203, KV301, KV302, KV303, KV401/KV402) becomes confirmed / refuted /
// not-exercised / inconclusive with evidence; any other code is not-checked.
// Takes: the findings and the runs. Gives: one FindingResult per finding, in the findings' order.
// Invariant: a verdict rests on what a run observed on a path (caches, captures, collected
// declarations, completed paths) and on the entry's configuration (`enforce-eager`), never on how
// a path is named; a run that ended inconclusive makes an undecided finding inconclusive.
#include "tools/kvlint/confirm/reconcile_verdicts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "tools/kvlint/confirm/reconcile_observations.hpp"

namespace kvlint::confirm::detail {
namespace {

class FindingVerdicts : public Observations {
 public:
  using Observations::Observations;

  FindingResult reconcile(const InputFinding& input) {
    FindingResult result{input, Verdict::NotChecked, {}};
    const auto& f = input.finding;
    finding_ = &f;
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

  static std::string fixed_rows_summary(int64_t rows_fixed, const CacheEvent& cache) {
    return fmt::format("declared FIXED rows_fixed={}, observed rows={} at concurrency {} ({}/row)",
                       rows_fixed, cache.rows, cache.concurrency, format_bytes(cache.bytes_per_row));
  }

  static std::string scaling_rows_summary(const DeclarationEvent& declared, const CacheEvent& cache) {
    return fmt::format("declared MAX_NUM_SEQS rows={}, observed rows={} at concurrency {} ({}/row)",
                       declared.rows, cache.rows, cache.concurrency, format_bytes(cache.bytes_per_row));
  }

  // The caches of a finding on a path: those holding the member it names (the C++ host's: by
  // member, so lines an edit shifted since the plugin was built do not matter), else those at its
  // sites, else those of its owner; `only` narrows the candidates before that choice (an eager
  // cache at a site must not hide captured ones).
  std::vector<const CacheEvent*> finding_caches(
      const ModelRun& run, const Group& g, const std::string& owner,
      const std::function<bool(const CacheEvent&)>& only = nullptr) const {
    std::vector<const CacheEvent*> by_member, by_site, by_owner;
    for (const auto& c : run.caches) {
      if (c.path != g.path || c.concurrency != g.concurrency || (only && !only(c))) continue;
      if (finding_ != nullptr && member_match(c, *finding_) == MemberMatch::Same) {
        by_member.push_back(&c);
        continue;
      }
      bool site_match =
          std::any_of(sites_.begin(), sites_.end(), [&](const Site& s) { return at_site(c, s); });
      if (site_match)
        by_site.push_back(&c);
      else if (owned_by(run, c, owner))
        by_owner.push_back(&c);
    }
    if (!by_member.empty()) return by_member;
    return by_site.empty() ? by_owner : by_site;
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
      // An entry that runs every path under enforce_eager describes an eager deployment: the build
      // (a constructor capturing its buckets) ran under it too.
      const bool deployment_eager =
          !run->paths.empty() && std::all_of(run->paths.begin(), run->paths.end(),
                                             [&](const std::string& p) { return run->enforce_eager(p); });
      for (const auto& g : groups_of(*run)) {
        // A capture is a fault only under enforce_eager.
        if (!run->enforce_eager(g.path) && !(g.path == "build" && deployment_eager)) continue;
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
          result.evidence.summary =
              g.path == "build"
                  ? fmt::format(
                        "{} capture(s) ({}) at {}:{} while the factory built the model, every path "
                        "of the entry enforce-eager",
                        capture->count, capture->kind, capture->file, capture->line)
                  : fmt::format("{} capture(s) ({}) at {}:{} on path {}", capture->count, capture->kind,
                                capture->file, capture->line, g.path);
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

 private:
  const Finding* finding_ = nullptr;  // the finding being reconciled
  Site primary_;
  std::set<Site> sites_;
  std::vector<const ModelRun*> booting_;
};

}  // namespace

std::vector<FindingResult> finding_verdicts(const std::vector<InputFinding>& findings,
                                            const std::vector<ModelRun>& runs,
                                            const ReconcileOptions& options) {
  FindingVerdicts verdicts(runs, options);
  std::vector<FindingResult> results;
  for (const auto& input : findings) results.push_back(verdicts.reconcile(input));
  return results;
}

}  // namespace kvlint::confirm::detail
