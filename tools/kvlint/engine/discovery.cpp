#include "tools/kvlint/engine/discovery.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "tools/kvlint/config/glob.hpp"

namespace kvlint {
namespace fs = std::filesystem;

namespace {

// Owns a DIR*.
class DirectoryHandle {
 public:
  explicit DirectoryHandle(DIR* dir) : dir_(dir) {}
  DirectoryHandle(const DirectoryHandle&) = delete;
  DirectoryHandle& operator=(const DirectoryHandle&) = delete;
  ~DirectoryHandle() {
    if (dir_) ::closedir(dir_);
  }
  DIR* get() const { return dir_; }

 private:
  DIR* dir_;
};

// The patterns of one .gitignore file, chained to those of the directories above.
struct IgnoreLevel {
  std::string base;  // absolute directory holding the .gitignore
  std::vector<GlobPattern> patterns;
  std::shared_ptr<const IgnoreLevel> parent;
};

std::vector<GlobPattern> read_gitignore(const fs::path& file) {
  std::vector<GlobPattern> patterns;
  std::ifstream in(file, std::ios::binary);
  std::string line;
  while (std::getline(in, line)) {
    GlobPattern p;
    if (GlobPattern::parse(line, p)) patterns.push_back(std::move(p));
  }
  return patterns;
}

std::shared_ptr<const IgnoreLevel> push_level(const fs::path& dir,
                                              std::shared_ptr<const IgnoreLevel> parent) {
  std::error_code ec;
  const fs::path file = dir / ".gitignore";
  if (!fs::is_regular_file(file, ec)) return parent;
  auto level = std::make_shared<IgnoreLevel>();
  level->base = dir.native();
  level->patterns = read_gitignore(file);
  level->parent = std::move(parent);
  return level;
}

// The walk keeps its paths as strings: libstdc++ splits every std::filesystem::path it builds
// into a heap list of components, and an installed tree's walk built three per entry.

// `path` below the directory `base` (both absolute and normal), as the rest of the string;
// nullopt when it is not strictly below (then lexically_relative decides).
std::optional<std::string_view> path_below(std::string_view path, std::string_view base) {
  if (base.empty() || path.size() <= base.size() || path.compare(0, base.size(), base) != 0)
    return std::nullopt;
  if (base.back() == '/') return path.substr(base.size());
  if (path[base.size()] != '/') return std::nullopt;
  return path.substr(base.size() + 1);
}

// `name` in the directory `dir` ('/'-separated, normal): what (dir / name).lexically_normal() is.
std::string join_path(std::string_view dir, std::string_view name) {
  if (dir.empty() || dir == ".") return std::string(name);
  std::string out;
  out.reserve(dir.size() + 1 + name.size());
  out += dir;
  if (out.back() != '/') out += '/';
  out += name;
  return out;
}

// The directory holding `path` (absolute, normal): fs::path::parent_path's answer.
std::string parent_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {};
  return slash == 0 ? std::string("/") : path.substr(0, slash);
}

// Git semantics: the deepest .gitignore with a matching pattern decides; within a file the last match wins.
bool gitignored(const IgnoreLevel* level, std::string_view absolute, bool is_dir) {
  for (; level; level = level->parent.get()) {
    if (level->patterns.empty()) continue;
    std::string computed;
    std::optional<std::string_view> relative = path_below(absolute, level->base);
    if (!relative) {
      computed = fs::path(absolute).lexically_relative(level->base).generic_string();
      relative = computed;
    }
    const int verdict = match_patterns(level->patterns, *relative, is_dir);
    if (verdict != 0) return verdict > 0;
  }
  return false;
}

// The directory at which .gitignore files start to apply for a walk rooted at `start`:
// the nearest ancestor holding .git, else the config root when it is an ancestor, else `start`.
std::vector<fs::path> ignore_ancestors(const fs::path& start, const fs::path& config_root) {
  std::error_code ec;
  std::vector<fs::path> chain;  // from `start` upward
  fs::path dir = start;
  while (true) {
    chain.push_back(dir);
    if (fs::exists(dir / ".git", ec)) return {chain.rbegin(), chain.rend()};
    if (!dir.has_relative_path()) break;
    dir = dir.parent_path();
  }
  std::vector<fs::path> to_root;
  for (const auto& d : chain) {
    to_root.push_back(d);
    if (d == config_root) return {to_root.rbegin(), to_root.rend()};
  }
  return {start};
}

using FileId = std::pair<dev_t, ino_t>;

// How the user would name an absolute path: relative when under the working directory, else absolute.
fs::path shown_name(const fs::path& absolute) {
  std::error_code ec;
  const fs::path rel = absolute.lexically_relative(fs::current_path(ec));
  if (ec || rel.empty() || *rel.begin() == "..") return absolute;
  return rel.lexically_normal();
}

// Whether `path` is `root` or lies under it (both absolute and normal).
bool is_within(const fs::path& path, const fs::path& root) {
  const fs::path rel = path.lexically_relative(root);
  return !rel.empty() && *rel.begin() != "..";
}

// The deepest directory holding every one of `dirs` (absolute, normal).
fs::path common_parent(const std::vector<fs::path>& dirs) {
  fs::path common = dirs.front();
  for (const auto& d : dirs)
    while (!is_within(d, common) && common.has_relative_path()) common = common.parent_path();
  return common;
}

constexpr const char* kProjectMarkers[] = {"pyproject.toml", "setup.py", "setup.cfg"};

// The top of the Python project holding `dir`: the nearest directory from `dir` up to `root`
// with a pyproject.toml, setup.py or setup.cfg (what ruff, pip and build tools take as a
// project's top), else `root`. `known` remembers the answer for every directory passed on the
// way up, so each is probed once however many files lie below it (an installed tree's 11,000
// files were 90,000 failed stats).
std::string python_project_top(const std::string& dir, const std::string& root,
                               std::unordered_map<std::string, std::string>& known) {
  std::vector<std::string> passed;
  std::string top = root;
  std::error_code ec;
  for (std::string d = dir; path_below(d, root); d = parent_of(d)) {
    if (auto it = known.find(d); it != known.end()) {
      top = it->second;
      break;
    }
    passed.push_back(d);
    if (std::any_of(std::begin(kProjectMarkers), std::end(kProjectMarkers),
                    [&](const char* marker) { return fs::is_regular_file(join_path(d, marker), ec); })) {
      top = d;
      break;
    }
  }
  for (auto& d : passed) known.emplace(std::move(d), top);
  return top;
}

struct ProjectState {
  Config config;
  FileId root_id{};
  fs::path cache_dir;
  std::vector<GlobPattern> excludes;
  bool walked_whole = false;  // its root was walked for reported files: no context left to load
  bool has_reported = false;
  // Directories of its reported C++ files: the only places C++ files are loaded as context.
  std::set<std::string> cpp_context_dirs;

