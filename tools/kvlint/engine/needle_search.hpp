// Finds any of a fixed set of byte strings in a text in one pass: the prefilter's anchor
// search. One memmem per needle read the text once per needle (about 25
// passes); this samples a 4-byte window every (shortest needle - 3) bytes and looks it up
// in a table of every needle's 4-byte windows, so an occurrence is always sampled once and
// most of the text is touched by one load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvlint {

// A byte of a source identifier: ASCII letter, digit, `_`, or any byte of a non-ASCII
// character (Python and C++ both allow those in names).
constexpr bool is_identifier_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

class NeedleSearch {
 public:
  // Where an occurrence may start. `WordStart`: a needle that begins with an identifier byte
  // counts only where the byte before it is none (`Graph(` in `nx.Graph(`, not in
  // `CUDAGraph(`); a needle beginning otherwise (`<Graph>`) counts anywhere.
  enum class Start { Anywhere, WordStart };
  // The sampled window: a needle shorter than this makes the search one memmem per needle.
  static constexpr std::size_t kWindow = 4;

  explicit NeedleSearch(std::vector<std::string> needles, Start start = Start::Anywhere);

  // Start of an occurrence of some needle at or after `from`; no occurrence starts before it
  // in an earlier line. npos when there is none.
  std::size_t find(std::string_view text, std::size_t from = 0) const;
  bool found_in(std::string_view text) const { return find(text) != std::string_view::npos; }

 private:
  struct Window {
    uint16_t hash;
    uint16_t offset;  // of the window in the needle
    uint32_t needle;
  };
  std::size_t find_sampled(std::string_view text, std::size_t from) const;
  bool starts_here(std::string_view text, std::size_t at, const std::string& needle) const;

  std::vector<std::string> needles_;
  std::vector<Window> windows_;    // sorted by hash
  std::vector<uint64_t> present_;  // bit per hash: some window has it (8 KiB: stays in L1)
  std::size_t stride_ = 0;         // 0: some needle is too short to sample; memmem each
  Start start_ = Start::Anywhere;
};

}  // namespace kvlint
