#include "tools/kvlint/engine/token_summary.hpp"

#include <string.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

namespace kvlint {
namespace {

// Calls on_run(begin, end) for each maximal run of identifier bytes in `text`, in order, until it
// returns false; false then.
template <typename OnRun>
bool each_identifier_run(std::string_view text, const OnRun& on_run) {
  for (std::size_t at = 0; at < text.size();) {
    if (!is_identifier_byte(text[at])) {
      ++at;
      continue;
    }
    std::size_t end = at + 1;
    while (end < text.size() && is_identifier_byte(text[end])) ++end;
    if (!on_run(at, end)) return false;
    at = end;
  }
  return true;
}

}  // namespace

std::string token_summary(std::string_view content) {
  // The distinct tokens first, in an open-addressed set of views, and only they are sorted: a
  // file repeats its tokens many times, and sorting every occurrence took 4.5 G instructions, a
  // tenth of a cold run on the bench corpus (callgrind, -j1). Each token is hashed as it is
  // scanned, and a slot keeps the hash, so a probe compares bytes only on equal hashes: the
  // summaries were still 2.2 G of that run with a hash pass and a compare per probe.
  struct Slot {
    const char* data = nullptr;  // empty slot: null
    std::uint32_t size = 0;
    std::uint32_t hash = 0;
  };
  std::vector<Slot> slots(256);
  std::size_t used = 0;
  auto place = [](std::vector<Slot>& table, const Slot& token) {
    const std::size_t mask = table.size() - 1;
    for (std::size_t i = token.hash & mask;; i = (i + 1) & mask) {
      Slot& slot = table[i];
      if (slot.data == nullptr) {
        slot = token;
        return true;
      }
      if (slot.hash == token.hash && slot.size == token.size &&
          std::memcmp(slot.data, token.data, token.size) == 0)
        return false;
    }
  };
  static constexpr auto kIdentifier = [] {
    std::array<bool, 256> table{};
    for (std::size_t c = 0; c < 256; ++c) table[c] = is_identifier_byte(static_cast<char>(c));
    return table;
  }();
  const auto* bytes = reinterpret_cast<const unsigned char*>(content.data());
  const std::size_t n = content.size();
  for (std::size_t at = 0; at < n;) {
    if (!kIdentifier[bytes[at]]) {
      ++at;
      continue;
    }
    const std::size_t begin = at;
    std::uint32_t hash = 2166136261u;  // FNV-1a, folded at the end so the low bits mix
    for (; at < n && kIdentifier[bytes[at]]; ++at) hash = (hash ^ bytes[at]) * 16777619u;
    hash ^= hash >> 15;
    const Slot token{content.data() + begin, static_cast<std::uint32_t>(at - begin), hash};
    if (place(slots, token) && ++used * 2 > slots.size()) {
      std::vector<Slot> larger(slots.size() * 2);
      for (const Slot& t : slots)
        if (t.data != nullptr) place(larger, t);
      slots = std::move(larger);
    }
  }
  // Sorted by their first eight bytes as one big-endian number first (no token holds a NUL, so
  // the zeros that pad a short one order it as the bytes do), the bytes only on a tie.
  std::vector<std::pair<std::uint64_t, std::string_view>> keyed;
  keyed.reserve(used);
  for (const Slot& t : slots) {
    if (t.data == nullptr) continue;
    std::uint64_t key = 0;
    for (std::size_t i = 0; i < 8; ++i)
      key = (key << 8) | (i < t.size ? static_cast<unsigned char>(t.data[i]) : 0u);
    keyed.emplace_back(key, std::string_view(t.data, t.size));
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::string_view> tokens;
  tokens.reserve(used);
  for (const auto& [key, token] : keyed) tokens.push_back(token);
  std::size_t size = 1;
  for (std::string_view t : tokens) size += t.size() + 1;
  std::string out;
  out.reserve(size);
  out += '\0';
  for (std::string_view t : tokens) {
    out += t;
    out += '\0';
  }
  return out;
}

bool summary_may_contain(std::string_view summary, std::string_view needle, NeedleSearch::Start start) {
  auto contains = [&](std::string_view piece) {
    return ::memmem(summary.data(), summary.size(), piece.data(), piece.size()) != nullptr;
  };
  std::string piece;
  return each_identifier_run(needle, [&](std::size_t at, std::size_t end) {
    // A run after another byte of the needle starts a token, and one before another byte ends
    // it; a leading run starts one too where the search counts only word starts.
    const bool starts_token = at > 0 || start == NeedleSearch::Start::WordStart;
    const bool ends_token = end < needle.size();
    piece.clear();
    if (starts_token) piece += '\0';
    piece.append(needle.substr(at, end - at));
    if (ends_token) piece += '\0';
    return contains(piece);
  });
}

}  // namespace kvlint

namespace kvlint {

TokenSummary TokenSummary::packed(std::shared_ptr<const TokenDictionary> dictionary, std::string ids) {
  TokenSummary out;
  out.text_.clear();
  out.dictionary_ = std::move(dictionary);
  out.ids_ = std::move(ids);
  return out;
}

std::string_view TokenSummary::text(std::string& scratch) const {
  if (!dictionary_) return text_;
  // Ids follow the dictionary's order (the commonest tokens first), the text the tokens' own.
  std::vector<std::string_view> tokens;
  each_packed_id(ids_, dictionary_->size(),
                 [&](std::size_t id) { tokens.push_back(dictionary_->token(id)); });
  std::sort(tokens.begin(), tokens.end());
  scratch.assign(1, '\0');
  for (std::string_view t : tokens) {
    scratch += t;
    scratch += '\0';
  }
  return scratch;
}

bool TokenSummary::operator==(const TokenSummary& other) const {
  if (dictionary_ && dictionary_ == other.dictionary_) return ids_ == other.ids_;
  std::string mine;
  std::string theirs;
  return text(mine) == other.text(theirs);
}

void append_packed_id(std::string& ids, std::size_t gap) {
  std::uint64_t value = gap;
  while (value >= 0x80) {
    ids += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  ids += static_cast<char>(value);
}

}  // namespace kvlint