  bool excluded(std::string_view absolute, bool is_dir) const {
    if (excludes.empty()) return false;
    if (const auto below = path_below(absolute, config.root.native()))
      return matches_path_or_ancestor(excludes, *below, is_dir);
    const fs::path rel = fs::path(absolute).lexically_relative(config.root);
    if (rel.empty() || *rel.begin() == "..") return false;
    return matches_path_or_ancestor(excludes, rel.generic_string(), is_dir);
  }
};

// One spelling of a file; the best-ranked spelling of each real file is kept.
struct Candidate {
  DiscoveredFile file;
  std::size_t project = 0;
  // Reported before context, then the earliest named path, then a spelling without
  // a symbolic link, then walk order.
  std::tuple<int, std::size_t, int, std::size_t> rank;
};

constexpr std::size_t kContextWalk = std::numeric_limits<std::size_t>::max();

class Walker {
 public:
  explicit Walker(const DiscoveryOptions& options) : options_(options) {}

  // Registers (once per root) the project that `config` governs.
  std::size_t project_of(Config config) {
    std::error_code ec;
    if (config.root.empty()) config.root = fs::current_path(ec);
    config.root = fs::absolute(config.root, ec).lexically_normal();
    struct stat st {};
    const bool exists = ::stat(config.root.c_str(), &st) == 0;
    for (std::size_t i = 0; i < projects_.size(); ++i)
      if (exists ? projects_[i].root_id == FileId{st.st_dev, st.st_ino}
                 : projects_[i].config.root == config.root)
        return i;
    options_.overrides.apply(config);
    ProjectState project;
    project.root_id = {st.st_dev, st.st_ino};
    project.cache_dir = options_.cache_dir.empty() ? config.root / ".kvlint_cache" : options_.cache_dir;
    for (const auto* list : {&config.exclude, &config.extend_exclude})
      for (const auto& g : *list) {
        GlobPattern p;
        if (GlobPattern::parse_config(g, p)) project.excludes.push_back(std::move(p));
      }
    project.config = std::move(config);
    projects_.push_back(std::move(project));
    return projects_.size() - 1;
  }

