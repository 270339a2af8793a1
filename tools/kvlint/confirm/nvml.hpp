// GPU memory of a child process, sampled from outside through NVML the way the
// serving engine measures it. libnvidia-ml is loaded with dlopen at run time:
// no link dependency, and a machine without the library or a GPU simply gets
// no samples.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace kvlint::confirm {

class NvmlSampler {
 public:
  // Loads `library` (default libnvidia-ml.so.1) and initializes NVML; never throws.
  explicit NvmlSampler(const std::string& library = "libnvidia-ml.so.1");
  ~NvmlSampler();
  NvmlSampler(const NvmlSampler&) = delete;
  NvmlSampler& operator=(const NvmlSampler&) = delete;

  bool available() const;
  // Why it is not available ("libnvidia-ml.so.1: cannot open shared object file").
  const std::string& unavailable_reason() const { return reason_; }
  // Bytes of GPU memory used, over every device, by processes whose pid is
  // `pid` or whose process group is `pgid`; nullopt when nothing matched or
  // NVML is unavailable.
  std::optional<uint64_t> sample(pid_t pid, pid_t pgid) const;

 private:
  struct Api;
  std::unique_ptr<Api> api_;
  std::string reason_;
};

// Keeps the peak of a child's samples.
class PeakTracker {
 public:
  void add(std::optional<uint64_t> sample) {
    if (sample && (!peak_ || *sample > *peak_)) peak_ = sample;
  }
  std::optional<uint64_t> peak() const { return peak_; }

 private:
  std::optional<uint64_t> peak_;
};

}  // namespace kvlint::confirm
