#include "tools/kvlint/confirm/interrupt.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <stdexcept>

namespace kvlint::confirm {
namespace {

constexpr std::array<int, 3> kWatched = {SIGINT, SIGTERM, SIGHUP};

// A signal handler reaches nothing but globals: the write end of the watch's
// socket is the one piece of process-wide state, set only while a watch exists.
std::atomic<int> g_write_fd{-1};

extern "C" void on_signal(int signal) {
  const int saved = errno;
  const int fd = g_write_fd.load();
  if (fd >= 0) {
    const auto byte = static_cast<unsigned char>(signal);
    ssize_t ignored = ::write(fd, &byte, 1);  // a full buffer already holds the first signal
    (void)ignored;
  }
  errno = saved;
}

}  // namespace

InterruptWatch::InterruptWatch() {
  // A socket rather than a pipe: received() peeks, so the fd stays readable for every poll after.
  std::array<int, 2> fds{};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds.data()) != 0)
    throw std::runtime_error("socketpair: cannot watch for signals");
  int expected = -1;
  if (!g_write_fd.compare_exchange_strong(expected, fds[1])) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::logic_error("only one InterruptWatch at a time");
  }
  read_fd_ = fds[0];
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (std::size_t i = 0; i < kWatched.size(); ++i) {
    ::sigaction(kWatched[i], &action, &previous_[i]);
    // An ignored signal stays ignored (SIGHUP under nohup, SIGINT in a background job).
    if (previous_[i].sa_handler == SIG_IGN) ::sigaction(kWatched[i], &previous_[i], nullptr);
  }
}

InterruptWatch::~InterruptWatch() {
  for (std::size_t i = 0; i < kWatched.size(); ++i) ::sigaction(kWatched[i], &previous_[i], nullptr);
  ::close(g_write_fd.exchange(-1));
  ::close(read_fd_);
}

int InterruptWatch::received() const {
  unsigned char byte = 0;
  if (::recv(read_fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 1) return byte;
  return 0;
}

}  // namespace kvlint::confirm