  void add_named(const fs::path& named, std::size_t index, Config config) {
    const fs::path shown = named.lexically_normal().empty() ? fs::path(".") : named.lexically_normal();
    std::error_code ec;
    const fs::path absolute = fs::absolute(named, ec).lexically_normal();
    struct stat st {};
    if (::stat(absolute.c_str(), &st) != 0) {
      struct stat lst {};
      const bool dangling = ::lstat(absolute.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode);
      diagnose(shown, "read-error",
               dangling ? fmt::format("dangling symbolic link: {}", std::strerror(errno))
                        : fmt::format("cannot check: {}", std::strerror(errno)));
      ++result_.missing;
      return;
    }
    const std::size_t project = project_of(std::move(config));
    if (S_ISDIR(st.st_mode)) {
      if (options_.force_exclude && projects_[project].excluded(absolute.native(), true)) return;
      walk(shown, absolute, project, index);
    } else {
      if (options_.force_exclude && projects_[project].excluded(absolute.native(), false)) return;
      add_file(shown.generic_string(), absolute.string(), st, project, index, true, false);
    }
  }

  // Loads the context of every project with reported files, unless its root was walked for
  // them already: a configured project's whole tree; an unconfigured one's Python project,
  // when it is not too big to be one. Directories walked for reported files are not walked
  // again. C++ files are context only beside the named C++ files: parsing every C++ file of
  // a repository with Clang to check one takes minutes.
  void load_context() {
    const std::size_t count = projects_.size();
    for (std::size_t i = 0; i < count; ++i) {
      ProjectState& project = projects_[i];
      if (!project.has_reported || project.walked_whole) continue;
      for (const auto& c : candidates_)
        if (c.project == i && c.file.reported && project.config.is_cpp_name(c.file.display))
          project.cpp_context_dirs.insert(parent_of(c.file.absolute));
      const bool configured = project.config.source.has_value();
      const fs::path start = configured ? project.config.root : unconfigured_context_top(i);
      const std::size_t before = candidates_.size();
      constexpr std::size_t kUnbounded = std::numeric_limits<std::size_t>::max();
      context_budget_ = configured ? kUnbounded : options_.max_unconfigured_context;
      context_entry_budget_ = configured ? kUnbounded : options_.max_unconfigured_entries;
      context_budget_exceeded_ = false;
      context_files_ = 0;
      context_entries_ = 0;
      walk(shown_name(start), start, i, kContextWalk);
      result_.context_entries += context_entries_;
      if (context_budget_exceeded_) {
        candidates_.resize(before);
        ids_.resize(before);
        result_.notes.push_back(fmt::format(
            "not loading {} as project context: it holds more than {} source files or {} directory entries "
            "besides those named and no kvlint.toml or [tool.kvlint] says it is one project; the named files "
            "resolve among themselves (a config file at the project's top loads its whole tree)",
            shown_name(start).string(), options_.max_unconfigured_context,
            options_.max_unconfigured_entries));
      }
    }
  }

