// The check pipeline: discover the files and group them into projects, then take each project
// through the stages (project_run.hpp: read, prefilter, analyse, widen, resolve and check,
// record), with the whole-run memo between reading and analysing. Knows nothing about
// individual rules.
#include "tools/kvlint/engine/engine.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <utility>

#include "tools/kvlint/engine/cpp_module.hpp"
#include "tools/kvlint/engine/discovery.hpp"
#include "tools/kvlint/engine/file_index.hpp"
#include "tools/kvlint/engine/project_run.hpp"
#include "tools/kvlint/engine/result_cache.hpp"
#include "tools/kvlint/engine/source_file.hpp"
#include "tools/kvlint/engine/workers.hpp"

namespace kvlint::pipeline {
namespace fs = std::filesystem;

namespace {

// Where the configuration lives, for cache keys: equal settings in two
// directories resolve paths (and per-file ignores) against different roots.
std::string config_location(const Config& config) {
  std::error_code ec;
  return fs::absolute(config.source ? *config.source : config.root, ec).lexically_normal().string();
}

// Dotted module path: directories holding __init__.py above the file, up to the config root.
class ModuleNamer {
 public:
  explicit ModuleNamer(fs::path root) : root_(std::move(root)) {}
  std::string name_of(const fs::path& absolute) {
    std::vector<std::string> parts;
    const std::string stem = absolute.stem().string();
    if (stem != "__init__") parts.push_back(stem);
    fs::path dir = absolute.parent_path();
    while (dir != root_ && dir.has_relative_path() && is_package(dir)) {
      parts.push_back(dir.filename().string());
      dir = dir.parent_path();
    }
    std::string out;
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += (out.empty() ? "" : ".") + *it;
    return out;
  }

 private:
  bool is_package(const fs::path& dir) {
    auto [it, inserted] = packages_.try_emplace(dir.string(), false);
    if (inserted) {
      std::error_code ec;
      it->second = fs::is_regular_file(dir / "__init__.py", ec);
    }
    return it->second;
  }
  fs::path root_;
  std::map<std::string, bool> packages_;
};

}  // namespace

ProjectRun::ProjectRun(DiscoveredProject project, const Workers& workers, const std::string& tool_identity,
                       bool defer_context)
    : config_(std::move(project.config)),
      workers_(workers),
      config_fingerprint_(config_.fingerprint()),
      config_location_(config_location(config_)),
      tool_identity_(tool_identity),
      defer_context_(defer_context),
      vocabulary_(config_.vocabulary),
      initial_prefilter_(vocabulary_) {
  ModuleNamer namer(config_.root);
  files_.reserve(project.files.size());
  for (auto& f : project.files) {
    FileState state;
    state.module_name = namer.name_of(f.absolute);
    state.is_cpp = config_.is_cpp_name(f.display);
    has_cpp_ = has_cpp_ || state.is_cpp;
    state.file = std::move(f);
    if (state.file.reported) reported_.insert(state.file.display);
    files_.push_back(std::move(state));
  }
  result_.stats.files_found = reported_.size();
  result_.stats.files_context = files_.size() - reported_.size();
}

// The C++ front end (loaded once per run) and the command-line compile database; before check().
void ProjectRun::use_cpp(const CppFrontEndModule* module, const fs::path& compile_commands,
                         IncludedFilesCheck& included) {
  cpp_module_ = module;
  included_files_ = &included;
  compile_database_ = find_compile_database(compile_commands, config_.cpp.compile_commands, config_.root);
  if (!compile_database_.empty()) {
    ReadOutcome db = read_source(compile_database_, compile_database_.string());
    compile_database_hash_ = XXH3_64bits(db.content.data(), db.content.size());
  } else if (!compile_commands.empty() || !config_.cpp.compile_commands.empty()) {
    Diagnostic d;
    d.path = compile_commands.empty() ? config_.cpp.compile_commands : compile_commands.string();
    d.kind = "config";
    d.message = "no compile_commands.json there; C++ files use the fallback flags";
    result_.diagnostics.push_back(std::move(d));
  }
}

// The stages after reading (read_all), in order; each is defined in its stage's file
// (project_run.hpp lists them). Analyses through `cache` when given.
void ProjectRun::check(ResultCache* cache) {
  cache_ = cache;
  prefilter();
  analyse_seeds();
  widen();
  // The kept bytes served the widening rounds' text scans; the rules phase, the run's peak,
  // reads again only the files with findings (their evidence lines).
  for (auto& f : files_) f.kept.reset();
  keep_reads_ = false;
  run_rules();  // resolve and check, widening again for what the rules' questions need
  result_.stats.bytes_reread = bytes_reread_.load();
  for (const auto& f : files_)
    if (f.changed && is_reported(f)) {
      Diagnostic d;
      d.path = f.file.display;
      d.kind = "read-error";
      d.message =
          "changed while being checked (or no longer readable); its results may be incomplete: check again";
      result_.diagnostics.push_back(std::move(d));
    }
}

}  // namespace kvlint::pipeline

