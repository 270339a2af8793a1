// The std::thread fork/join that ThreadSanitizer builds run the engine's loops on.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tools/kvlint/engine/instrumented_fork_join.hpp"

namespace kvlint {
namespace {

TEST(ForkJoinOnThreads, RunsEveryIndexExactlyOnceBeforeReturning) {
  for (const int workers : {1, 2, 4, 9}) {
    std::vector<std::atomic<int>> runs(1000);
    std::mutex threads_mutex;
    std::set<std::thread::id> threads;
    fork_join_on_threads(runs.size(), workers, [&](std::size_t k) {
      runs[k].fetch_add(1);
      const std::lock_guard lock(threads_mutex);
      threads.insert(std::this_thread::get_id());
    });
    for (std::size_t k = 0; k < runs.size(); ++k) ASSERT_EQ(runs[k].load(), 1) << k << " workers " << workers;
    EXPECT_LE(threads.size(), static_cast<std::size_t>(workers));
    if (workers == 1) {
      EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
    }
  }
  int calls = 0;
  fork_join_on_threads(0, 4, [&](std::size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ForkJoinOnThreads, RethrowsABodysExceptionAfterTheOthersFinish) {
  std::atomic<int> done{0};
  EXPECT_THROW(fork_join_on_threads(200, 3,
                                    [&](std::size_t k) {
                                      if (k == 17) throw std::runtime_error("body failed");
                                      done.fetch_add(1);
                                    }),
               std::runtime_error);
  EXPECT_EQ(done.load(), 199);
}

}  // namespace
}  // namespace kvlint