  DiscoveryResult finish() {
    std::map<FileId, std::size_t> best;
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
      auto [it, inserted] = best.try_emplace(ids_[i], i);
      if (!inserted && candidates_[i].rank < candidates_[it->second].rank) it->second = i;
    }
    std::vector<DiscoveredProject> projects(projects_.size());
    for (std::size_t i = 0; i < projects_.size(); ++i) projects[i].config = projects_[i].config;
    for (const auto& [id, i] : best) projects[candidates_[i].project].files.push_back(candidates_[i].file);
    for (auto& project : projects) {
      auto& files = project.files;
      std::sort(files.begin(), files.end(),
                [](const DiscoveredFile& a, const DiscoveredFile& b) { return a.display < b.display; });
      if (!files.empty()) result_.projects.push_back(std::move(project));
    }
    std::sort(
        result_.projects.begin(), result_.projects.end(),
        [](const DiscoveredProject& a, const DiscoveredProject& b) { return a.config.root < b.config.root; });
    result_.links_leaving_tree.assign(links_leaving_tree_.begin(), links_leaving_tree_.end());
    return std::move(result_);
  }

 private:
  // Where an unconfigured project's context is walked from: the Python project of its named
  // files (the common parent of their tops), the root when one of them has none below it.
  fs::path unconfigured_context_top(std::size_t project) {
    const fs::path& root = projects_[project].config.root;
    std::unordered_map<std::string, std::string> top_of_dir;
    std::set<std::string> tops;
    for (const auto& c : candidates_) {
      if (c.project != project || !c.file.reported) continue;
      tops.insert(python_project_top(parent_of(c.file.absolute), root.native(), top_of_dir));
    }
    return tops.empty() ? root : common_parent({tops.begin(), tops.end()});
  }

  void diagnose(const fs::path& shown, std::string kind, std::string message) {
    Diagnostic d;
    d.path = shown.generic_string();
    d.kind = std::move(kind);
    d.message = std::move(message);
    result_.diagnostics.push_back(std::move(d));
  }

  // `st`: the file's stat, symbolic links followed.
  void add_file(std::string shown, std::string absolute, const struct stat& st, std::size_t project,
                std::size_t named_index, bool is_explicit, bool via_link) {
    const bool reported = named_index != kContextWalk;
    const FileId id{st.st_dev, st.st_ino};
    Candidate c;
    c.file.stamp = stamp_from(st);
    c.file.display = std::move(shown);
    c.file.absolute = std::move(absolute);
    c.file.explicit_file = is_explicit;
    c.file.reported = reported;
    c.project = project;
    c.rank = {reported ? 0 : 1, named_index, via_link ? 1 : 0, candidates_.size()};
    if (reported) {
      projects_[project].has_reported = true;
      reported_files_.insert(id);
    }
    candidates_.push_back(std::move(c));
    ids_.push_back(id);
  }

