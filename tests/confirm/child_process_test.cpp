#include "tools/kvlint/confirm/child_process.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>
#include <fstream>
#include <thread>

#include "support.hpp"
#include "tools/kvlint/confirm/interrupt.hpp"

namespace kvlint::confirm {
namespace {

using testing::process_gone;
using testing::python;
using testing::read_file;
using testing::ScratchDir;

std::vector<std::string> base_env() {
  return {"PATH=/usr/bin:/bin", "PYTHONUNBUFFERED=1"};
}

bool wait_gone(pid_t pid) {
  // Signal delivery is asynchronous; poll for up to 10 s (not a timing assertion).
  for (int i = 0; i < 200; ++i) {
    if (process_gone(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST(ChildProcess, StreamsLinesAndKeepsStderrTail) {
  ChildSpec spec;
  spec.argv = {python(), "-c",
               "import sys\nfor i in range(3): print('line', i, flush=True)\nsys.stderr.write('oops\\n')\n"
               "sys.stdout.write('last-without-newline')\nsys.exit(3)"};
  spec.env = base_env();
  std::vector<std::pair<std::string, bool>> lines;
  ChildCallbacks callbacks;
  callbacks.on_line = [&](std::string_view line, bool complete) { lines.emplace_back(line, complete); };
  int ticks = 0;
  callbacks.on_tick = [&](pid_t) { ++ticks; };
  ChildExit exit = run_child(spec, callbacks);
  ASSERT_TRUE(exit.spawned) << exit.spawn_error;
  EXPECT_FALSE(exit.timed_out);
  EXPECT_EQ(exit.exit_code, 3);
  EXPECT_EQ(exit.signal, 0);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], (std::pair<std::string, bool>{"line 0", true}));
  EXPECT_EQ(lines[3], (std::pair<std::string, bool>{"last-without-newline", false}));
  EXPECT_EQ(exit.stderr_tail, "oops\n");
  EXPECT_GE(ticks, 1);
}

TEST(ChildProcess, ReportsTheSignalThatKilledTheChild) {
  ChildSpec spec;
  spec.argv = {python(), "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"};
  spec.env = base_env();
  ChildExit exit = run_child(spec, {});
  ASSERT_TRUE(exit.spawned);
  EXPECT_EQ(exit.signal, SIGSEGV);
  EXPECT_EQ(exit.exit_code, -1);
}

std::size_t open_fds() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++count;
  return count;
}

TEST(ChildProcess, LeavesNoDescriptorsOpen) {
  const std::size_t before = open_fds();
  for (const char* code :
       {"print('x')", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "import sys; sys.exit(4)"}) {
    ChildSpec spec;
    spec.argv = {python(), "-c", code};
    spec.env = base_env();
    ChildExit exit = run_child(spec, {});
    EXPECT_TRUE(exit.spawned);
  }
  ChildSpec missing;
  missing.argv = {"/nonexistent/python-kvlint-test"};
  run_child(missing, {});
  EXPECT_EQ(open_fds(), before);
}

TEST(ChildProcess, MissingProgramIsASpawnError) {
  ChildSpec spec;
  spec.argv = {"/nonexistent/python-kvlint-test"};
  spec.env = base_env();
  ChildExit exit = run_child(spec, {});
  EXPECT_FALSE(exit.spawned);
  EXPECT_NE(exit.spawn_error.find("/nonexistent/python-kvlint-test"), std::string::npos);
}

TEST(ChildProcess, TimeoutKillsTheWholeProcessGroupEvenWhenSigtermIsIgnored) {
  ScratchDir dir;
  const auto pidfile = dir.path() / "grandchild.pid";
  ChildSpec spec;
  spec.argv = {python(), "-c",
               "import signal, subprocess, sys, time\n"
               "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
               "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
               "open(sys.argv[1], 'w').write(str(g.pid))\n"
               "print('ready', flush=True)\n"
               "time.sleep(600)\n",
               pidfile.string()};
  spec.env = base_env();
  spec.timeout = std::chrono::milliseconds(1500);
  spec.kill_grace = std::chrono::milliseconds(500);
  std::vector<std::string> lines;
  ChildCallbacks callbacks;
  callbacks.on_line = [&](std::string_view line, bool) { lines.emplace_back(line); };
  ChildExit exit = run_child(spec, callbacks);
  ASSERT_TRUE(exit.spawned);
  EXPECT_TRUE(exit.timed_out);
  EXPECT_EQ(exit.signal, SIGKILL);  // SIGTERM was ignored, so the grace period ended in SIGKILL
  ASSERT_EQ(lines, std::vector<std::string>{"ready"});
  const auto grandchild = static_cast<pid_t>(std::stol(read_file(pidfile)));
  EXPECT_TRUE(wait_gone(grandchild)) << "grandchild " << grandchild << " survived";
}

TEST(ChildProcess, TheChildDiesWithTheHost) {
  ScratchDir dir;
  const auto pidfile = dir.path() / "child.pid";
  const pid_t host = ::fork();
  ASSERT_GE(host, 0);
  if (host == 0) {  // a stand-in host that runs a sleeping child
    ChildSpec spec;
    spec.argv = {python(), "-c",
                 "import os, sys, time\nopen(sys.argv[1], 'w').write(str(os.getpid()))\ntime.sleep(600)",
                 pidfile.string()};
    spec.env = base_env();
    spec.timeout = std::chrono::milliseconds(600'000);
    run_child(spec, {});
    ::_exit(0);
  }
  // Wait (bounded) for the child to start, then kill the host hard.
  for (int i = 0; i < 600 && !std::filesystem::exists(pidfile); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::string content;
  for (int i = 0; i < 100 && content.empty(); ++i) {
    content = read_file(pidfile);
    if (content.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(host, SIGKILL);
  int status = 0;
  ::waitpid(host, &status, 0);
  ASSERT_FALSE(content.empty()) << "the child never started";
  EXPECT_TRUE(wait_gone(static_cast<pid_t>(std::stol(content))));
}

TEST(ChildProcess, StragglersOfAnExitedChildDoNotBlockTheHost) {
  // The child exits at once but leaves a sleeping grandchild holding its stdout.
  ScratchDir dir;
  const auto pidfile = dir.path() / "grandchild.pid";
  ChildSpec spec;
  spec.argv = {python(), "-c",
               "import subprocess, sys\n"
               "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
               "open(sys.argv[1], 'w').write(str(g.pid))\n"
               "print('bye', flush=True)\n",
               pidfile.string()};
  spec.env = base_env();
  spec.timeout = std::chrono::milliseconds(60'000);
  ChildExit exit = run_child(spec, {});
  ASSERT_TRUE(exit.spawned);
  EXPECT_FALSE(exit.timed_out);
  EXPECT_EQ(exit.exit_code, 0);
  const auto grandchild = static_cast<pid_t>(std::stol(read_file(pidfile)));
  EXPECT_TRUE(wait_gone(grandchild));
}

// A child that starts `sleep` in a session of its own (setsid), writes its pid,
// says "ready" and hangs: the grandchild is outside the child's process group.
ChildSpec setsid_grandchild_spec(const std::filesystem::path& pidfile) {
  ChildSpec spec;
  spec.argv = {python(), "-c",
               "import os, subprocess, sys, time\n"
               "g = subprocess.Popen(['sleep', '600'], start_new_session=True)\n"
               "open(sys.argv[1] + '.tmp', 'w').write(str(g.pid))\n"
               "os.rename(sys.argv[1] + '.tmp', sys.argv[1])\n"
               "print('ready', flush=True)\n"
               "time.sleep(600)\n",
               pidfile.string()};
  spec.env = base_env();
  spec.kill_grace = std::chrono::milliseconds(500);
  return spec;
}

TEST(ChildProcess, TimeoutAlsoKillsAGrandchildThatLeftTheSession) {
  ScratchDir dir;
  const auto pidfile = dir.path() / "grandchild.pid";
  // The timeout must outlast the child's start-up for the grandchild to exist at
  // all; on a loaded machine that can take long, so lengthen it and try again.
  for (auto timeout : {std::chrono::milliseconds(2'000), std::chrono::milliseconds(10'000),
                       std::chrono::milliseconds(60'000)}) {
    ChildSpec spec = setsid_grandchild_spec(pidfile);
    spec.timeout = timeout;
    ChildExit exit = run_child(spec, {});
    ASSERT_TRUE(exit.spawned);
    EXPECT_TRUE(exit.timed_out);
    if (!std::filesystem::exists(pidfile)) continue;
    const auto grandchild = static_cast<pid_t>(std::stol(read_file(pidfile)));
    const bool gone = process_gone(grandchild);  // killed and reaped before run_child returned
    if (!gone) ::kill(grandchild, SIGKILL);
    EXPECT_TRUE(gone) << "grandchild " << grandchild << " (own session) outlived the timeout";
    return;
  }
  FAIL() << "the child never started its grandchild";
}

TEST(ChildProcess, AnInterruptKillsTheChildAndWhatItStartedAtOnce) {
  ScratchDir dir;
  const auto pidfile = dir.path() / "grandchild.pid";
  InterruptWatch watch;
  ChildSpec spec = setsid_grandchild_spec(pidfile);
  spec.timeout = std::chrono::milliseconds(600'000);
  spec.kill_grace = std::chrono::milliseconds(600'000);  // an interrupt does not wait for it
  spec.interrupt_fd = watch.fd();
  ChildCallbacks callbacks;
  // Ctrl-C as soon as the grandchild exists.
  callbacks.on_line = [](std::string_view line, bool) {
    if (line == "ready") ::kill(::getpid(), SIGINT);
  };
  ChildExit exit = run_child(spec, callbacks);
  ASSERT_TRUE(exit.spawned);
  EXPECT_TRUE(exit.interrupted);
  EXPECT_FALSE(exit.timed_out);
  EXPECT_EQ(exit.signal, SIGKILL);
  EXPECT_EQ(watch.received(), SIGINT);
  ASSERT_TRUE(std::filesystem::exists(pidfile));
  const auto grandchild = static_cast<pid_t>(std::stol(read_file(pidfile)));
  const bool gone = process_gone(grandchild);
  if (!gone) ::kill(grandchild, SIGKILL);
  EXPECT_TRUE(gone) << "grandchild " << grandchild << " outlived the interrupt";
}

TEST(ChildProcess, StderrTailStartsOnACharacterBoundary) {
  ChildSpec spec;
  // 5000 three-byte characters, "!" and a newline: a 4096-byte tail would start inside one.
  spec.argv = {python(), "-c", "import sys; print('\\u2588' * 5000 + '!', file=sys.stderr)"};
  spec.env = base_env();
  spec.env.push_back("PYTHONIOENCODING=utf-8");
  spec.timeout = std::chrono::milliseconds(60'000);
  ChildExit exit = run_child(spec, {});
  ASSERT_TRUE(exit.spawned);
  ASSERT_FALSE(exit.stderr_tail.empty());
  // 4096 = "!\n" + 3 * 1364 + 2: the 2 bytes ending a cut character are dropped.
  EXPECT_EQ(exit.stderr_tail.size(), 4094u);
  EXPECT_EQ(exit.stderr_tail.substr(0, 3), "\u2588");
  EXPECT_EQ(exit.stderr_tail.substr(exit.stderr_tail.size() - 2), "!\n");
}

}  // namespace
}  // namespace kvlint::confirm
