// POSIX file operations behind checkpoints: user-only directories, complete writes and reads,
// directory fsync (the temp-file protocol itself is common/atomic_file.h). Every failure throws
// CheckpointError naming the path and the errno text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "common/unique_fd.h"

namespace elastic::agent::checkpoint {

// Creates `dir` and any missing parents with mode 0700 (whatever the umask), syncing each parent
// so the new entry survives a crash, then checks it as CheckPrivateDirectory does.
void EnsurePrivateDirectory(const std::filesystem::path& dir);

// Throws unless `dir` is a directory owned by the effective user and not writable by group or
// others: anyone who can plant a file there could make the agent load it.
void CheckPrivateDirectory(const std::filesystem::path& dir);

// Opens a regular file for reading (O_NONBLOCK so a FIFO planted under a checkpoint name cannot
// hang the reader) and reports its size.
UniqueFd OpenRegularFile(const std::filesystem::path& path, std::uint64_t* size);

void WriteAll(int fd, const std::filesystem::path& path, std::string_view bytes);
// Writes all of `bytes` at `offset` (pwrite), leaving the file offset alone.
void WriteAt(int fd, const std::filesystem::path& path, std::uint64_t offset,
             std::string_view bytes);
// Reads exactly `size` bytes at `offset`. Returns false if the file ends first (it shrank after
// its size was taken); throws on an I/O error.
bool ReadAt(int fd, const std::filesystem::path& path, std::uint64_t offset, char* out,
            std::size_t size);
// elastic::SyncDirectory with its FileError turned into CheckpointError.
void SyncDirectory(const std::filesystem::path& dir);
// Removes `path`; a file that is already gone is not an error.
void RemoveFile(const std::filesystem::path& path);

}  // namespace elastic::agent::checkpoint