  // Walks `absolute_root` for *.py files of `project` (and, with nearest_config, of
  // the projects of config files below it). A context walk (named_index ==
  // kContextWalk) stays within its project and reports nothing.
  void walk(const fs::path& shown_root, const fs::path& absolute_root, std::size_t root_project,
            std::size_t named_index) {
    const bool reported = named_index != kContextWalk;
    struct Pending {
      std::string shown;
      std::string absolute;
      std::shared_ptr<const IgnoreLevel> ignores;
      std::size_t project;
      bool via_link;
      std::optional<struct stat> st;  // known from the parent's entry (links followed)
      bool below_root;                // a subdirectory: may hold a config file of its own
    };
    std::error_code ec;
    // Symbolic links are followed only to where this walk would reach anyway.
    const fs::path real_root = fs::canonical(absolute_root, ec);
    std::shared_ptr<const IgnoreLevel> ignores;
    const auto chain = ignore_ancestors(absolute_root, projects_[root_project].config.root);
    for (std::size_t i = 0; i + 1 < chain.size(); ++i) ignores = push_level(chain[i], ignores);
    std::vector<Pending> stack;
    // Directories reached through a link wait until the rest is walked, so the spelling
    // without a link is the one that finds a file first.
    std::deque<Pending> through_links;
    std::set<FileId> visited_dirs;
    stack.push_back({shown_root.generic_string(), absolute_root.string(), ignores, root_project, false,
                     std::nullopt, false});
    while (!stack.empty() || !through_links.empty()) {
      if (stack.empty()) {
        stack.push_back(std::move(through_links.front()));
        through_links.pop_front();
      }
      Pending dir = std::move(stack.back());
      stack.pop_back();
      if (!dir.st) {
        dir.st.emplace();
        if (::stat(dir.absolute.c_str(), &*dir.st) != 0) {
          if (reported)
            diagnose(dir.shown, "read-error", fmt::format("cannot read directory: {}", std::strerror(errno)));
          continue;
        }
      }
      const FileId dir_id{dir.st->st_dev, dir.st->st_ino};
      // A directory reached twice (a symlink loop or a second link): walk it once.
      if (!visited_dirs.insert(dir_id).second) continue;
      // Context is what lies besides the directories walked for reported files.
      if (reported)
        reported_dirs_.insert(dir_id);
      else if (reported_dirs_.count(dir_id))
        continue;
      DirectoryHandle handle(::opendir(dir.absolute.c_str()));
      if (!handle.get()) {
        if (reported)
          diagnose(dir.shown, "read-error", fmt::format("cannot read directory: {}", std::strerror(errno)));
        continue;
      }
      std::vector<std::pair<std::string, unsigned char>> entries;  // name, d_type
      while (const dirent* entry = ::readdir(handle.get())) {
        const std::string_view name = entry->d_name;
        if (name == "." || name == "..") continue;
        entries.emplace_back(name, entry->d_type);
      }
      std::sort(entries.begin(), entries.end());
      // What the entries hold decides whether a file is looked for: a stat of each possible
      // config file and .gitignore in every directory was most of an installed tree's walk.
      auto holds = [&](std::string_view name) {
        const auto it = std::lower_bound(
            entries.begin(), entries.end(), name,
            [](const std::pair<std::string, unsigned char>& e, std::string_view n) { return e.first < n; });
        return it != entries.end() && it->first == name;
      };
      if (dir.below_root && options_.nearest_config && (holds("kvlint.toml") || holds("pyproject.toml"))) {
        if (auto config = load_config_in(dir.absolute)) {
          // Another project's tree: walked for reported files, never as this project's context.
          if (!reported) continue;
          dir.project = project_of(std::move(*config));
        }
      }
      // A bounded context walk stops as soon as it has read too much.
      if (!reported)
        for (std::size_t k = 0; k < entries.size(); ++k)
          if (++context_entries_ > context_entry_budget_) {
            context_budget_exceeded_ = true;
            return;
          }
      ProjectState& project = projects_[dir.project];
      if (reported && project.root_id == dir_id) project.walked_whole = true;
      const bool use_gitignore = project.config.respect_gitignore;
      if (holds(".gitignore")) dir.ignores = push_level(dir.absolute, dir.ignores);
      const int dir_fd = ::dirfd(handle.get());
      std::vector<Pending> subdirs;
      for (const auto& [name, type] : entries) {
        // What readdir says is a regular file and no source needs no stat: most entries of
        // an installed tree (.so, .pyc, metadata) were one system call each.
        if (type == DT_REG && !project.config.is_source_name(name)) continue;
        std::string absolute = join_path(dir.absolute, name);
        std::string shown = join_path(dir.shown, name);
        struct stat lst {};
        if (::fstatat(dir_fd, name.c_str(), &lst, AT_SYMLINK_NOFOLLOW) != 0) continue;  // vanished meanwhile
        struct stat target = lst;
        bool via_link = dir.via_link;
        const bool is_link = S_ISLNK(lst.st_mode);
        if (is_link) {
          if (::fstatat(dir_fd, name.c_str(), &target, 0) != 0) {
            if (reported && !project.excluded(absolute, false) &&
                !(use_gitignore && gitignored(dir.ignores.get(), absolute, false)))
              diagnose(shown, "read-error", fmt::format("dangling symbolic link: {}", std::strerror(errno)));
            continue;
          }
          const fs::path real = fs::canonical(absolute, ec);
          if (ec || !is_within(real, real_root)) {
            if (reported && (S_ISDIR(target.st_mode) || project.config.is_source_name(name)))
              links_leaving_tree_.insert(
                  fmt::format("{} -> {}", shown, fs::read_symlink(absolute, ec).generic_string()));
            continue;
          }
          via_link = true;
        }
        const bool is_dir = S_ISDIR(target.st_mode);
        if (is_dir) {
          if (name == ".git" || name == "__pycache__") continue;
          if (absolute == project.cache_dir.native() || absolute == options_.cache_dir.native()) continue;
        } else if (!S_ISREG(target.st_mode) || !project.config.is_source_name(name)) {
          continue;
        }
        if (project.excluded(absolute, is_dir)) continue;
        if (use_gitignore && gitignored(dir.ignores.get(), absolute, is_dir)) continue;
        if (!is_dir) {
          if (!reported && project.config.is_cpp_name(name) && !project.cpp_context_dirs.count(dir.absolute))
            continue;
          if (!reported && reported_files_.count({target.st_dev, target.st_ino})) continue;
          if (!reported && ++context_files_ > context_budget_) {
            context_budget_exceeded_ = true;
            return;
          }
          add_file(std::move(shown), std::move(absolute), target, dir.project, named_index, false, via_link);
          continue;
        }
        Pending sub{std::move(shown), std::move(absolute), dir.ignores, dir.project, via_link, target, true};
        if (is_link)
          through_links.push_back(std::move(sub));
        else
          subdirs.push_back(std::move(sub));
      }
      // Reverse so the stack pops them in name order.
      for (auto it = subdirs.rbegin(); it != subdirs.rend(); ++it) stack.push_back(std::move(*it));
    }
  }

