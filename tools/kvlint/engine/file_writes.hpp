// Atomic and attribute-keeping file writes: the cache's files, reports (-o FILE) and the
// sources `--fix` changes.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kvlint {

// Whether an atomic write also waits for the disk (fsync of the file and of its directory).
// The cache's files skip it: each is sealed with a checksum of its payload, so a file that a
// crash left short or empty reads as absent and is rebuilt, and an older one that survived
// still describes the bytes it names. The fsyncs cost a pre-commit-sized run 3-20 ms.
enum class Durability { Synced, Unsynced };

// Writes `content` to `target` atomically: a temp file in the same directory,
// fsync (unless Unsynced), rename. On failure nothing is left behind and the message says why.
// For the cache's own files (Unsynced) and reports (write_output_file, Synced).
bool write_file_atomically(const std::filesystem::path& target, std::string_view content, std::string& error,
                           Durability durability = Durability::Synced);
// The same for a file made of `pieces`, written in order where they are (no copy into one buffer).
bool write_file_atomically(const std::filesystem::path& target, const std::vector<std::string_view>& pieces,
                           std::string& error, Durability durability = Durability::Synced);

// Writes a report to `target` (-o FILE). A regular file or a new one is
// replaced atomically (through a symbolic link, its target is replaced and the
// link kept); a device, FIFO, pipe or socket, or any path reached through
// /proc (/dev/stdout, /dev/fd/N, `>(cmd)`) is written in place, as a shell
// redirection would. False with `error` set on failure.
bool write_output_file(const std::filesystem::path& target, std::string_view content, std::string& error);

// Writes a source file that `kvlint check --fix` changed, keeping what the user set on it, as
// ruff (which writes in place) does: the replacement gets the file's owner, group and mode
// before it is renamed over the file (as root, a plain atomic write would give the file to
// root). A file with several hard links, or one whose owner or group this process cannot give
// (not root, someone else's file it may write), is written in place instead: a rename would
// split the links, or take the file from its owner. Symbolic links are followed and kept.
bool write_source_file(const std::filesystem::path& target, std::string_view content, std::string& error);

}  // namespace kvlint
