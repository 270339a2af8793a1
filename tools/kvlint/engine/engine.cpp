// TODO(cli): minimal sequential pipeline; discovery, prefilter, cache, parallelism
// and suppressions land with the CLI work.
#include "tools/kvlint/engine/engine.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "analyzers/facts/project.hpp"
#include "analyzers/python/python_frontend.hpp"
#include "rules/registry.hpp"

namespace kvlint {

std::string fingerprint_of(const Finding& finding, std::string_view) { return finding.code; }

CheckResult run_check(const CheckOptions& options) {
  namespace fs = std::filesystem;
  CheckResult result;
  std::vector<fs::path> files;
  for (const auto& p : options.paths) {
    if (fs::is_directory(p)) {
      for (const auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file() && e.path().extension() == ".py") files.push_back(e.path());
    } else {
      files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<facts::FileFacts> all;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    all.push_back(python::analyze(f.string(), ss.str(), options.config.vocabulary));
  }
  result.stats.files_found = files.size();
  facts::Project project(std::move(all), options.config.vocabulary);
  for (const auto& rule : make_all_rules())
    if (options.config.is_selected(rule->info().code)) rule->check(project, result.findings);
  std::sort(result.findings.begin(), result.findings.end(), [](const Finding& a, const Finding& b) {
    return std::tie(a.loc.file, a.loc.line, a.loc.column, a.code) <
           std::tie(b.loc.file, b.loc.line, b.loc.column, b.code);
  });
  return result;
}

}  // namespace kvlint
