// Trims one file's facts to what they hold, for the run that keeps every analysed file's
// facts until its rules have run (on a large tree those facts are the run's peak memory):
// vectors and strings keep no spare capacity (growth by push_back leaves up to half of
// one unused), every location that names the file shares one copy of its path
// (FilePath), and equal guards are one shared guard (the calls of a method under one `if`
// each carried a copy of it). The facts read the same afterwards; only their memory changes.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzers/facts/facts.hpp"
#include "analyzers/facts/fields.hpp"

namespace kvlint::facts {

// A file's distinct guards, found by value: each added guard gets the next index, `find` the
// index of an equal one added before (facts::compact and the binary codec make equal guards one).
// The guards added must outlive the index.
class GuardIndex {
 public:
  std::optional<std::size_t> find(const Guard& g) const {
    const auto bucket = by_hash_.find(hash(g));
    if (bucket != by_hash_.end())
      for (std::size_t i : bucket->second)
        if (*guards_[i] == g) return i;
    return std::nullopt;
  }
  std::size_t add(const Guard& g) {
    by_hash_[hash(g)].push_back(guards_.size());
    guards_.push_back(&g);
    return guards_.size() - 1;
  }

 private:
  static std::size_t hash(const Guard& g) {
    return std::hash<std::string>{}(g.condition.text) ^ (std::size_t{g.condition.loc.line} << 8) ^
           (std::size_t{g.condition.loc.column} << 40) ^ (static_cast<std::size_t>(g.origin) << 2) ^
           std::size_t{g.negated};
  }
  std::vector<const Guard*> guards_;
  std::unordered_map<std::size_t, std::vector<std::size_t>> by_hash_;
};

namespace compact_detail {

class Compactor {
 public:
  explicit Compactor(const std::string& path) : path_(path) {}

  void operator()(std::string& s) { s.shrink_to_fit(); }
  void operator()(Location& l) {
    if (l.file == path_) l.file = path_;
  }
  template <typename T>
  void operator()(std::vector<T>& v) {
    v.shrink_to_fit();
    for (auto& x : v) (*this)(x);
  }
  template <typename T>
  void operator()(std::optional<T>& o) {
    if (o) (*this)(*o);
  }
  // Numbers, flags and enums hold no memory of their own.
  template <class T>
  requires std::is_arithmetic_v<T> || std::is_enum_v<T>
  void operator()(T&) {}
  // Each guard becomes the file's one copy of an equal guard, compacted when first seen.
  void operator()(Guards& guards) {
    auto& list = guards.shared();
    list.shrink_to_fit();
    for (auto& shared : list) {
      // A guard the front end already shares is decided once.
      if (auto met = by_address_.find(shared.get()); met != by_address_.end()) {
        shared = met->second.second;
        continue;
      }
      std::shared_ptr<const Guard> original = shared;
      if (const auto equal = index_.find(*shared)) {
        shared = kept_[*equal];
      } else {
        Guard copy = *shared;
        (*this)(copy);
        shared = std::make_shared<const Guard>(std::move(copy));
        kept_.push_back(shared);
        index_.add(*shared);
      }
      by_address_.emplace(original.get(), std::make_pair(original, shared));
    }
  }
  template <HasFields T>
  void operator()(T& x) {
    fields(x, [&](auto&... parts) { all(parts...); });
  }

 private:
  template <typename... Parts>
  void all(Parts&... parts) {
    ((*this)(parts), ...);
  }
  FilePath path_;
  // The guards kept so far, by a hash of what tells them apart.
  std::vector<std::shared_ptr<const Guard>> kept_;  // by index_'s index
  GuardIndex index_;
  // What each guard met so far became (the front end's shared guards are met many times); the
  // original is held too, so its address cannot be reused for another guard while this runs.
  std::unordered_map<const Guard*, std::pair<std::shared_ptr<const Guard>, std::shared_ptr<const Guard>>>
      by_address_;
};

}  // namespace compact_detail

inline void compact(FileFacts& facts) {
  compact_detail::Compactor compactor(facts.path);
  compactor(facts);
}

}  // namespace kvlint::facts
