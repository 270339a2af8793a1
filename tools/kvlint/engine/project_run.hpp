// One project's run through the pipeline (private to the engine). `ProjectRun` holds the files
// one configuration governs and takes them through the stages, one file each:
//
//   read.cpp               read and hash every file, keep bytes within kKeptBytesBudget
//   prefilter.cpp          skip files with no anchor, defer those that can only give context
//   analyse.cpp            facts through the front ends and the per-file result cache
//   widen.cpp              analyse the skipped and deferred files resolution needs (WideningStep)
//   resolve_and_check.cpp  the project, the rules, suppressions, fingerprints
//   record.cpp             what the next run may reuse: the file index, the memo key
//
// engine.cpp (`run_check`) discovers the projects and runs each through these stages.
#pragma once

#include <xxhash.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "analyzers/facts/facts.hpp"
#include "analyzers/facts/project.hpp"
#include "tools/kvlint/engine/cpp_module.hpp"
#include "tools/kvlint/engine/discovery.hpp"
#include "tools/kvlint/engine/engine.hpp"
#include "tools/kvlint/engine/file_index.hpp"
#include "tools/kvlint/engine/needle_search.hpp"
#include "tools/kvlint/engine/result_cache.hpp"
#include "tools/kvlint/engine/workers.hpp"

namespace kvlint::pipeline {

// Extra rounds after the first pass: subclass discovery and base-class lookups.
constexpr int kMaxWideningRounds = 8;
// Files that build a capturing class, the files that build those, and one level more: where
// enforce_eager gates are found. KV303 follows a capture's gates two levels up from the
// capturing class; KV302 follows a wrapper's two levels up from the class that attaches it
// (the wrapper's builder), which is one level further.
constexpr int kCaptureHolderLevels = 3;
constexpr int kMaxBaseRounds = 2;
// Rounds of the rules asking for deferred files (run_rules); the last analyses every one left.
constexpr int kMaxDemandRounds = 8;

// What the run keeps of one file between phases.
struct FileState {
  DiscoveredFile file;
  std::uint64_t content_hash = 0;   // XXH3-64 of the bytes first read; a re-read must match it
  std::optional<std::string> kept;  // those bytes, while the run's kKeptBytesBudget allows
  bool readable = false;
  bool changed = false;  // a re-read found other bytes (or none): the file changed during the run
  std::string module_name;
  std::optional<facts::FileFacts> facts;  // set once analysed
  std::vector<Diagnostic> analysis_diagnostics;
  bool parsed = false;           // went through the front end at least once this run
  // Python: python::may_hold_raw_kv of the bytes, answered by the prefilter's search for the
  // front end (analyse.cpp) the first time the file is parsed.
  std::optional<bool> raw_kv_text;
  unsigned parses = 0;           // times it went through the front end this run
  std::size_t parsed_bytes = 0;  // the bytes it was parsed from
  bool anchor_hit = false;       // the prefilter: contains a vocabulary anchor
  // Python: the anchors include none that can give a seed fact (python/text_scan.hpp); the file is
  // analysed only when a rule's question needs it.
  bool deferred = false;
  bool is_cpp = false;                       // analysed by the C++ front end
  bool analysis_failed = false;              // the C++ front end could not analyse it at all
  std::vector<FileDependency> dependencies;  // the headers its C++ result depends on
  std::vector<std::string> dropped_options;  // C++: compile options left out (not how the file is read)
  std::optional<std::vector<std::string>> defined_classes;  // names after `class `, scanned on demand
  // The identifier tokens of a file whose bytes the run does not keep (token_summary.hpp): the
  // widening stage's searches read the bytes only where it says they may match.
  std::optional<TokenSummary> tokens;
  // Python, beside `tokens`: the names handed self (python::names_handed_self), which the demand
  // search asks of deferred files; unset where the bytes were not summarised (by this run, or by
  // the run that recorded the file index's entry) or where it cannot tell.
  std::optional<std::vector<std::string>> handed_self;
  // Analysed by the base-class search (analyse_bases) this many levels from a file analysed for
  // what it holds; its own bases are searched for below kMaxBaseRounds.
  int base_level = 0;
  // The file index (file_index.hpp): whether the hash and scans came from the index instead of
  // a read (the stamp is file.stamp), the text scans' results as the index recorded them, and
  // those this run used.
  bool from_index = false;
  const std::vector<ScanRecord>* indexed_scans = nullptr;  // the index's, which outlives the run
  std::vector<ScanRecord> scans;
  bool read_once = false;       // read again by some phase since the first read (or the index)
  std::string_view widened_by;  // the widening step that first analysed it (WideningStep::name)
};

// A file's bytes for one phase: the run's kept copy, or those read again; empty (false) when
// the file changed since it was first read or cannot be read any more.
class FileBytes {
 public:
  FileBytes() = default;
  static FileBytes kept(const std::string& bytes) {
    FileBytes out;
    out.kept_ = &bytes;
    return out;
  }
  static FileBytes read(std::string bytes) {
    FileBytes out;
    out.read_ = std::move(bytes);
    return out;
  }
  explicit operator bool() const { return kept_ || read_; }
  const std::string& operator*() const { return kept_ ? *kept_ : *read_; }
  const std::string* operator->() const { return &**this; }

