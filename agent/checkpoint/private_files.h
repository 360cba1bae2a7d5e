// POSIX file operations behind checkpoints: user-only directories, exclusive 0600 temp files,
// complete writes and reads, fsync of files and directories. Every failure throws
// CheckpointError naming the path and the errno text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

namespace elastic::agent::checkpoint {

// An owned file descriptor. The destructor closes and ignores errors; call Close() where a
// failed close must be seen (after writing: NFS reports write errors there).
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  int Release();
  void Close(const std::filesystem::path& path);

 private:
  int fd_ = -1;
};

// Creates `dir` and any missing parents with mode 0700 (whatever the umask), syncing each parent
// so the new entry survives a crash, then checks it as CheckPrivateDirectory does.
void EnsurePrivateDirectory(const std::filesystem::path& dir);

// Throws unless `dir` is a directory owned by the effective user and not writable by group or
// others: anyone who can plant a file there could make the agent load it.
void CheckPrivateDirectory(const std::filesystem::path& dir);

struct TempFile {
  UniqueFd fd;
  std::filesystem::path path;
};

// Creates <dir>/<final_name>.tmp-XXXXXX with O_CREAT|O_EXCL (mkostemp) and mode exactly 0600.
TempFile CreateTempFile(const std::filesystem::path& dir, std::string_view final_name);

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
void SyncFile(int fd, const std::filesystem::path& path);
void SyncDirectory(const std::filesystem::path& dir);
// Removes `path`; a file that is already gone is not an error.
void RemoveFile(const std::filesystem::path& path);

}  // namespace elastic::agent::checkpoint
