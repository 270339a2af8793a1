#include "tools/kvlint/engine/discovery.hpp"

#include <dirent.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

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
  fs::path base;  // absolute directory holding the .gitignore
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
  level->base = dir;
  level->patterns = read_gitignore(file);
  level->parent = std::move(parent);
  return level;
}

// Git semantics: the deepest .gitignore with a matching pattern decides; within a file the last match wins.
bool gitignored(const IgnoreLevel* level, const fs::path& absolute, bool is_dir) {
  for (; level; level = level->parent.get()) {
    const std::string relative = absolute.lexically_relative(level->base).generic_string();
    const int verdict = match_patterns(level->patterns, relative, is_dir);
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

struct Walker {
  const Config& config;
  const DiscoveryOptions& options;
  std::vector<GlobPattern> excludes;
  DiscoveryResult result;
  std::set<std::pair<dev_t, ino_t>> visited_dirs;

  std::string relative_to_root(const fs::path& absolute) const {
    fs::path rel = absolute.lexically_relative(config.root);
    if (rel.empty() || *rel.begin() == "..") return {};
    return rel.generic_string();
  }
  bool excluded(const fs::path& absolute, bool is_dir) const {
    if (excludes.empty()) return false;
    const std::string rel = relative_to_root(absolute);
    if (rel.empty()) return false;
    return matches_path_or_ancestor(excludes, rel, is_dir);
  }
  void diagnose(const fs::path& shown, std::string kind, std::string message) {
    Diagnostic d;
    d.path = shown.generic_string();
    d.kind = std::move(kind);
    d.message = std::move(message);
    result.diagnostics.push_back(std::move(d));
  }
  void add_file(const fs::path& shown, const fs::path& absolute, bool is_explicit) {
    DiscoveredFile f;
    f.path = shown;
    f.display = shown.generic_string();
    f.absolute = absolute;
    f.explicit_file = is_explicit;
    result.files.push_back(std::move(f));
  }

  void walk(const fs::path& shown_root, const fs::path& absolute_root) {
    struct Pending {
      fs::path shown;
      fs::path absolute;
      std::shared_ptr<const IgnoreLevel> ignores;
    };
    std::shared_ptr<const IgnoreLevel> ignores;
    if (config.respect_gitignore) {
      const auto chain = ignore_ancestors(absolute_root, config.root);
      for (std::size_t i = 0; i + 1 < chain.size(); ++i) ignores = push_level(chain[i], ignores);
    }
    std::vector<Pending> stack;
    stack.push_back({shown_root, absolute_root, ignores});
    while (!stack.empty()) {
      Pending dir = std::move(stack.back());
      stack.pop_back();
      struct stat st {};
      if (::stat(dir.absolute.c_str(), &st) != 0) {
        diagnose(dir.shown, "read-error", fmt::format("cannot read directory: {}", std::strerror(errno)));
        continue;
      }
      // A directory reached twice (a symlink loop or a second link): walk it once.
      if (!visited_dirs.insert({st.st_dev, st.st_ino}).second) continue;
      if (config.respect_gitignore) dir.ignores = push_level(dir.absolute, dir.ignores);
      DirectoryHandle handle(::opendir(dir.absolute.c_str()));
      if (!handle.get()) {
        diagnose(dir.shown, "read-error", fmt::format("cannot read directory: {}", std::strerror(errno)));
        continue;
      }
      std::vector<std::string> names;
      while (const dirent* entry = ::readdir(handle.get())) {
        const std::string_view name = entry->d_name;
        if (name == "." || name == "..") continue;
        names.emplace_back(name);
      }
      std::sort(names.begin(), names.end());
      std::vector<Pending> subdirs;
      for (const auto& name : names) {
        const fs::path absolute = dir.absolute / name;
        const fs::path shown = (dir.shown / name).lexically_normal();
        struct stat lst {};
        if (::lstat(absolute.c_str(), &lst) != 0) continue;  // vanished meanwhile
        struct stat target {};
        bool is_dir = S_ISDIR(lst.st_mode);
        bool is_file = S_ISREG(lst.st_mode);
        if (S_ISLNK(lst.st_mode)) {
          if (::stat(absolute.c_str(), &target) != 0) {
            if (!excluded(absolute, false) &&
                !(config.respect_gitignore && gitignored(dir.ignores.get(), absolute, false)))
              diagnose(shown, "read-error", fmt::format("dangling symbolic link: {}", std::strerror(errno)));
            continue;
          }
          is_dir = S_ISDIR(target.st_mode);
          is_file = S_ISREG(target.st_mode);
        }
        if (is_dir) {
          if (name == ".git" || name == "__pycache__") continue;
          if (!options.cache_dir.empty() && absolute == options.cache_dir) continue;
        } else if (!is_file || !name.ends_with(".py")) {
          continue;
        }
        if (excluded(absolute, is_dir)) continue;
        if (config.respect_gitignore && gitignored(dir.ignores.get(), absolute, is_dir)) continue;
        if (is_dir)
          subdirs.push_back({shown, absolute, dir.ignores});
        else
          add_file(shown, absolute, false);
      }
      // Reverse so the stack pops them in name order.
      for (auto it = subdirs.rbegin(); it != subdirs.rend(); ++it) stack.push_back(std::move(*it));
    }
  }
};

}  // namespace

DiscoveryResult discover_files(const std::vector<fs::path>& paths, const Config& config,
                               const DiscoveryOptions& options) {
  Walker walker{config, options, {}, {}, {}};
  for (const auto* list : {&config.exclude, &config.extend_exclude})
    for (const auto& g : *list) {
      GlobPattern p;
      if (GlobPattern::parse(g, p)) walker.excludes.push_back(std::move(p));
    }
  for (const auto& named : paths) {
    std::error_code ec;
    const fs::path shown = named.lexically_normal().empty() ? fs::path(".") : named.lexically_normal();
    const fs::path absolute = fs::absolute(named, ec).lexically_normal();
    struct stat st {};
    if (::stat(absolute.c_str(), &st) != 0) {
      struct stat lst {};
      const bool dangling = ::lstat(absolute.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode);
      walker.diagnose(shown, "read-error",
                      dangling ? fmt::format("dangling symbolic link: {}", std::strerror(errno))
                               : fmt::format("cannot check: {}", std::strerror(errno)));
      ++walker.result.missing;
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      if (options.force_exclude && walker.excluded(absolute, true)) continue;
      walker.walk(shown, absolute);
    } else {
      if (options.force_exclude && walker.excluded(absolute, false)) continue;
      walker.add_file(shown, absolute, true);
    }
  }
  auto& files = walker.result.files;
  std::stable_sort(files.begin(), files.end(),
                   [](const DiscoveredFile& a, const DiscoveredFile& b) { return a.display < b.display; });
  files.erase(
      std::unique(files.begin(), files.end(),
                  [](const DiscoveredFile& a, const DiscoveredFile& b) { return a.display == b.display; }),
      files.end());
  return std::move(walker.result);
}

}  // namespace kvlint
