#include "allocation_tracker.hpp"

#include <c10/core/CPUAllocator.h>
#include <execinfo.h>

#include <algorithm>
#include <cstring>

namespace kvlint::model_host {

// What the wrapped DataPtr's context points at: the base allocator's DataPtr (which frees the
// memory when destroyed) and the tracker to tell.
struct AllocationTracker::Holder {
  c10::DataPtr original;
  AllocationTracker* tracker;
};

void AllocationTracker::install() {
  void* warm[1];
  ::backtrace(warm, 1);  // the first call loads libgcc_s; do it before any allocation is traced
  // Priority above the default allocator's registration (0), so GetCPUAllocator() returns this.
  c10::SetCPUAllocator(this, /*priority=*/100);
}

void AllocationTracker::set_plugin_ranges(std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges) {
  std::lock_guard lock(mutex_);
  plugin_ranges_ = std::move(ranges);
}

c10::DataPtr AllocationTracker::allocate(std::size_t n) {
  c10::DataPtr original = base_->allocate(n);
  void* data = original.get();
  const c10::Device device = original.device();
  record(data, n, /*in_capture=*/false);
  auto* holder = new Holder{std::move(original), this};
  return c10::DataPtr(data, holder, &AllocationTracker::release, device);
}

void AllocationTracker::record(const void* data, std::size_t bytes, bool in_capture) {
  std::array<void*, 64> stack{};
  const int depth = ::backtrace(stack.data(), static_cast<int>(stack.size()));
  std::lock_guard lock(mutex_);
  LiveAllocation allocation{data, bytes, ++sequence_, {}, 0, in_capture};
  for (int i = 1; i < depth && allocation.frame_count < allocation.frames.size(); ++i) {
    const auto address = reinterpret_cast<std::uintptr_t>(stack[static_cast<std::size_t>(i)]);
    const bool in_plugin = std::any_of(plugin_ranges_.begin(), plugin_ranges_.end(), [&](const auto& range) {
      return address >= range.first && address < range.second;
    });
    if (in_plugin) allocation.frames[allocation.frame_count++] = address;
  }
  if (data != nullptr) live_[data] = allocation;
}

void AllocationTracker::release(void* context) {
  auto* holder = static_cast<Holder*>(context);
  holder->tracker->forget(holder->original.get());
  delete holder;  // frees the memory through the base allocator's deleter
}

void AllocationTracker::forget(const void* data) {
  std::lock_guard lock(mutex_);
  live_.erase(data);
}

void AllocationTracker::copy_data(void* dest, const void* src, std::size_t count) const {
  if (count > 0) std::memcpy(dest, src, count);
}

std::uint64_t AllocationTracker::sequence() const {
  std::lock_guard lock(mutex_);
  return sequence_;
}

std::vector<LiveAllocation> AllocationTracker::live() const {
  std::lock_guard lock(mutex_);
  std::vector<LiveAllocation> out;
  out.reserve(live_.size());
  for (const auto& [data, record] : live_) out.push_back(record);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.sequence < b.sequence; });
  return out;
}

bool AllocationTracker::find(const void* data, LiveAllocation& out) const {
  std::lock_guard lock(mutex_);
  auto it = live_.find(data);
  if (it == live_.end()) return false;
  out = it->second;
  return true;
}

}  // namespace kvlint::model_host
