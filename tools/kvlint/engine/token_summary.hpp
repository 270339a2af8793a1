// A file's identifier tokens, kept compactly so the widening stage's text searches can be
// answered without the file's bytes: every maximal run of identifier bytes (is_identifier_byte),
// unique and sorted, as "\0tok1\0tok2\0...\0". A search whose needle's identifier runs are not
// all in the summary cannot match the bytes (each occurrence of a run lies inside one token),
// so "no" is exact; "maybe" is confirmed on the bytes.
//
// The file index persists summaries packed (TokenSummary::packed): one dictionary of the
// tokens of every file it holds, and per file the ids of its tokens, delta-coded varints. On
// transformers most tokens recur across files (67k distinct among 1M per-file tokens), so the
// index and the warm run's memory hold each once; a packed summary is spelled out only when a
// search asks it, and answers exactly as the spelled-out one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tools/kvlint/engine/needle_search.hpp"

namespace kvlint {

// The summary of `content`.
std::string token_summary(std::string_view content);

// Whether bytes summarised by `summary` may contain `needle` (where `start` lets it start):
// false only when they cannot.
bool summary_may_contain(std::string_view summary, std::string_view needle,
                         NeedleSearch::Start start = NeedleSearch::Start::Anywhere);

// Distinct tokens, each with an id (its position); shared by the packed summaries of one index.
class TokenDictionary {
 public:
  std::size_t size() const { return ends_.size(); }
  std::string_view token(std::size_t id) const {
    const std::size_t begin = id == 0 ? 0 : ends_[id - 1];
    return std::string_view(bytes_).substr(begin, ends_[id] - begin);
  }
  void add(std::string_view token) {
    bytes_ += token;
    ends_.push_back(static_cast<std::uint32_t>(bytes_.size()));
  }

 private:
  std::string bytes_;                // the tokens, back to back
  std::vector<std::uint32_t> ends_;  // where each ends in bytes_
};

// A summary as made from the bytes (its text) or as the file index holds it (packed).
class TokenSummary {
 public:
  TokenSummary() : text_(1, '\0') {}
  explicit TokenSummary(std::string text) : text_(std::move(text)) {}
  // `ids`: the varint gaps between the ascending ids of the file's tokens in `dictionary`,
  // the first from 0 (checked by the decoder against the dictionary's size).
  static TokenSummary packed(std::shared_ptr<const TokenDictionary> dictionary, std::string ids);

  // The "\0tok1\0...\0" text: this summary's own, or spelled out into `scratch`.
  std::string_view text(std::string& scratch) const;
  bool is_packed() const { return dictionary_ != nullptr; }
  const std::shared_ptr<const TokenDictionary>& dictionary() const { return dictionary_; }
  const std::string& ids() const { return ids_; }

  bool operator==(const TokenSummary& other) const;

 private:
  std::string text_;                                   // when not packed
  std::shared_ptr<const TokenDictionary> dictionary_;  // when packed
  std::string ids_;
};

// Calls on_id(id) for each id of packed `ids`, ascending; false when they are malformed (a
// varint cut short or too long, an id at or past `limit`).
template <typename OnId>
bool each_packed_id(std::string_view ids, std::size_t limit, const OnId& on_id) {
  std::uint64_t id = 0;
  bool first = true;
  for (std::size_t at = 0; at < ids.size();) {
    std::uint64_t gap = 0;
    int shift = 0;
    while (true) {
      if (at >= ids.size() || shift > 35) return false;
      const auto byte = static_cast<unsigned char>(ids[at++]);
      gap |= std::uint64_t{byte & 0x7fu} << shift;
      shift += 7;
      if ((byte & 0x80u) == 0) break;
    }
    if (!first && gap == 0) return false;  // ascending: no repeats
    id += gap;
    first = false;
    if (id >= limit) return false;
    on_id(static_cast<std::size_t>(id));
  }
  return true;
}

// Appends id - previous (previous: the last id appended, or 0 for the first) as a varint.
void append_packed_id(std::string& ids, std::size_t gap);

}  // namespace kvlint
