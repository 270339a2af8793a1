// The kvlint executable run from a test, as a user runs it: a working directory, arguments,
// an environment prefix; its exit status, stdout and stderr. Helpers read its JSON report.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/engine/temp_dir.hpp"

namespace kvlint::testing {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline CliRun run_kvlint(const std::filesystem::path& cwd, const std::vector<std::string>& args,
                         const std::string& env = "") {
  TempDir capture;
  std::string command = "cd " + quote(cwd.string()) + " && " + env + " " + quote(KVLINT_BINARY);
  for (const auto& a : args) command += " " + quote(a);
  command +=
      " >" + quote((capture.path() / "out").string()) + " 2>" + quote((capture.path() / "err").string());
  const int status = std::system(command.c_str());
  CliRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = slurp(capture.path() / "out");
  run.err = slurp(capture.path() / "err");
  return run;
}

inline nlohmann::json report(const CliRun& run) {
  try {
    return nlohmann::json::parse(run.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON: " << e.what() << "\n" << run.out << run.err;
    return nlohmann::json::object();
  }
}

inline std::vector<std::string> codes_in(const nlohmann::json& r, const std::string& file_part) {
  std::vector<std::string> out;
  for (const auto& f : r.value("findings", nlohmann::json::array()))
    if (f.dump().find(file_part) != std::string::npos) out.push_back(f.value("code", ""));
  return out;
}

inline std::vector<std::string> diagnostic_kinds(const nlohmann::json& r, const std::string& file_part) {
  std::vector<std::string> out;
  for (const auto& d : r.value("diagnostics", nlohmann::json::array()))
    if (d.value("path", "").find(file_part) != std::string::npos) out.push_back(d.value("kind", ""));
  return out;
}

inline bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace kvlint::testing
