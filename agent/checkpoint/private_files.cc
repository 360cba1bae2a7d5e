// POSIX implementations of the checkpoint file operations (EINTR and short transfers handled).
#include "agent/checkpoint/private_files.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "agent/checkpoint/checkpoint_error.h"
#include "common/atomic_file.h"

namespace elastic::agent::checkpoint {
namespace {

constexpr mode_t kDirectoryMode = 0700;

[[noreturn]] void ThrowErrno(const std::filesystem::path& path, const std::string& action,
                             int error) {
  throw CheckpointError(path, action + ": " + strerror(error));
}

// A trailing slash gives "a/b/" an empty file name and "a/b" as its parent; drop it.
std::filesystem::path WithoutTrailingSlash(const std::filesystem::path& dir) {
  return dir.has_filename() || !dir.has_parent_path() ? dir : dir.parent_path();
}

void MakeDirectoryChain(const std::filesystem::path& dir) {
  struct stat info;
  if (stat(dir.c_str(), &info) == 0) return;
  if (errno != ENOENT) ThrowErrno(dir, "cannot stat directory", errno);
  std::filesystem::path parent = DirectoryOf(dir);
  if (parent != dir) MakeDirectoryChain(parent);
  if (mkdir(dir.c_str(), kDirectoryMode) != 0) {
    if (errno == EEXIST) return;  // created meanwhile by someone else; checked by the caller
    ThrowErrno(dir, "cannot create directory", errno);
  }
  // mkdir applied the umask, which can only have removed bits; set exactly 0700.
  if (chmod(dir.c_str(), kDirectoryMode) != 0) ThrowErrno(dir, "cannot chmod 0700", errno);
  SyncDirectory(parent);
}

}  // namespace

void EnsurePrivateDirectory(const std::filesystem::path& dir) {
  MakeDirectoryChain(WithoutTrailingSlash(dir));
  CheckPrivateDirectory(dir);
}

void CheckPrivateDirectory(const std::filesystem::path& dir) {
  struct stat info;
  if (stat(dir.c_str(), &info) != 0) ThrowErrno(dir, "cannot stat directory", errno);
  if (!S_ISDIR(info.st_mode)) throw CheckpointError(dir, "not a directory");
  if (info.st_uid != geteuid()) {
    throw CheckpointError(dir, "directory is owned by uid " + std::to_string(info.st_uid) +
                                   ", not by this user (uid " + std::to_string(geteuid()) +
                                   "); expected a user-only directory (0700)");
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    throw CheckpointError(dir, "directory mode " + OctalMode(info.st_mode) +
                                   " lets group or others write; expected a user-only "
                                   "directory (chmod 0700)");
  }
}

UniqueFd OpenRegularFile(const std::filesystem::path& path, std::uint64_t* size) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) ThrowErrno(path, "cannot open", errno);
  struct stat info;
  if (fstat(fd.get(), &info) != 0) ThrowErrno(path, "cannot stat", errno);
  if (!S_ISREG(info.st_mode)) throw CheckpointError(path, "not a regular file");
  *size = static_cast<std::uint64_t>(info.st_size);
  return fd;
}

void WriteAll(int fd, const std::filesystem::path& path, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t written = write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      ThrowErrno(path, "write failed", errno);
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
}

void WriteAt(int fd, const std::filesystem::path& path, std::uint64_t offset,
             std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t written = pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset));
    if (written < 0) {
      if (errno == EINTR) continue;
      ThrowErrno(path, "write failed", errno);
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
    offset += static_cast<std::uint64_t>(written);
  }
}

bool ReadAt(int fd, const std::filesystem::path& path, std::uint64_t offset, char* out,
            std::size_t size) {
  while (size > 0) {
    ssize_t got = pread(fd, out, size, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      ThrowErrno(path, "read failed at byte " + std::to_string(offset), errno);
    }
    if (got == 0) return false;
    out += got;
    offset += static_cast<std::uint64_t>(got);
    size -= static_cast<std::size_t>(got);
  }
  return true;
}

void SyncDirectory(const std::filesystem::path& dir) {
  try {
    elastic::SyncDirectory(dir);
  } catch (const FileError& e) {
    throw CheckpointError(e.path(), e.reason());
  }
}

void RemoveFile(const std::filesystem::path& path) {
  if (unlink(path.c_str()) != 0 && errno != ENOENT) ThrowErrno(path, "cannot remove", errno);
}

}  // namespace elastic::agent::checkpoint
