#include "analyzers/cpp/project_headers.hpp"

#include <algorithm>

namespace kvlint::cpp {

namespace fs = std::filesystem;

namespace {

// How many directories up from the includer are searched; deeper trees stop there.
constexpr int kMaxAncestors = 32;
// How far back from the end of the directive its header name is looked for.
constexpr std::size_t kMaxDirectiveBytes = 4096;

bool is_plain_relative(std::string_view name) {
  const fs::path p(name);
  if (name.empty() || p.is_absolute() || p.has_root_name()) return false;
  return std::none_of(p.begin(), p.end(), [](const fs::path& part) { return part == ".." || part == "."; });
}

bool lexically_within(const fs::path& path, const fs::path& root) {
  const fs::path relative = path.lexically_relative(root);
  return !relative.empty() && *relative.begin() != "..";
}

}  // namespace

ProjectHeader find_project_header(std::string_view name, const fs::path& includer_dir,
                                  const fs::path& project_root,
                                  const std::function<bool(const std::string&)>& is_project_file) {
  ProjectHeader out;
  if (!is_plain_relative(name) || project_root.empty() || !lexically_within(includer_dir, project_root))
    return out;
  fs::path dir = includer_dir;
  for (int depth = 0; depth < kMaxAncestors; ++depth) {
    std::vector<std::string> found;
    for (const char* sibling : {"include", "includes"}) {
      const std::string candidate = (dir / sibling / name).lexically_normal().string();
      if (is_project_file(candidate))
        found.push_back((dir / sibling).lexically_normal().string());
      else
        out.absent.push_back(candidate);
    }
    if (found.size() == 1) {
      out.directory = found.front();
      return out;
    }
    if (found.size() > 1) {
      out.ambiguity = "in both " + found[0] + " and " + found[1] + "; neither used";
      return out;
    }
    if (dir == project_root || dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  return out;
}

bool names_in_quotes(std::string_view buffer, std::size_t end, std::string_view name) {
  end = std::min(end, buffer.size());
  const std::size_t begin = end > kMaxDirectiveBytes ? end - kMaxDirectiveBytes : 0;
  const std::string_view directive = buffer.substr(begin, end - begin);
  const std::string quoted = "\"" + std::string(name) + "\"";
  const std::string angled = "<" + std::string(name) + ">";
  const std::size_t q = directive.rfind(quoted);
  const std::size_t a = directive.rfind(angled);
  if (q == std::string_view::npos) return false;
  return a == std::string_view::npos || q > a;
}

}  // namespace kvlint::cpp
