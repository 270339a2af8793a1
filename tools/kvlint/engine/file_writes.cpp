// Atomic writes (temp file in the same directory, optional fsync, rename), writes in place
// where a rename would be wrong, and keeping a replaced source file's owner, group and mode.
#include "tools/kvlint/engine/file_writes.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <span>
#include <vector>

namespace kvlint {
namespace fs = std::filesystem;

namespace {

// Writes all of `pieces`, in order, a batch of them per writev; false with errno set on failure.
bool write_all(int fd, std::span<const std::string_view> pieces) {
  std::vector<iovec> batch;
  std::size_t next = 0;    // the first piece not yet written whole
  std::size_t offset = 0;  // bytes of it already written
  while (next < pieces.size()) {
    batch.clear();
    for (std::size_t k = next; k < pieces.size() && batch.size() < IOV_MAX; ++k) {
      const std::size_t skip = k == next ? offset : 0;
      if (pieces[k].size() > skip)
        batch.push_back({const_cast<char*>(pieces[k].data() + skip), pieces[k].size() - skip});
    }
    if (batch.empty()) break;
    const ssize_t w = ::writev(fd, batch.data(), static_cast<int>(batch.size()));
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    auto left = static_cast<std::size_t>(w);
    while (next < pieces.size() && pieces[next].size() - offset <= left) {
      left -= pieces[next].size() - offset;
      offset = 0;
      ++next;
    }
    offset += left;
  }
  return true;
}

}  // namespace

namespace {

// What a replacement must carry over from the file it replaces (write_source_file).
struct KeptAttributes {
  uid_t uid = 0;
  gid_t gid = 0;
  mode_t mode = 0;
  bool owner_refused = false;  // set when the replacement could not be given uid and gid
};

bool write_atomically(const fs::path& target, std::span<const std::string_view> content, std::string& error,
                      Durability durability, KeptAttributes* keep) {
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string templ = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(templ.data());
  if (fd < 0) {
    error = fmt::format("{}: cannot create a temporary file in {}: {}", target.string(), dir.string(),
                        std::strerror(errno));
    return false;
  }
  auto fail = [&](std::string_view what) {
    error = fmt::format("{}: {}: {}", target.string(), what, std::strerror(errno));
    ::close(fd);
    ::unlink(templ.c_str());
    return false;
  };
  if (!write_all(fd, content)) return fail("write failed");
  if (keep != nullptr) {
    // Owner before mode: chown clears the set-user-ID and set-group-ID bits.
    if (::fchown(fd, keep->uid, keep->gid) != 0) {
      keep->owner_refused = true;
      return fail("cannot give the replacement the file's owner and group");
    }
    ::fchmod(fd, keep->mode & 07777);
  } else {
    // mkstemp creates 0600; give the file the usual mode.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, 0666 & ~mask);
  }
  if (durability == Durability::Synced && ::fsync(fd) != 0) return fail("fsync failed");
  if (::close(fd) != 0) {
    error = fmt::format("{}: close failed: {}", target.string(), std::strerror(errno));
    ::unlink(templ.c_str());
    return false;
  }
  if (::rename(templ.c_str(), target.c_str()) != 0) {
    error = fmt::format("{}: cannot replace: {}", target.string(), std::strerror(errno));
    ::unlink(templ.c_str());
    return false;
  }
  if (durability == Durability::Unsynced) return true;
  // Make the rename durable.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return true;
}

}  // namespace

bool write_file_atomically(const fs::path& target, std::string_view content, std::string& error,
                           Durability durability) {
  return write_atomically(target, std::span(&content, 1), error, durability, nullptr);
}

bool write_file_atomically(const fs::path& target, const std::vector<std::string_view>& pieces,
                           std::string& error, Durability durability) {
  return write_atomically(target, pieces, error, durability, nullptr);
}

namespace {

bool is_under_proc(const fs::path& path) {
  const std::string text = path.string();
  return text == "/proc" || text.starts_with("/proc/");
}

// Whether resolving `target` goes through /proc, as /dev/stdout, /dev/fd/N and
// bash's `>(cmd)` do: such a name stands for an open file description, so it
// must be opened, never replaced.
bool resolves_through_proc(fs::path path) {
  constexpr int kMaxLinks = 40;  // as the kernel's ELOOP limit
  std::error_code ec;
  path = fs::absolute(path, ec);
  for (int hop = 0; hop < kMaxLinks && !ec; ++hop) {
    const fs::path parent = fs::canonical(path.parent_path(), ec);
    if (ec) return false;
    if (is_under_proc(parent) || is_under_proc(path)) return true;
    if (!fs::is_symlink(fs::symlink_status(path, ec))) return false;
    const fs::path next = fs::read_symlink(path, ec);
    path = next.is_absolute() ? next : parent / next;
  }
  return false;
}

// Appends (a redirection's file), truncates (a source file kept in place) or writes from the
// start (a device, FIFO or socket).
enum class InPlace { Write, Append, Truncate };

bool write_in_place(const fs::path& target, InPlace how, std::string_view content, std::string& error) {
  const int fd =
      ::open(target.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | (how == InPlace::Append ? O_APPEND : 0) |
                                 (how == InPlace::Truncate ? O_TRUNC : 0));
  if (fd < 0) {
    error = fmt::format("{}: cannot open for writing: {}", target.string(), std::strerror(errno));
    return false;
  }
  if (!write_all(fd, std::span(&content, 1))) {
    error = fmt::format("{}: write failed: {}", target.string(), std::strerror(errno));
    ::close(fd);
    return false;
  }
  if (::close(fd) != 0 && errno != EINTR) {
    error = fmt::format("{}: close failed: {}", target.string(), std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace

bool write_output_file(const fs::path& target, std::string_view content, std::string& error) {
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0) {
    // Nothing there yet (or a dangling link): create it atomically.
    if (errno == ENOENT) return write_file_atomically(target, content, error);
    error = fmt::format("{}: {}", target.string(), std::strerror(errno));
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    error = fmt::format("{}: is a directory", target.string());
    return false;
  }
  const bool through_proc = resolves_through_proc(target);
  if (!S_ISREG(st.st_mode) || through_proc) {
    // A device, FIFO, pipe or socket, or a shell redirection's file through
    // /dev/stdout: write where it points. Appending keeps what the shell
    // already wrote there (`{ echo; kvlint -o /dev/stdout; } >> log`).
    return write_in_place(target, S_ISREG(st.st_mode) ? InPlace::Append : InPlace::Write, content, error);
  }
  // A regular file, perhaps through links: replace the file, keep the links.
  std::error_code ec;
  const fs::path resolved = fs::canonical(target, ec);
  return write_file_atomically(ec ? target : resolved, content, error);
}

bool write_source_file(const fs::path& target, std::string_view content, std::string& error) {
  std::error_code ec;
  const fs::path resolved = fs::canonical(target, ec);
  const fs::path& file = ec ? target : resolved;
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    error = fmt::format("{}: {}", target.string(), std::strerror(errno));
    return false;
  }
  if (S_ISREG(st.st_mode) && st.st_nlink <= 1) {
    KeptAttributes keep{st.st_uid, st.st_gid, st.st_mode, false};
    if (write_atomically(file, std::span(&content, 1), error, Durability::Synced, &keep)) return true;
    if (!keep.owner_refused) return false;
    error.clear();  // someone else's file this process may write: written in place below
  }
  return write_in_place(file, InPlace::Truncate, content, error);
}

}  // namespace kvlint
