// Finding the files to check: explicit files, *.py under directories, with
// .gitignore files (nested, negation, anchoring), exclude globs, no symlink
// leaving the walked tree, each real file once. Files are grouped by the
// configuration that governs them (their nearest config file, as ruff does).
// Iterative, deterministic (sorted) output.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "rules/finding.hpp"
#include "tools/kvlint/config/config.hpp"
#include "tools/kvlint/engine/file_index.hpp"

namespace kvlint {

// Paths are kept as strings: a std::filesystem::path holds a heap copy of each of its
// components besides its text (about 1 KB for an absolute path 13 directories deep, 7x the
// string), and a run keeps one of these per file of the tree.
struct DiscoveredFile {
  std::string display;         // as the user would name it (user path joined with the relative walk path,
                               // generic form): the name in findings
  std::string absolute;        // absolute, lexically normal
  bool explicit_file = false;  // named on the command line
  bool reported = true;        // named or found under a named directory; false: project context only
  FileStamp stamp;             // its stat as discovery saw it (links followed): before any read of it
};

// The files one configuration governs. Resolution is per project: a project's
// files see each other (inheritance, declarations), never another project's.
struct DiscoveredProject {
  Config config;                      // overrides applied; config.root is the project root
  std::vector<DiscoveredFile> files;  // sorted by display path; reported and context files
};

struct DiscoveryOptions {
  bool force_exclude = false;
  std::filesystem::path cache_dir;  // absolute; empty: each project's <root>/.kvlint_cache. Never walked
  // Each file gets the configuration of its nearest kvlint.toml / pyproject.toml
  // ([tool.kvlint]); otherwise the `config` argument governs every file.
  bool nearest_config = false;
  ConfigOverrides overrides;  // applied to every configuration
  // Also load each project's whole tree (as `check ROOT` would walk it), unreported,
  // so that checking a few files resolves them as checking the project would.
  bool load_context = false;
  // A project no config file roots (its root is a git work tree, the working directory or the
  // common parent) loads as context only the Python project of the named files (the nearest
  // pyproject.toml, setup.py or setup.cfg below the root), and no context at all when that
  // holds more source files than this: an unrelated checkout (a home directory, a pyenv
  // tree) is never read whole because a file in it was named.
  std::size_t max_unconfigured_context = 5000;
  // The walk itself is bounded too: an unconfigured context walk that reads more directory
  // entries than this (files of any kind and directories: a data folder, a node_modules, a
  // home directory) stops there and loads no context, however few source files it met.
  std::size_t max_unconfigured_entries = 100000;
};

struct DiscoveryResult {
  std::vector<DiscoveredProject> projects;  // ordered by root
  std::vector<Diagnostic> diagnostics;      // unreadable directories, dangling links, missing paths
  std::vector<std::string> notes;           // for stderr: context left out and why
  std::size_t missing = 0;                  // explicit paths that do not exist or are unreadable
  std::size_t context_entries = 0;          // directory entries the context walks read (their work)
  // Symbolic links not followed because they resolve outside the walked tree ("shown -> target").
  std::vector<std::string> links_leaving_tree;

  // Every reported file of every project, sorted by display path.
  std::vector<DiscoveredFile> reported_files() const;
};

// Throws ConfigError for an invalid configuration file met on the way.
DiscoveryResult discover_files(const std::vector<std::filesystem::path>& paths, const Config& config,
                               const DiscoveryOptions& options);

}  // namespace kvlint
