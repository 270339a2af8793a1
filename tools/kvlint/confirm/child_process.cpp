#include "tools/kvlint/confirm/child_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>
#include <utility>

namespace kvlint::confirm {
namespace {

using Clock = std::chrono::steady_clock;

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  UniqueFd read_end, write_end;
};

std::optional<Pipe> make_pipe() {
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) return std::nullopt;
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// The text of a /proc/<pid>/stat, or "" when it cannot be read. Read with read(2): a process
// that exits during the read makes it fail with ESRCH, which an istreambuf_iterator over an
// ifstream throws as an exception (libstdc++), and any process on the machine may exit
// during the scan below.
std::string proc_stat(const std::filesystem::path& file) {
  const UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return {};
  std::string content;
  char buffer[1024];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n > 0) {
      content.append(buffer, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return n == 0 ? content : std::string();
    }
  }
}

// Children of this process other than the one run_child is running: those it
// adopted as a subreaper. Read from /proc/<pid>/stat (field 4, after the
// parenthesised name, which may itself hold ')').
std::vector<pid_t> adopted_children() {
  std::vector<pid_t> out;
  const pid_t self = ::getpid();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string content = proc_stat(entry.path() / "stat");
    const auto close = content.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(content.substr(close + 1));
    std::string state;
    long parent = 0;
    if (fields >> state >> parent && parent == self) out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

// Kills and reaps every adopted process. Killing one can orphan its own
// children onto this process, so repeat until none is left (bounded, against
// a descendant that forks as fast as it is killed).
void kill_adopted() {
  for (int round = 0; round < 64; ++round) {
    const auto adopted = adopted_children();
    if (adopted.empty()) return;
    for (pid_t pid : adopted) ::kill(pid, SIGKILL);
    for (pid_t pid : adopted) {
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
  }
}

// Owns a running child: if the host unwinds (exception) before the child was
// reaped, the destructor kills its process group and reaps it.
class ChildGuard {
 public:
  explicit ChildGuard(pid_t pid) : pid_(pid) {}
  ChildGuard(const ChildGuard&) = delete;
  ChildGuard& operator=(const ChildGuard&) = delete;
  ~ChildGuard() {
    if (pid_ <= 0) return;
    ::killpg(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    kill_adopted();
  }
  pid_t pid() const { return pid_; }
  // The child has exited and is still a zombie (its pid, and so the group id,
  // cannot be reused yet): kill stragglers in its group, then reap it.
  int reap() {
    ::killpg(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    kill_adopted();
    return status;
  }

 private:
  pid_t pid_;
};

// Splits a byte stream into lines.
class LineSplitter {
 public:
  LineSplitter(std::size_t max_line, const std::function<void(std::string_view, bool)>& on_line)
      : max_line_(max_line), on_line_(on_line) {}
  void feed(std::string_view data) {
    while (!data.empty()) {
      auto newline = data.find('\n');
      if (newline == std::string_view::npos) {
        pending_.append(data);
        if (pending_.size() > max_line_) {
          emit(pending_, false);
          pending_.clear();
        }
        return;
      }
      pending_.append(data.substr(0, newline));
      emit(pending_, true);
      pending_.clear();
      data.remove_prefix(newline + 1);
    }
  }
  void finish() {
    if (!pending_.empty()) emit(pending_, false);
    pending_.clear();
  }

 private:
  void emit(std::string_view line, bool complete) {
    if (on_line_) on_line_(line, complete);
  }
  std::size_t max_line_;
  const std::function<void(std::string_view, bool)>& on_line_;
  std::string pending_;
};

// Reads what is available now; false at EOF or on a hard error.
bool drain(int fd, const std::function<void(std::string_view)>& sink) {
  std::array<char, 65536> buffer{};
  while (true) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n > 0) {
      sink(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// argv[0] with a '/' as is, else the first executable match in $PATH (resolved
// before fork: nothing may allocate between fork and exec).
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    auto colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) return name;
    dirs.remove_prefix(colon + 1);
  }
}

// fork + exec rather than posix_spawn so the child can ask for SIGKILL when the
// host dies (PR_SET_PDEATHSIG): a Ctrl-C on kvlint must not leave a model
// running in its own process group. Returns 0 or the errno of the failure.
int spawn(const ChildSpec& spec, int stdout_fd, int stderr_fd, pid_t& pid) {
  const std::string program = find_program(spec.argv[0]);
  auto argv = c_strings(spec.argv);
  auto envp = c_strings(spec.env);
  auto exec_status = make_pipe();  // carries exec's errno; closed by a successful exec (O_CLOEXEC)
  if (!exec_status) return errno;
  const pid_t parent = ::getpid();
  pid = ::fork();
  if (pid < 0) return errno;
  if (pid == 0) {
    // Child: async-signal-safe calls only.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the host died before prctl
    sigset_t empty;
    sigemptyset(&empty);
    ::sigprocmask(SIG_SETMASK, &empty, nullptr);
    for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP}) ::signal(sig, SIG_DFL);
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    ::dup2(stdout_fd, STDOUT_FILENO);
    ::dup2(stderr_fd, STDERR_FILENO);
    ::execve(program.c_str(), argv.data(), envp.data());
    int error = errno;
    ssize_t ignored = ::write(exec_status->write_end.get(), &error, sizeof error);
    (void)ignored;
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, so killpg works before the child ran
  exec_status->write_end.reset();
  int error = 0;
  ssize_t n;
  while ((n = ::read(exec_status->read_end.get(), &error, sizeof error)) < 0 && errno == EINTR) {
  }
  if (n == static_cast<ssize_t>(sizeof error)) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    pid = -1;
    return error != 0 ? error : ENOEXEC;
  }
  return 0;
}

}  // namespace

