// A private directory for targets whose narrowest public entry reads a file
// (the configuration loader, the facts cache). Made once per fuzzing process,
// in /dev/shm when there is one so the per-input write stays in memory; removed
// at exit.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

namespace kvlint::fuzz {

class ScratchDir {
 public:
  ScratchDir() {
    std::error_code ec;
    const std::filesystem::path base =
        std::filesystem::is_directory("/dev/shm", ec) ? "/dev/shm" : std::filesystem::temp_directory_path();
    std::string templ = (base / "kvlint-fuzz-XXXXXX").string();
    if (!::mkdtemp(templ.data())) {
      std::perror("kvlint fuzz: mkdtemp");
      std::abort();
    }
    path_ = templ;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // Replaces `name` in the directory with exactly `bytes`.
  std::filesystem::path write(const std::string& name, std::string_view bytes) const {
    const std::filesystem::path file = path_ / name;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::perror("kvlint fuzz: cannot write the scratch file");
      std::abort();
    }
    return file;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace kvlint::fuzz