 private:
  const std::string* kept_ = nullptr;
  std::optional<std::string> read_;
};

// Names one text scan for the file index: its kind, whether needles count only at a word
// start, and the needles in any order. A scan's result is a function of the bytes and this.
std::uint64_t scan_id(std::string_view kind, bool word_start, const std::vector<std::string>& needles);

// The prefilter's text scan under one vocabulary (prefilter.cpp): whether a file holds an anchor
// of its language (or, Python, reads a scope and the multiplicity together), one scan id per
// language.
class PrefilterScan {
 public:
  explicit PrefilterScan(const facts::Vocabulary& v);
  std::uint64_t id(bool is_cpp) const { return is_cpp ? cpp_id_ : python_id_; }
  bool found_in(bool is_cpp, std::string_view content) const;
  // Of the Python files it passes: whether one may hold a seed fact (python/text_scan.hpp),
  // else it can only give context and is deferred (CheckOptions::defer_context).
  std::uint64_t seed_id() const { return seed_id_; }
  bool may_hold_seed(std::string_view content) const;
  // python::may_hold_raw_kv, with one sampled pass per list of its needles instead of a memmem
  // per needle (it ran on every file the anchors miss: 5% of a cold run's instructions on
  // vllm-omni 0.30.0); the markers too short to sample ("KV", "Kv") are looked for apart.
  bool may_hold_raw_kv(std::string_view content) const;

 private:
  PrefilterScan(const std::vector<std::string>& python, const std::vector<std::string>& cpp,
                const std::vector<std::string>& seeds, const std::vector<std::string>& cache_classes);
  NeedleSearch raw_kv_allocations_;
  NeedleSearch raw_kv_markers_;
  std::vector<std::string> raw_kv_short_markers_;
  NeedleSearch python_search_;
  NeedleSearch cpp_search_;
  NeedleSearch seed_search_;
  std::vector<std::string> cache_classes_;
  std::uint64_t python_id_;
  std::uint64_t cpp_id_;
  std::uint64_t seed_id_;
};

// Names a file may define as classes (widen.cpp): a superset, which only costs a parse.
std::vector<std::string> scan_class_names(std::string_view content, bool is_cpp);

// Whether the files a cached C++ result depends on (FileDependency: included headers, paths
// where missing headers were looked for) are still as they were. Each path is looked at once
// a run; thread-safe.
class IncludedFilesCheck {
 public:
  bool holds(const std::vector<FileDependency>& dependencies);

 private:
  struct Seen {
    bool regular = false;  // a regular file is there
    bool read = false;     // and could be read (else it matches no hash)
    std::uint64_t hash = 0;
  };
  Seen now(const std::string& path);
  std::mutex mutex_;
  std::map<std::string, Seen> seen_;
};

class ProjectRun;

// One way the widening stage (widen.cpp) finds files the prefilter skipped or deferred that
// resolution needs: the question it answers, the text it looks for in the files not analysed,
// and what it then analyses. A new kind of fact that needs such files is one more step, with
// its test in tests/engine/widening_test.cpp; `--verbose` names the step that pulled in each file.
struct WideningStep {
  enum class When {
    First,      // once, before the rounds
    EachRound,  // in every round, until a round analyses nothing (kMaxWideningRounds)
    RulesAsk,   // between rule rounds, for what the rules asked (resolve_and_check.cpp)
  };
  std::string_view name;
  When when;
  std::string_view question;
  std::string_view looks_for;
  std::string_view analyses;
  bool (ProjectRun::*run)();  // analyses what it finds; true when it analysed some file
};

// The order findings and diagnostics are reported in (resolve_and_check.cpp).
bool finding_less(const Finding& a, const Finding& b);
bool diagnostic_less(const Diagnostic& a, const Diagnostic& b);
// Stable fingerprint for a finding (engine.hpp's fingerprint_of).
std::string fingerprint_string(const Finding& finding, std::string_view evidence_text);

// One project: the files one configuration governs, analysed and resolved together.
// Only its reported files give findings, diagnostics and statistics; its context
// files take part in resolution alone. Each stage's members are defined in the stage's file.
class ProjectRun {
 public:
  ProjectRun(DiscoveredProject project, const Workers& workers, const std::string& tool_identity,
             bool defer_context);

  const Config& config() const { return config_; }
  bool has_cpp() const { return has_cpp_; }
  void use_cpp(const CppFrontEndModule* module, const std::filesystem::path& compile_commands,
               IncludedFilesCheck& included);
  const std::set<std::string>& reported() const { return reported_; }
  // Reported files that could not be analysed at all (counted in stats().files_failed too).
  std::size_t analysis_failures() const { return analysis_failures_; }
  // Findings, diagnostics and statistics of this project so far.
  CheckResult& result() { return result_; }

  // read.cpp
  void read_all(std::atomic<std::size_t>& kept_bytes, const FileIndex* index);
  // engine.cpp: the stages after reading, in order.
  void check(ResultCache* cache);
  // widen.cpp: the registered widening steps, in the order they run.
  static const std::vector<WideningStep>& widening_steps();
  static const WideningStep& widening_step(std::string_view name);

