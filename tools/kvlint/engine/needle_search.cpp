// NeedleSearch (needle_search.hpp).
#include "tools/kvlint/engine/needle_search.hpp"

#include <string.h>

#include <algorithm>
#include <cstring>

namespace kvlint {
namespace {

uint16_t window_hash(const char* at) {
  uint32_t word;
  std::memcpy(&word, at, sizeof word);
  return static_cast<uint16_t>((word * 0x9E3779B1u) >> 16);
}

}  // namespace

NeedleSearch::NeedleSearch(std::vector<std::string> needles, Start start)
    : needles_(std::move(needles)), start_(start) {
  std::erase_if(needles_, [](const std::string& n) { return n.empty(); });
  std::size_t shortest = SIZE_MAX;
  for (const auto& n : needles_) shortest = std::min(shortest, n.size());
  if (needles_.empty() || shortest < kWindow || shortest - kWindow + 1 > UINT16_MAX) return;
  // Any occurrence of a needle of length L covers L - 3 window starts; sampling every
  // (shortest - 3) bytes lands on at least one of them.
  stride_ = shortest - kWindow + 1;
  present_.assign((1u << 16) / 64, 0);
  for (uint32_t i = 0; i < needles_.size(); ++i)
    for (std::size_t k = 0; k + kWindow <= needles_[i].size() && k <= UINT16_MAX; ++k) {
      const uint16_t h = window_hash(needles_[i].data() + k);
      windows_.push_back({h, static_cast<uint16_t>(k), i});
      present_[h >> 6] |= uint64_t{1} << (h & 63);
    }
  std::sort(windows_.begin(), windows_.end(),
            [](const Window& a, const Window& b) { return a.hash < b.hash; });
}

bool NeedleSearch::starts_here(std::string_view text, std::size_t at, const std::string& needle) const {
  return start_ == Start::Anywhere || at == 0 || !is_identifier_byte(needle.front()) ||
         !is_identifier_byte(text[at - 1]);
}

std::size_t NeedleSearch::find(std::string_view text, std::size_t from) const {
  if (stride_ != 0) return find_sampled(text, from);
  std::size_t best = std::string_view::npos;
  for (const auto& n : needles_) {
    // The first occurrence at or after `from` that may start where it is, before `best`.
    for (std::size_t at = from; at < text.size();) {
      const std::size_t limit =
          best == std::string_view::npos ? text.size() : std::min(text.size(), best + n.size());
      if (at >= limit) break;
      const void* hit = ::memmem(text.data() + at, limit - at, n.data(), n.size());
      if (!hit) break;
      const auto found = static_cast<std::size_t>(static_cast<const char*>(hit) - text.data());
      if (starts_here(text, found, n)) {
        best = found;
        break;
      }
      at = found + 1;
    }
  }
  return best;
}

std::size_t NeedleSearch::find_sampled(std::string_view text, std::size_t from) const {
  const char* data = text.data();
  const std::size_t size = text.size();
  for (std::size_t at = from; at + kWindow <= size; at += stride_) {
    const uint16_t h = window_hash(data + at);
    if (!(present_[h >> 6] >> (h & 63) & 1)) continue;
    auto it = std::lower_bound(windows_.begin(), windows_.end(), h,
                               [](const Window& w, uint16_t value) { return w.hash < value; });
    std::size_t best = std::string_view::npos;
    for (; it != windows_.end() && it->hash == h; ++it) {
      if (at < from + it->offset) continue;  // would start before `from`
      const std::size_t start = at - it->offset;
      const std::string& n = needles_[it->needle];
      if (start + n.size() <= size && std::memcmp(data + start, n.data(), n.size()) == 0 &&
          starts_here(text, start, n))
        best = std::min(best, start);
    }
    if (best != std::string_view::npos) return best;
  }
  return std::string_view::npos;
}

}  // namespace kvlint
