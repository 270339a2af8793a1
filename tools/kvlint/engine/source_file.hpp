// Reading one source file: size limit, binary detection, UTF-8 validation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "rules/finding.hpp"

namespace kvlint {

inline constexpr std::size_t kMaxSourceBytes = 16u * 1024u * 1024u;

struct Utf8Error {
  std::size_t offset = 0;  // byte offset of the first invalid byte
  uint32_t line = 0;       // 1-based
  uint32_t column = 0;     // 1-based, in bytes
};

// The first invalid UTF-8 sequence (overlongs, surrogates and code points
// above U+10FFFF are invalid), or nullopt when `bytes` is valid UTF-8.
std::optional<Utf8Error> find_invalid_utf8(std::string_view bytes);

// Outcome of reading a file: its bytes, or the Diagnostic that explains why
// it is skipped ("read-error", "too-large", "binary", "invalid-utf8").
struct ReadOutcome {
  std::string content;
  std::optional<Diagnostic> problem;
};

// `display` is the path as shown to the user (Diagnostic::path).
ReadOutcome read_source(const std::filesystem::path& path, const std::string& display,
                        std::size_t max_bytes = kMaxSourceBytes);

// XXH3-64 of a regular file's bytes and their count, read through a fixed buffer (nothing
// kept, nothing allocated per file), or nullopt when it cannot be read as one, or holds more
// than `max_bytes`. For checking that a file still holds the bytes an earlier read hashed.
struct FileHash {
  std::uint64_t hash = 0;
  std::size_t size = 0;
};
std::optional<FileHash> hash_regular_file(const std::filesystem::path& path,
                                          std::size_t max_bytes = kMaxSourceBytes);

}  // namespace kvlint