  // record.cpp
  void add_content_hashes(std::map<std::string, std::uint64_t>& out) const;
  void add_dependencies(std::vector<FileDependency>& out) const;
  void add_paths(std::vector<std::string>& paths) const;
  void add_to_memo_key(XXH3_state_t* state) const;
  bool saw_changes() const;
  void record_in(FileIndex& index, std::chrono::system_clock::time_point run_start) const;

 private:
  bool is_reported(const FileState& f) const { return f.file.reported; }

  // body(file index), or body(file index, worker) for bodies that keep per-worker state.
  template <typename Body>
  void parallel_over(const std::vector<std::size_t>& indices, const Body& body) {
    workers_.for_each(indices.size(), [&](std::size_t k, unsigned worker) {
      if constexpr (std::is_invocable_v<const Body&, std::size_t, unsigned>)
        body(indices[k], worker);
      else
        body(indices[k]);
    });
  }

  std::vector<std::size_t> readable_matching(const std::function<bool(const FileState&)>& predicate) const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < files_.size(); ++i)
      if (files_[i].readable && predicate(files_[i])) out.push_back(i);
    return out;
  }

  // read.cpp
  FileBytes reread(FileState& f);
  bool unchanged_on_disk(FileState& f);
  bool keep_within_budget(FileState& f, std::string&& bytes);

  // prefilter.cpp: the prefilter and the remembered text scans the later stages use.
  void prefilter();
  std::optional<bool> recalled(FileState& f, std::uint64_t scan);
  bool scan_for(FileState& f, std::uint64_t scan, const std::function<bool(std::string_view)>& search,
                const std::function<bool(std::string_view)>& summary_may_match = {});
  std::vector<std::size_t> containing_any(const std::vector<std::size_t>& indices,
                                          const std::vector<std::string>& needles,
                                          NeedleSearch::Start start = NeedleSearch::Start::Anywhere);

  // analyse.cpp
  void analyse_seeds();
  void analyse(const std::vector<std::size_t>& indices, const facts::Vocabulary& vocabulary,
               bool cached_only = false);
  void analyse_cpp(const std::vector<std::size_t>& indices, const facts::Vocabulary& vocabulary);

  // widen.cpp
  void widen();
  // Runs `analyse_files` on behalf of `step`: the files it gives facts for the first time are
  // recorded as pulled in by the step (FileState::widened_by).
  bool pull_in(const WideningStep& step, const std::function<bool()>& analyse_files);
  bool analyse_capture_holders();
  bool analyse_kv_store_holders();
  bool analyse_bases();
  bool analyse_cache_subclass_users();
  std::vector<std::string> project_cache_subclasses();
  std::vector<std::size_t> demanded(const facts::Demand::Wants& wants);
  std::vector<std::size_t> lend_facts(std::vector<facts::FileFacts>& lent);
  void give_back(const std::vector<std::size_t>& owners, std::vector<facts::FileFacts>&& lent);

  // resolve_and_check.cpp
  void run_rules();
  void finish_analysis();

  Config config_;
  const Workers& workers_;
  std::string config_fingerprint_;
  std::string config_location_;
  const std::string& tool_identity_;
  const bool defer_context_;  // CheckOptions::defer_context
  ResultCache* cache_ = nullptr;
  std::atomic<std::size_t> bytes_parsed_{0};
  std::atomic<std::size_t> bytes_reread_{0};        // by reread(), every phase counted
  std::atomic<std::size_t>* kept_bytes_ = nullptr;  // the run's, shared by its projects (read_all)
  bool keep_reads_ = true;                          // false once the kept bytes are dropped for the rules
  std::vector<FileState> files_;
  bool has_cpp_ = false;
  const CppFrontEndModule* cpp_module_ = nullptr;
  IncludedFilesCheck* included_files_ = nullptr;
  std::size_t analysis_failures_ = 0;
  std::set<std::string> kv_store_searched_;  // classes analyse_kv_store_holders looked for
  std::filesystem::path compile_database_;
  std::uint64_t compile_database_hash_ = 0;
  std::set<std::string> reported_;  // display paths of the reported files
  facts::Vocabulary vocabulary_;
  // The prefilter under the vocabulary the run starts with (read_all and check's first phase,
  // before any widening round adds to vocabulary_).
  PrefilterScan initial_prefilter_;
  CheckResult result_;
  // run_rules: what the rules ask of deferred files, and the project they last ran on, kept
  // until the run is freed (CheckOptions::retain_run_state) rather than freed at once.
  facts::Demand demand_;  // outlives the project that records into it
  std::optional<facts::Project> project_;
};

// record.cpp: the whole-run memo's key, and what the memo keeps of a finished run.
std::string run_memo_key(const std::string& tool_identity,
                         const std::vector<std::unique_ptr<ProjectRun>>& projects,
                         const std::vector<Diagnostic>& diagnostics);
RunMemo run_memo_of(const CheckResult& result, const std::vector<std::unique_ptr<ProjectRun>>& projects);

}  // namespace kvlint::pipeline