ChildExit run_child(const ChildSpec& spec, const ChildCallbacks& callbacks) {
  ChildExit result;
  if (spec.argv.empty()) {
    result.spawn_error = "empty command line";
    return result;
  }
  auto out_pipe = make_pipe();
  auto err_pipe = make_pipe();
  if (!out_pipe || !err_pipe) {
    result.spawn_error = fmt::format("pipe: {}", std::strerror(errno));
    return result;
  }

  // Orphaned descendants (a grandchild that called setsid, say) come to this
  // process instead of init, where kill_adopted() finds them.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  pid_t pid = -1;
  if (int error = spawn(spec, out_pipe->write_end.get(), err_pipe->write_end.get(), pid); error != 0) {
    result.spawn_error = fmt::format("{}: {}", spec.argv[0], std::strerror(error));
    return result;
  }
  result.spawned = true;
  ChildGuard child(pid);
  out_pipe->write_end.reset();
  err_pipe->write_end.reset();
  UniqueFd out_fd = std::move(out_pipe->read_end);
  UniqueFd err_fd = std::move(err_pipe->read_end);
  ::fcntl(out_fd.get(), F_SETFL, O_NONBLOCK);
  ::fcntl(err_fd.get(), F_SETFL, O_NONBLOCK);

  LineSplitter lines(spec.max_line_bytes, callbacks.on_line);
  auto stdout_sink = [&lines](std::string_view data) { lines.feed(data); };
  auto stderr_sink = [&result, &spec](std::string_view data) {
    result.stderr_tail.append(data);
    if (result.stderr_tail.size() > spec.stderr_tail_bytes) {
      result.stderr_tail.erase(0, result.stderr_tail.size() - spec.stderr_tail_bytes);
      // Start the tail on a character boundary: drop the continuation bytes
      // (10xxxxxx, at most 3) of a UTF-8 character the cut went through.
      std::size_t skip = 0;
      while (skip < 3 && skip < result.stderr_tail.size() &&
             (static_cast<unsigned char>(result.stderr_tail[skip]) & 0xC0u) == 0x80u)
        ++skip;
      result.stderr_tail.erase(0, skip);
    }
  };

  const auto started = Clock::now();
  const auto deadline = started + spec.timeout;
  std::optional<Clock::time_point> kill_deadline;  // set once SIGTERM was sent
  bool killed_hard = false;
  auto next_tick = started;
  bool out_open = true, err_open = true;

  while (true) {
    const auto now = Clock::now();
    if (callbacks.on_tick && now >= next_tick) {
      callbacks.on_tick(pid);
      next_tick = now + spec.tick;
    }
    // Has the child exited? WNOWAIT keeps the zombie, so its pid (the group id) stays reserved.
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid) {
      if (out_open) out_open = drain(out_fd.get(), stdout_sink);
      if (err_open) err_open = drain(err_fd.get(), stderr_sink);
      break;
    }
    if (!kill_deadline && now >= deadline) {
      result.timed_out = true;
      ::killpg(pid, SIGTERM);
      kill_deadline = now + spec.kill_grace;
    }
    if (!result.interrupted && spec.interrupt_fd >= 0) {
      pollfd interrupt{spec.interrupt_fd, POLLIN, 0};
      if (::poll(&interrupt, 1, 0) > 0) {
        result.interrupted = true;  // no grace: the user is waiting
        ::killpg(pid, SIGKILL);
        killed_hard = true;
        kill_deadline = now;
      }
    }
    if (kill_deadline && !killed_hard && now >= *kill_deadline) {
      ::killpg(pid, SIGKILL);
      killed_hard = true;
    }

    auto wait_until = next_tick;
    if (!kill_deadline)
      wait_until = std::min(wait_until, deadline);
    else if (!killed_hard)
      wait_until = std::min(wait_until, *kill_deadline);
    // Also wake at least every 100 ms to notice the exit when the pipes are closed.
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(wait_until - now);
    int wait_ms = static_cast<int>(std::clamp<long long>(wait.count(), 1, 100));

    std::array<pollfd, 3> fds{};
    nfds_t count = 0;
    if (out_open) fds[count++] = pollfd{out_fd.get(), POLLIN, 0};
    if (err_open) fds[count++] = pollfd{err_fd.get(), POLLIN, 0};
    if (!result.interrupted && spec.interrupt_fd >= 0) fds[count++] = pollfd{spec.interrupt_fd, POLLIN, 0};
    int ready = ::poll(fds.data(), count, wait_ms);
    if (ready < 0 && errno != EINTR) break;
    for (nfds_t i = 0; i < count && ready > 0; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == out_fd.get())
        out_open = drain(out_fd.get(), stdout_sink);
      else if (fds[i].fd == err_fd.get())
        err_open = drain(err_fd.get(), stderr_sink);
    }
  }
  lines.finish();

  int status = child.reap();
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace kvlint::confirm