namespace kvlint {
namespace fs = std::filesystem;
using pipeline::IncludedFilesCheck;
using pipeline::ProjectRun;
using pipeline::run_memo_key;
using pipeline::run_memo_of;

namespace {

// -j N, capped at the cores this process may use: more workers than that cannot run at once.
unsigned worker_count(unsigned jobs) {
  const unsigned cores = available_cores();
  return jobs == 0 ? cores : std::min(jobs, cores);
}

// Version plus the identity of this binary, so a rebuilt front end never reuses stale facts.
std::string build_identity() {
  struct stat st {};
  if (::stat("/proc/self/exe", &st) != 0) return std::string(kKvlintVersion);
  return fmt::format("{}+{}.{}.{}", kKvlintVersion, static_cast<long long>(st.st_size),
                     static_cast<long long>(st.st_mtim.tv_sec), static_cast<long long>(st.st_mtim.tv_nsec));
}

// Adds what `project` found in its check (findings, diagnostics, counts) to the run's result.
void add_checked_project(CheckResult& result, ProjectRun& project) {
  CheckResult& part = project.result();
  for (auto& f : part.findings) result.findings.push_back(std::move(f));
  for (auto& d : part.diagnostics) result.diagnostics.push_back(std::move(d));
  for (auto& detail : part.details) result.details.push_back(std::move(detail));
  for (auto& parsed : part.parsed_files) result.parsed_files.push_back(std::move(parsed));
  for (auto& widened : part.widened) result.widened.push_back(std::move(widened));
  result.suppressed += part.suppressed;
  result.stats.files_parsed += part.stats.files_parsed;
  result.stats.files_cached += part.stats.files_cached;
  result.stats.files_skipped += part.stats.files_skipped;
  result.stats.files_deferred += part.stats.files_deferred;
  result.stats.rule_rounds += part.stats.rule_rounds;
  result.stats.files_failed += project.analysis_failures();
  result.stats.bytes_parsed += part.stats.bytes_parsed;
  result.stats.bytes_reread += part.stats.bytes_reread;
}

}  // namespace

std::string fingerprint_of(const Finding& finding, std::string_view evidence_text) {
  return pipeline::fingerprint_string(finding, evidence_text);
}

CheckResult run_check(const CheckOptions& options) {
  CheckResult result;
  std::error_code ec;
  const fs::path cache_dir =
      options.cache_dir.empty() ? fs::path() : fs::absolute(options.cache_dir, ec).lexically_normal();
  DiscoveryOptions discovery;
  discovery.force_exclude = options.force_exclude;
  discovery.cache_dir = cache_dir;
  discovery.nearest_config = options.nearest_config;
  discovery.overrides = options.overrides;
  discovery.load_context = options.load_project_context;
  DiscoveryResult found = discover_files(options.paths, options.config, discovery);
  result.diagnostics = std::move(found.diagnostics);
  result.stats.files_failed += found.missing;
  for (auto& note : found.notes) result.notes.push_back(std::move(note));
  if (!found.links_leaving_tree.empty())
    result.details.push_back(fmt::format(
        "not following {} symbolic link{} that leave{} the checked tree: {}", found.links_leaving_tree.size(),
        found.links_leaving_tree.size() == 1 ? "" : "s", found.links_leaving_tree.size() == 1 ? "s" : "",
        fmt::join(found.links_leaving_tree, ", ")));

  const Workers workers(worker_count(options.jobs));
  const std::string tool_identity = build_identity();
  // Stamps within kRacyWindow of this are not trusted next time (file_index.hpp).
  const auto run_start = options.started_at.value_or(std::chrono::system_clock::now());
  std::vector<std::unique_ptr<ProjectRun>> projects;
  for (auto& project : found.projects)
    projects.push_back(
        std::make_unique<ProjectRun>(std::move(project), workers, tool_identity, options.defer_context));
  auto cache_dir_of = [&](const ProjectRun& project) {
    return cache_dir.empty() ? project.config().root / ".kvlint_cache" : cache_dir;
  };
  // A cache directory that must not be used (a symbolic link: a committed
  // `.kvlint_cache` link would redirect writes) is one note; its projects run uncached.
  std::map<fs::path, bool> usable_cache_dirs;
  auto cache_usable = [&](const ProjectRun& project) {
    if (!options.use_cache) return false;
    const fs::path dir = cache_dir_of(project);
    auto [it, inserted] = usable_cache_dirs.emplace(dir, true);
    if (inserted) {
      if (auto problem = cache_directory_problem(dir)) {
        result.notes.push_back(std::move(*problem));
        it->second = false;
      }
    }
    return it->second;
  };
  // One file index per cache directory, shared by the projects that use it.
  std::map<fs::path, std::unique_ptr<FileIndex>> indexes;
  std::atomic<std::size_t> kept_bytes{0};
  for (auto& project : projects) {
    FileIndex* index = nullptr;
    if (cache_usable(*project)) {
      auto& slot = indexes[cache_dir_of(*project)];
      if (!slot) slot = std::make_unique<FileIndex>(cache_dir_of(*project), tool_identity);
      index = slot.get();
    }
    project->read_all(kept_bytes, index);
    project->add_content_hashes(result.content_hashes);
  }
  // What the run learnt of its files, for the next run's reads; a failure only costs that
  // run its shortcut, and is said once (the cache's own note comes first when both fail).
  auto save_indexes = [&](bool say_failure) {
    for (auto& [dir, index] : indexes) {
      std::vector<std::string> paths_in_run;
      for (const auto& project : projects)
        if (cache_dir_of(*project) == dir) {
          project->record_in(*index, run_start);
          project->add_paths(paths_in_run);
        }
      std::string error;
      if (!index->save(paths_in_run, error) && say_failure)
        result.notes.push_back(fmt::format("caching disabled: cannot write the file index: {}", error));
    }
  };
  // The C++ front end is loaded only when some project has C++ files: one diagnostic per run
  // when it cannot be (each C++ file is then reported as not analysed).
  std::optional<CppFrontEndModule> cpp_module;
  for (const auto& project : projects)
    if (project->has_cpp() && !cpp_module) {
      cpp_module.emplace();
      if (!cpp_module->loaded()) {
        Diagnostic d;
        d.kind = "cpp-frontend";
        d.message = cpp_module->problem();
        result.diagnostics.push_back(std::move(d));
      }
    }
  IncludedFilesCheck included_files;
  for (auto& project : projects)
    if (project->has_cpp())
      project->use_cpp(cpp_module ? &*cpp_module : nullptr, options.compile_commands, included_files);
  // A finding fails the run at or above the fail-on level of its own file's configuration.
  auto count_failing = [&] {
    std::map<std::string, Severity> fail_on;
    for (const auto& project : projects)
      for (const auto& display : project->reported()) fail_on.emplace(display, project->config().fail_on);
    result.findings_failing = 0;
    for (const auto& f : result.findings) {
      auto it = fail_on.find(f.loc.file);
      const Severity level = it != fail_on.end() ? it->second
                             : projects.empty()  ? options.config.fail_on
                                                 : projects.front()->config().fail_on;
      if (f.severity >= level) ++result.findings_failing;
    }
  };
  // The memo and the caches hold every finding; the report only those the filter keeps.
  auto keep_reported = [&] {
    if (options.report_filter)
      std::erase_if(result.findings, [&](const Finding& f) { return !options.report_filter(f); });
    count_failing();
  };
  for (const auto& project : projects) {
    const CheckStats& s = project->result().stats;
    result.stats.files_found += s.files_found;
    result.stats.files_context += s.files_context;
    result.stats.bytes_read += s.bytes_read;
    result.stats.files_failed += s.files_failed;
    result.stats.files_unread += s.files_unread;
  }

  // The whole-run memo: one key over every project, kept with the first project's cache.
  std::string memo_key;
  const bool use_memo = !projects.empty() && cache_usable(*projects.front());
  if (use_memo) {
    memo_key = run_memo_key(tool_identity, projects, result.diagnostics);
    if (auto memo = load_run_memo(cache_dir_of(*projects.front()), memo_key);
        memo && included_files.holds(memo->dependencies)) {
      result.findings = std::move(memo->findings);
      result.diagnostics = std::move(memo->diagnostics);
      result.suppressed = memo->suppressed;
      result.stats.files_cached = memo->files_analysed;
      result.stats.files_skipped = memo->files_skipped;
      result.stats.files_deferred = memo->files_deferred;
      result.stats.files_failed += memo->files_failed;
      save_indexes(true);
      keep_reported();
      return result;
    }
  }

  // One per-file cache per cache directory, shared by the projects that use it.
  std::map<fs::path, std::unique_ptr<ResultCache>> caches;
  for (const auto& project : projects) {
    ResultCache* cache = nullptr;
    if (cache_usable(*project)) {
      auto& slot = caches[cache_dir_of(*project)];
      if (!slot) {
        slot = std::make_unique<ResultCache>(cache_dir_of(*project), tool_identity);
        if (!slot->note().empty()) result.notes.push_back(slot->note());
      }
      cache = slot.get();
    }
    project->check(cache);
    add_checked_project(result, *project);
  }
  std::sort(result.findings.begin(), result.findings.end(), pipeline::finding_less);
  std::sort(result.diagnostics.begin(), result.diagnostics.end(), pipeline::diagnostic_less);
  // A cache that cannot be written (read-only directory, full disk) is one
  // note; the run's result stands, and no memo is written beside it.
  bool caches_saved = true;
  for (auto& [dir, cache] : caches) {
    std::vector<std::string> paths_in_run;
    for (const auto& project : projects)
      if (cache_dir_of(*project) == dir) project->add_paths(paths_in_run);
    if (!cache->save(paths_in_run)) {
      result.notes.push_back(cache->note());
      caches_saved = false;
    }
  }
  save_indexes(caches_saved);
  // A run that saw a file change under it is not remembered as the result of the tree.
  const bool saw_changes = std::any_of(projects.begin(), projects.end(),
                                       [](const auto& project) { return project->saw_changes(); });
  if (use_memo && caches_saved && !saw_changes) {
    const RunMemo memo = run_memo_of(result, projects);
    std::string error;
    if (!save_run_memo(cache_dir_of(*projects.front()), memo_key, memo, error))
      result.notes.push_back(fmt::format("caching disabled: cannot write the cache: {}", error));
  }
  keep_reported();
  if (options.retain_run_state) {
    struct RunState {
      std::vector<std::unique_ptr<ProjectRun>> projects;
      std::map<fs::path, std::unique_ptr<ResultCache>> caches;
      std::map<fs::path, std::unique_ptr<FileIndex>> indexes;
    };
    result.run_state =
        std::make_shared<RunState>(RunState{std::move(projects), std::move(caches), std::move(indexes)});
  }
  return result;
}

}  // namespace kvlint
