// A counting CPU allocator: wraps LibTorch's default one, and for every live allocation keeps its
// size, an allocation sequence number and the return addresses that lie inside the plugin, so live
// bytes can be attributed to the plugin source line that allocated them. On CUDA the caching
// allocator's trace callback (cuda_device.cpp) feeds it the device allocations the same way.
#pragma once

#include <c10/core/Allocator.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kvlint::model_host {

struct LiveAllocation {
  const void* data = nullptr;
  std::size_t bytes = 0;
  std::uint64_t sequence = 0;              // order of allocation (1, 2, ...)
  std::array<std::uintptr_t, 8> frames{};  // return addresses inside the plugin, innermost first
  std::uint8_t frame_count = 0;
  bool in_capture = false;  // made inside a CUDA-graph capture (the graph's private pool)
};

class AllocationTracker final : public c10::Allocator {
 public:
  explicit AllocationTracker(c10::Allocator* base) : base_(base) {}
  AllocationTracker(const AllocationTracker&) = delete;
  AllocationTracker& operator=(const AllocationTracker&) = delete;

  // Makes this the CPU allocator of the process (LibTorch's registry keeps the pointer: the
  // tracker must outlive every CPU tensor, so the host never destroys it before exiting).
  void install();
  // Address ranges of the plugin's loaded segments; only frames inside them are kept.
  void set_plugin_ranges(std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges);

  c10::DataPtr allocate(std::size_t n) override;
  void copy_data(void* dest, const void* src, std::size_t count) const override;

  // Records an allocation made elsewhere (the CUDA caching allocator) from the calling thread's
  // stack, and forgets it when it is freed.
  void record(const void* data, std::size_t bytes, bool in_capture);
  void forget(const void* data);

  std::uint64_t sequence() const;
  std::vector<LiveAllocation> live() const;
  // The live allocation whose memory starts at `data`, if the tracker made it.
  bool find(const void* data, LiveAllocation& out) const;

 private:
  struct Holder;
  static void release(void* context);

  c10::Allocator* base_;
  mutable std::mutex mutex_;
  std::uint64_t sequence_ = 0;
  std::unordered_map<const void*, LiveAllocation> live_;
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> plugin_ranges_;
};

}  // namespace kvlint::model_host