  const DiscoveryOptions& options_;
  std::deque<ProjectState> projects_;  // stable references: `project_of` adds while walking
  std::vector<Candidate> candidates_;
  std::vector<FileId> ids_;  // the real file of each candidate
  std::set<std::string> links_leaving_tree_;
  std::set<FileId> reported_dirs_;   // directories walked for reported files
  std::set<FileId> reported_files_;  // files found for reporting: never context as well
  // Context files the current context walk may still add; it stops when they run out.
  std::size_t context_budget_ = std::numeric_limits<std::size_t>::max();
  std::size_t context_files_ = 0;
  // Directory entries it may still read (the walk's own work, whatever the entries are).
  std::size_t context_entry_budget_ = std::numeric_limits<std::size_t>::max();
  std::size_t context_entries_ = 0;
  bool context_budget_exceeded_ = false;
  DiscoveryResult result_;
};

}  // namespace

std::vector<DiscoveredFile> DiscoveryResult::reported_files() const {
  std::vector<DiscoveredFile> out;
  for (const auto& project : projects)
    for (const auto& f : project.files)
      if (f.reported) out.push_back(f);
  std::sort(out.begin(), out.end(),
            [](const DiscoveredFile& a, const DiscoveredFile& b) { return a.display < b.display; });
  return out;
}

DiscoveryResult discover_files(const std::vector<fs::path>& paths, const Config& config,
                               const DiscoveryOptions& options) {
  Walker walker(options);
  // Each named path's configuration. Without a config file the project is the git
  // work tree, else the working directory, else the common parent of all such paths.
  std::vector<Config> configs;
  std::vector<std::size_t> without_root;
  std::vector<fs::path> their_dirs;
  for (const auto& named : paths) {
    if (!options.nearest_config) {
      configs.push_back(config);
      continue;
    }
    configs.push_back(discover_config(named));
    std::error_code ec;
    if (!configs.back().source && !git_work_tree_top(configs.back().root) && fs::exists(named, ec)) {
      without_root.push_back(configs.size() - 1);
      their_dirs.push_back(configs.back().root);
    }
  }
  if (!their_dirs.empty()) {
    // The working directory when they lie under it, as a project would be checked from
    // its top: fingerprints stay the same whichever subset is named.
    std::error_code ec;
    const fs::path cwd = fs::current_path(ec).lexically_normal();
    fs::path common = common_parent(their_dirs);
    if (!ec && is_within(common, cwd)) common = cwd;
    for (std::size_t i : without_root) configs[i].root = common;
  }
  for (std::size_t i = 0; i < paths.size(); ++i) walker.add_named(paths[i], i, std::move(configs[i]));
  if (options.load_context) walker.load_context();
  return walker.finish();
}

}  // namespace kvlint
