// Runs one child process in its own process group, streams its stdout line by
// line, keeps the tail of its stderr, enforces a timeout by killing the whole
// group (SIGTERM, then SIGKILL after a grace period) and always reaps it.
// The host is made a child subreaper (PR_SET_CHILD_SUBREAPER), so descendants
// that left the group or the session (setsid) are adopted by it when their
// parent dies; once the child is reaped, every process the host adopted is
// killed and reaped too. This assumes run_child is the host's only way of
// starting processes (true of kvlint): any other child of the host is taken
// for an adopted one.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kvlint::confirm {

struct ChildSpec {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH when it has no '/'
  std::vector<std::string> env;   // "KEY=VALUE", the whole environment
  std::chrono::milliseconds timeout{120'000};
  std::chrono::milliseconds kill_grace{2'000};  // SIGTERM -> SIGKILL
  std::chrono::milliseconds tick{100};          // on_tick period (GPU memory sampling)
  std::size_t stderr_tail_bytes = 4096;
  std::size_t max_line_bytes = 64u << 20;  // longer lines are cut and delivered as incomplete
  int interrupt_fd = -1;                   // once readable (InterruptWatch::fd), the child is killed at once
};

struct ChildExit {
  bool spawned = false;
  std::string spawn_error;
  bool timed_out = false;
  bool interrupted = false;  // killed because interrupt_fd became readable
  int exit_code = -1;        // -1 when killed by a signal
  int signal = 0;
  std::string stderr_tail;
};

struct ChildCallbacks {
  // One stdout line without its '\n'; `complete` is false for a last line cut
  // short by EOF (the child died mid-write) or by max_line_bytes.
  std::function<void(std::string_view line, bool complete)> on_line;
  // Called about every spec.tick while the child runs, with its pid (= its process group id).
  std::function<void(pid_t pid)> on_tick;
};

ChildExit run_child(const ChildSpec& spec, const ChildCallbacks& callbacks);

}  // namespace kvlint::confirm
