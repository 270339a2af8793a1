#include "tools/kvlint/engine/source_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "analyzers/facts/line_ends.hpp"

namespace kvlint {
namespace {

// Owns a file descriptor.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

Diagnostic make_problem(const std::string& display, std::string kind, std::string message, uint32_t line = 0,
                        uint32_t column = 0) {
  Diagnostic d;
  d.path = display;
  d.kind = std::move(kind);
  d.message = std::move(message);
  d.line = line;
  d.column = column;
  return d;
}

}  // namespace

std::optional<Utf8Error> find_invalid_utf8(std::string_view bytes) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t n = bytes.size();
  std::size_t i = 0;
  while (i < n) {
    // ASCII runs (nearly all of a source file) eight bytes at a time.
    while (i + 8 <= n) {
      uint64_t word;
      std::memcpy(&word, s + i, sizeof word);
      if (word & 0x8080808080808080ULL) break;
      i += 8;
    }
    if (i >= n) break;
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = 0;
    uint32_t min_code = 0;
    uint32_t code = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2, min_code = 0x80, code = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3, min_code = 0x800, code = c & 0x0Fu;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4, min_code = 0x10000, code = c & 0x07u;
    }
    bool valid = length != 0 && i + length <= n;
    for (std::size_t k = 1; valid && k < length; ++k) {
      if ((s[i + k] & 0xC0u) != 0x80u)
        valid = false;
      else
        code = (code << 6) | (s[i + k] & 0x3Fu);
    }
    if (valid && (code < min_code || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))) valid = false;
    if (!valid) {
      // Line and column only for the error, with lines ending as everywhere else in kvlint
      // ("\r\n", "\n" or a lone "\r"); `i` is a non-ASCII byte, never inside a line end.
      uint32_t line = 1;
      std::size_t line_start = 0;
      for (std::size_t next = facts::next_line_start(bytes, 0); next <= i;
           next = facts::next_line_start(bytes, next)) {
        ++line;
        line_start = next;
      }
      return Utf8Error{i, line, static_cast<uint32_t>(i - line_start + 1)};
    }
    i += length;
  }
  return std::nullopt;
}

ReadOutcome read_source(const std::filesystem::path& path, const std::string& display,
                        std::size_t max_bytes) {
  ReadOutcome out;
  // O_NONBLOCK: opening a FIFO named on the command line must not wait for a
  // writer (it is rejected below as not a regular file); reads of a regular
  // file ignore the flag.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    out.problem = make_problem(display, "read-error", fmt::format("cannot open: {}", std::strerror(errno)));
    return out;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    out.problem = make_problem(display, "read-error", fmt::format("cannot stat: {}", std::strerror(errno)));
    return out;
  }
  if (!S_ISREG(st.st_mode)) {
    out.problem = make_problem(display, "read-error", "not a regular file");
    return out;
  }
  if (static_cast<std::size_t>(st.st_size) > max_bytes) {
    out.problem = make_problem(display, "too-large",
                               fmt::format("file is {} bytes, over the {} byte limit; skipped",
                                           static_cast<long long>(st.st_size), max_bytes));
    return out;
  }
  // One byte past the size fstat gave, so an unchanged file reads to EOF without growing
  // the buffer (doubling it would hold twice each file's bytes for the whole run).
  out.content.resize(static_cast<std::size_t>(st.st_size) + 1);
  std::size_t got = 0;
  // Read until EOF: the file may have grown or shrunk since fstat.
  while (true) {
    if (got == out.content.size()) {
      if (out.content.size() > max_bytes) break;
      out.content.resize(std::max<std::size_t>(out.content.size() * 2, 4096));
    }
    const ssize_t r = ::read(fd.get(), out.content.data() + got, out.content.size() - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      out.problem = make_problem(display, "read-error", fmt::format("cannot read: {}", std::strerror(errno)));
      out.content.clear();
      return out;
    }
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  out.content.resize(got);
  if (got > max_bytes) {
    out.problem =
        make_problem(display, "too-large", fmt::format("file is over the {} byte limit; skipped", max_bytes));
    out.content.clear();
    return out;
  }
  if (const auto nul = out.content.find('\0'); nul != std::string::npos) {
    out.problem =
        make_problem(display, "binary", fmt::format("NUL byte at offset {}: not a text file; skipped", nul));
    out.content.clear();
    return out;
  }
  if (const auto bad = find_invalid_utf8(out.content)) {
    out.problem = make_problem(display, "invalid-utf8",
                               fmt::format("invalid UTF-8 at byte offset {} (line {}, column {}); skipped",
                                           bad->offset, bad->line, bad->column),
                               bad->line, bad->column);
    out.content.clear();
    return out;
  }
  return out;
}

std::optional<FileHash> hash_regular_file(const std::filesystem::path& path, std::size_t max_bytes) {
  // The same open as read_source: a FIFO must not block the run.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  struct stat st {};
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  XXH3_state_t state;
  XXH3_INITSTATE(&state);
  XXH3_64bits_reset(&state);
  FileHash out;
  char buffer[1 << 16];
  while (true) {
    const ssize_t r = ::read(fd.get(), buffer, sizeof buffer);
    if (r < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;
    }
    if (r == 0) break;
    out.size += static_cast<std::size_t>(r);
    if (out.size > max_bytes) return std::nullopt;
    XXH3_64bits_update(&state, buffer, static_cast<std::size_t>(r));
  }
  out.hash = XXH3_64bits_digest(&state);
  return out;
}

}  // namespace kvlint
