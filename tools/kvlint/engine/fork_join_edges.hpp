// The happens-before edges of a fork/join parallel loop, told to ThreadSanitizer.
//
// The worker pool (Debian's TBB, or whatever library the build links) is not
// compiled with -fsanitize=thread, so TSan cannot see the synchronisation inside
// it: without these edges every result a worker writes and the caller reads
// after the loop would be reported as a race. The edges state exactly what any
// fork/join pool guarantees, and no more:
//   - everything the caller did before the loop happens before each task starts;
//   - everything each task did happens before the loop returns to the caller.
// Tasks get no edges between each other (each acquires only the fork, never
// another task's release), so a race between two workers is still reported.
// Outside a TSan build every member is an empty inline function.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define KVLINT_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KVLINT_THREAD_SANITIZER 1
#endif
#endif

#ifdef KVLINT_THREAD_SANITIZER
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace kvlint {

class ForkJoinEdges {
 public:
  ForkJoinEdges() = default;
  ForkJoinEdges(const ForkJoinEdges&) = delete;
  ForkJoinEdges& operator=(const ForkJoinEdges&) = delete;

  // The caller, just before handing tasks to the pool.
  void fork() { release(&forked_); }
  // Each task, first thing.
  void task_begins() { acquire(&forked_); }
  // Each task, last thing.
  void task_ends() { release(&joined_); }
  // The caller, once the pool says every task is done.
  void join() { acquire(&joined_); }

 private:
#ifdef KVLINT_THREAD_SANITIZER
  static void acquire(char* sync) { __tsan_acquire(sync); }
  static void release(char* sync) { __tsan_release(sync); }
#else
  static void acquire(char*) {}
  static void release(char*) {}
#endif
  // Two distinct addresses: TSan keys its synchronisation clocks by address.
  char forked_ = 0;
  char joined_ = 0;
};

}  // namespace kvlint
