// The check pipeline: discover files, prefilter, analyse in parallel (with a
// per-file result cache), resolve the project, run the selected rules, apply
// suppressions, order deterministically.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/finding.hpp"
#include "tools/kvlint/config/config.hpp"

namespace kvlint {

struct CheckOptions {
  std::vector<std::filesystem::path> paths;  // files or directories
  // The configuration of every file; unused with `nearest_config`.
  Config config;
  // Each file gets the configuration of its nearest config file (kvlint.toml, or
  // pyproject.toml with [tool.kvlint]), as ruff does; files without one get the
  // defaults, rooted at their git work tree, else at the working directory when they
  // lie under it, else at the common parent of such paths.
  bool nearest_config = false;
  ConfigOverrides overrides;  // command-line settings, applied to every configuration
  // Resolve named files within their whole project (the config root's tree, as
  // `check ROOT` walks it) while reporting only the named files: checking a subset
  // then gives the subset of `check ROOT`'s findings.
  bool load_project_context = true;
  bool use_cache = true;
  // Of the files the prefilter passes, analyse up front only those that may hold a fact the rules
  // start from (a cache construction, a capture, a declaration, ...: python/text_scan.hpp), and
  // the others, whose facts can only give context, when the rules' questions need them. The
  // findings are those of analysing every one up front (false: what `--no-defer` does).
  bool defer_context = true;
  std::filesystem::path cache_dir;  // empty: <config root>/.kvlint_cache per project
  unsigned jobs = 0;                // 0: all cores
  bool force_exclude = false;       // apply exclude to paths named explicitly too
  // Which findings to report (all when unset): `--diff` and `--baseline`. The
  // whole project is still analysed and cached; the findings it rejects are
  // neither reported nor counted for the exit status.
  std::function<bool(const Finding&)> report_filter;
  // C++ files: the compile database (`-p DIR`: a directory holding compile_commands.json, or
  // the file); empty: each project's `compile-commands` setting, else the nearest one upward.
  std::filesystem::path compile_commands;
  // When the run began, for the file index's racy window (file_index.hpp: stamps within
  // kRacyWindow of it are not trusted next time); unset: now. Tests set a later time instead
  // of waiting for files they just wrote to settle.
  std::optional<std::chrono::system_clock::time_point> started_at;
  // Hand what the run built (every project's facts, the caches as loaded) to
  // CheckResult::run_state instead of freeing it: for a caller that exits right after the report
  // without freeing it (the CLI). Freeing the facts was a sixth of a pre-commit-sized run.
  bool retain_run_state = false;
};

struct CheckStats {
  std::size_t files_found = 0;    // reported files, after discovery and exclusion
  std::size_t files_context = 0;  // project files loaded for resolution only (not reported)
  // Parsed, cached and skipped count reported files only.
  std::size_t files_parsed = 0;   // through the front end this run
  std::size_t files_cached = 0;   // facts taken from the cache
  std::size_t files_skipped = 0;  // prefilter: cannot match
  // Name the vocabulary but can only give context (no seed; see CheckOptions::defer_context),
  // and no rule needed them: not analysed.
  std::size_t files_deferred = 0;
  // Times the rules ran: once, and once more after each round of analysing deferred files a
  // rule's question needed (0 when the run memo answered).
  std::size_t rule_rounds = 0;
  // Bytes of the files considered: read, or taken as unchanged from the file index (their size).
  std::size_t bytes_read = 0;
  // Files, reported or context, that the file index (file_index.hpp) knew unchanged since an
  // earlier run: not read unless a phase needed their bytes.
  std::size_t files_unread = 0;
  // Source bytes handed to the parser, every parse counted (a file the vocabulary widening
  // analyses again counts twice; cached and prefiltered files not at all).
  std::size_t bytes_parsed = 0;
  // Bytes read again by a later phase, every read counted: a file past the run's kept-bytes
  // budget by each phase that needs its bytes (a parse, a widening round's text search, a
  // finding's evidence lines); a file the file index answered for, by the first.
  std::size_t bytes_reread = 0;
  // Named or found but not analysable: missing, unreadable, binary, not UTF-8, too large.
  std::size_t files_failed = 0;
};

// One file handed to a front end this run, with how many times (a widening round can parse a
// file again): what bench/run's parser floor re-parses.
struct ParsedFile {
  std::filesystem::path path;  // absolute
  bool cpp = false;            // the C++ front end; else tree-sitter-python
  std::size_t bytes = 0;
  unsigned parses = 0;
};

// A file the widening stage analysed although the prefilter had skipped or deferred it, and the
// widening step that did (engine/project_run.hpp, WideningStep): why it was parsed.
struct WidenedFile {
  std::string path;  // display path
  std::string step;  // WideningStep::name: "capture-holders", "bases", "demand", ...
};

struct CheckResult {
  std::vector<Finding> findings;        // sorted: path, line, column, code
  std::vector<Diagnostic> diagnostics;  // sorted: path, line
  std::size_t suppressed = 0;
  CheckStats stats;
  std::size_t findings_failing = 0;  // findings at or above their configuration's fail-on
  std::vector<std::string> notes;    // for stderr, never fatal: "ignoring unreadable cache ..."
  std::vector<std::string> details;  // for stderr with --verbose: "not following 1 symbolic link ..."
  // XXH3-64 of the content each reported file was analysed from (display path -> hash),
  // so `--fix` can skip a file that changed since.
  std::map<std::string, std::uint64_t> content_hashes;
  std::vector<ParsedFile> parsed_files;  // every file parsed this run (not cached, not skipped)
  std::vector<WidenedFile> widened;      // --verbose prints them as details too
  // What the run built, when CheckOptions::retain_run_state asked for it; freed with the result.
  std::shared_ptr<void> run_state;
};

// The bytes of the files a run first reads are kept for its later phases up to this many in
// all (a pre-commit-sized run on vllm-omni 0.30.0 reads 24 MB): within it each file is read
// once, not once per phase (prefilter, analysis, each widening scan: six times, 50,000 system
// calls for 1,600 files). Past it the first read answers the prefilter and the base-class
// search, and any later phase that needs the bytes reads them again (CheckStats::bytes_reread),
// so memory stays bounded by this plus the files in flight, whatever the size of the tree.
inline constexpr std::size_t kKeptBytesBudget = std::size_t{32} << 20;

// The tool version (also part of every cache key); CMake sets it from project(VERSION).
inline constexpr std::string_view kKvlintVersion = KVLINT_VERSION;

CheckResult run_check(const CheckOptions& options);

// Stable fingerprint for a finding (see Finding::fingerprint).
std::string fingerprint_of(const Finding& finding, std::string_view evidence_text);

}  // namespace kvlint
