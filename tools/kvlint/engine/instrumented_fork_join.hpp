// A fork/join loop on plain std::thread, for ThreadSanitizer builds.
//
// The engine's worker pool (Debian's TBB, or whatever library the build links)
// is not compiled with -fsanitize=thread: TSan cannot see the synchronisation
// inside it, so the hand-off of every task and of its results would be
// reported as races in kvlint's frames, and suppressing them would hide real
// ones. Under TSan the engine runs the same loop here instead, where thread
// creation, the atomic index and the join are all visible to it. The contract
// is the pool's: every index runs exactly once, on up to `workers` threads at
// once, all before the call returns; the first exception a body throws is
// rethrown after the join.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__SANITIZE_THREAD__)
#define KVLINT_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KVLINT_THREAD_SANITIZER 1
#endif
#endif

namespace kvlint {

template <typename Body>
void fork_join_on_threads(std::size_t count, int workers, const Body& body) {
  std::atomic<std::size_t> next{0};
  std::mutex error_mutex;
  std::exception_ptr first_error;
  const auto work = [&] {
    for (std::size_t k = next.fetch_add(1); k < count; k = next.fetch_add(1)) {
      try {
        body(k);
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
      }
    }
  };
  {
    std::vector<std::jthread> helpers;
    for (int t = 1; t < workers; ++t) helpers.emplace_back(work);
    work();
  }  // joined here
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace kvlint
