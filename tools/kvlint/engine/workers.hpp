// The worker threads of one check run's parallel loops. kvlint's loops are a
// handful per run and coarse (one file per item), so plain threads that take
// the next item from a shared counter balance them as well as a task scheduler
// would, and the installed binary needs no shared threading library (Debian
// ships libtbb only as a shared object).
#pragma once

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace kvlint {

// The CPUs this process may run on (its affinity mask, which containers and
// `taskset` narrow), at least 1.
inline unsigned available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return static_cast<unsigned>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

class Workers {
 public:
  explicit Workers(unsigned count) : count_(std::max(1u, count)) {}
  unsigned count() const { return count_; }

  // Calls body(item, worker) for every item in [0, items), worker in
  // [0, count()); the calling thread is worker 0. Items are handed out one at a
  // time, so one slow file never holds back a block of others. If a body
  // throws, the items not yet started are skipped and the first exception is
  // rethrown once every thread has stopped.
  template <typename Body>
  void for_each(std::size_t items, const Body& body) const {
    const auto threads = static_cast<unsigned>(std::min<std::size_t>(count_, items));
    if (threads <= 1) {
      for (std::size_t i = 0; i < items; ++i) body(i, 0u);
      return;
    }
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex error_mutex;
    std::exception_ptr first_error;
    auto work = [&](unsigned worker) {
      try {
        while (!failed.load(std::memory_order_relaxed)) {
          const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
          if (i >= items) break;
          body(i, worker);
        }
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
        failed = true;
      }
    };
    {
      std::vector<std::jthread> helpers;  // joined when this scope ends, also on a throw
      helpers.reserve(threads - 1);
      for (unsigned worker = 1; worker < threads; ++worker) helpers.emplace_back(work, worker);
      work(0);
    }
    if (first_error) std::rethrow_exception(first_error);
  }

 private:
  unsigned count_;
};

// One T per worker, built on the worker's first use (a parser and its state).
template <typename T>
class PerWorker {
 public:
  PerWorker(const Workers& workers, std::function<T()> make)
      : slots_(workers.count()), make_(std::move(make)) {}
  // Only worker `worker` may call this with its own index while a loop runs.
  T& local(unsigned worker) {
    auto& slot = slots_.at(worker);
    if (!slot) slot.emplace(make_());
    return *slot;
  }

 private:
  std::vector<std::optional<T>> slots_;
  std::function<T()> make_;
};

}  // namespace kvlint
