// Turns SIGINT, SIGTERM and SIGHUP into something the host's poll loop can
// wait on, so that an interrupted `kvlint confirm` kills the process groups it
// started, removes its temporary directories (by unwinding) and exits 128+N,
// instead of dying at once and leaving a model running.
#pragma once

#include <array>
#include <csignal>

namespace kvlint::confirm {

class InterruptWatch {
 public:
  // Installs the handlers (a signal already ignored stays ignored); the previous
  // dispositions come back on destruction.
  // One watch at a time (a second throws std::logic_error).
  InterruptWatch();
  ~InterruptWatch();
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

  // Readable once a watched signal arrived, and from then on: poll it beside the child's pipes.
  int fd() const { return read_fd_; }
  // The first signal received, or 0.
  int received() const;

 private:
  int read_fd_ = -1;
  std::array<struct sigaction, 3> previous_{};  // SIGINT, SIGTERM, SIGHUP
};

}  // namespace kvlint::confirm
