// The worker threads that replaced TBB in the check pipeline: every item runs
// exactly once, each worker's state is its own, and a failing item stops the
// loop with its exception.
#include "tools/kvlint/engine/workers.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace kvlint {
namespace {

TEST(Workers, RunEveryItemExactlyOnceOnAtMostTheirCountOfThreads) {
  const Workers workers(4);
  std::vector<std::atomic<int>> runs(1000);
  std::atomic<unsigned> highest_worker{0};
  workers.for_each(runs.size(), [&](std::size_t i, unsigned worker) {
    ++runs[i];
    unsigned seen = highest_worker.load();
    while (worker > seen && !highest_worker.compare_exchange_weak(seen, worker)) {
    }
  });
  for (const auto& r : runs) EXPECT_EQ(r.load(), 1);
  EXPECT_LT(highest_worker.load(), 4u);
}

TEST(Workers, OneWorkerRunsInOrderOnTheCallingThread) {
  const Workers workers(1);
  std::vector<std::size_t> order;
  const auto caller = std::this_thread::get_id();
  workers.for_each(5, [&](std::size_t i, unsigned worker) {
    EXPECT_EQ(worker, 0u);
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(i);
  });
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2, 3, 4}));
}

TEST(Workers, AFailingItemStopsTheLoopAndRethrowsItsException) {
  const Workers workers(3);
  std::atomic<std::size_t> ran{0};
  EXPECT_THROW(workers.for_each(100000,
                                [&](std::size_t i, unsigned) {
                                  ++ran;
                                  if (i == 10) throw std::runtime_error("item 10");
                                }),
               std::runtime_error);
  EXPECT_LT(ran.load(), 100000u);  // the rest were skipped
}

TEST(Workers, PerWorkerStateIsBuiltOncePerWorkerThatUsesIt) {
  const Workers workers(3);
  std::atomic<int> built{0};
  PerWorker<std::vector<std::size_t>> seen(workers, [&] {
    ++built;
    return std::vector<std::size_t>{};
  });
  workers.for_each(300, [&](std::size_t i, unsigned worker) { seen.local(worker).push_back(i); });
  const int built_by_the_loop = built.load();
  EXPECT_GE(built_by_the_loop, 1);
  EXPECT_LE(built_by_the_loop, 3);
  std::size_t total = 0;
  for (unsigned w = 0; w < workers.count(); ++w) total += seen.local(w).size();
  EXPECT_EQ(total, 300u);  // no item was lost to another worker's state
}

}  // namespace
}  // namespace kvlint
