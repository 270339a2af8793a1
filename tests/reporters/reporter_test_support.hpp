// Hand-built check results and helpers shared by the reporter tests.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "tools/kvlint/engine/engine.hpp"
#include "tools/kvlint/reporters/reporters.hpp"

namespace kvlint::test {

// A related location built member by member: GCC 12 warns, wrongly, that the shared path
// (facts::FilePath) of a braced RelatedLocation temporary may be used uninitialized.
inline RelatedLocation related_at(facts::Location loc, std::string message) {
  RelatedLocation related;
  related.loc = std::move(loc);
  related.message = std::move(message);
  return related;
}

inline Finding make_finding(std::string code, Severity severity, facts::Location loc, std::string owner,
                            std::string message, std::string fingerprint) {
  Finding finding;
  finding.code = std::move(code);
  finding.severity = severity;
  finding.loc = std::move(loc);
  finding.owner_class = std::move(owner);
  finding.message = std::move(message);
  finding.fingerprint = std::move(fingerprint);
  return finding;
}

// One finding of each severity, evidence on the first, one diagnostic.
inline CheckResult sample_result() {
  CheckResult result;
  Finding undeclared =
      make_finding("KV101", Severity::Error, {"examples/models/codec.py", 18, 9, 18, 40}, "StreamingDecoder",
                   "DynamicCache built here is not declared", "0123abcd");
  undeclared.related.push_back(
      related_at({"examples/models/codec.py", 33, 5, 33, 20}, "cache kept per request id here"));
  undeclared.related.push_back(related_at({"examples/models/runner.py", 7, 1, 7, 9}, "owner built here"));
  result.findings.push_back(std::move(undeclared));
  result.findings.push_back(make_finding("KV104", Severity::Warning,
                                         {"examples/models/codec.py", 40, 5, 40, 30}, "Talker",
                                         "declaration covers no cache", "feed01"));
  result.findings.push_back(make_finding("KV403", Severity::Info, {"src/geom.py", 7, 3, 7, 20}, "",
                                         "layers written as a literal", "beef02"));
  result.diagnostics.push_back({"broken.py", 3, 7, "parse-error", "unexpected indent"});
  result.suppressed = 2;
  result.stats.files_found = 12;
  return result;
}

// Quotes, a newline, %, commas, a colon and non-ASCII in path and message.
inline const char* const kOddPath = "dir with space/na\xC3\xAFve,%\"q\".py";
inline const char* const kOddMessage = "say \"hi\"\nsecond line: 50% done, ok \xC3\xBC <b>|x|</b>";

inline CheckResult odd_result() {
  CheckResult result;
  Finding finding =
      make_finding("KV101", Severity::Error, {kOddPath, 2, 3, 2, 5}, "Own", kOddMessage, "f00d");
  finding.related.push_back(related_at({kOddPath, 9, 1, 9, 4}, "kept, here: 100%"));
  result.findings.push_back(std::move(finding));
  result.diagnostics.push_back({"bad,file:1.py", 0, 0, "read-error", "cannot read: 100% gone\r\nreally"});
  result.stats.files_found = 2;
  return result;
}

// A fresh directory removed with its contents when the test ends.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kvlint-reporters-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::filesystem::path write(const std::string& name, const std::string& content) const {
    const std::filesystem::path file = path_ / name;
    std::ofstream stream(file, std::ios::binary);
    stream << content;
    return file;
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// 3,000 caches on one 86 KB line of `dir`/one_line.py, one finding at each: what made a report
// quadratic in its findings when each excerpt printed the whole line.
inline CheckResult findings_on_one_long_line(const TempDir& dir) {
  std::string content;
  for (int i = 0; i < 3000; ++i) content += "DynamicCache(),";
  content += std::string(86000 - content.size(), ' ') + "\n";
  const std::string path = dir.write("one_line.py", content).string();
  CheckResult result;
  for (uint32_t i = 0; i < 3000; ++i)
    result.findings.push_back(make_finding("KV101", Severity::Error, {path, 1, 1 + 15 * i, 1, 15 + 15 * i},
                                           "A", "undeclared", std::to_string(i)));
  return result;
}

// Runs KVLINT_PYTHON's jsonschema on `instance` against `schema` (the
// validator class follows the schema's $schema); returns the exit status.
// `show_errors` false keeps expected validation failures out of the test log.
inline int validate_json_file(const std::filesystem::path& instance, const std::filesystem::path& schema,
                              bool show_errors = true) {
  const std::string command = std::string("'") + KVLINT_PYTHON +
                              "' -c \"import json,jsonschema,sys; "
                              "jsonschema.validate(json.load(open(sys.argv[1], encoding='utf-8')), "
                              "json.load(open(sys.argv[2], encoding='utf-8')))\" '" +
                              instance.string() + "' '" + schema.string() + "'" +
                              (show_errors ? "" : " 2>/dev/null");
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace kvlint::test
