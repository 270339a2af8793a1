// FileFacts <-> a compact binary form, for the per-file facts cache: the facts of a
// pre-commit-sized run's project context are read back from it on every run, and decoding
// them through a JSON DOM was half of such a run. Positional (the fields in fields.hpp's
// order, no names), varint integers, length-prefixed strings, a location's file written only
// when it is not the facts' own path, and each distinct guard written once (later uses name
// it by index), so a decoded file's facts share their guards and path as facts::compact
// leaves them. Not a stable interchange format: the cache key holds the binary's identity,
// so bytes are only ever read by the build that wrote them; `kvlint facts` prints JSON.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "analyzers/facts/facts.hpp"

namespace kvlint::facts {

// Malformed bytes: truncated, a count beyond what is left, an unknown enum value, trailing data.
class BinaryFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class BinaryWriter {
 public:
  void varint(std::uint64_t value) {
    while (value >= 0x80) {
      bytes_ += static_cast<char>((value & 0x7f) | 0x80);
      value >>= 7;
    }
    bytes_ += static_cast<char>(value);
  }
  void text(std::string_view s) {
    varint(s.size());
    bytes_ += s;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

// Reads what a BinaryWriter wrote; every read checks what is left and throws
// BinaryFormatError instead of reading past the end or allocating beyond the input's size.
class BinaryReader {
 public:
  explicit BinaryReader(std::string_view bytes) : bytes_(bytes) {}
  explicit BinaryReader(std::string&&) = delete;  // it reads the bytes in place: they must outlive it
  std::uint64_t varint() {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ >= bytes_.size()) throw BinaryFormatError("truncated");
      const auto byte = static_cast<unsigned char>(bytes_[at_++]);
      if (shift == 63 && byte > 1) throw BinaryFormatError("varint overflow");
      value |= std::uint64_t{byte & 0x7fu} << shift;
      if (!(byte & 0x80)) return value;
    }
    throw BinaryFormatError("varint overflow");
  }
  std::uint32_t u32() {
    const std::uint64_t value = varint();
    if (value > UINT32_MAX) throw BinaryFormatError("value out of range");
    return static_cast<std::uint32_t>(value);
  }
  bool flag() {
    const std::uint64_t value = varint();
    if (value > 1) throw BinaryFormatError("not a flag");
    return value == 1;
  }
  // A count of items that each take at least one byte: never more than the bytes left.
  std::size_t count() {
    const std::uint64_t n = varint();
    if (n > left()) throw BinaryFormatError("count beyond the input");
    return static_cast<std::size_t>(n);
  }
  std::string_view text() {
    const std::size_t n = count();
    const std::string_view s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }
  std::size_t left() const { return bytes_.size() - at_; }

 private:
  std::string_view bytes_;
  std::size_t at_ = 0;
};

void write_file_facts(BinaryWriter& out, const FileFacts& facts);
// Throws BinaryFormatError on malformed bytes.
FileFacts read_file_facts(BinaryReader& in);

}  // namespace kvlint::facts
