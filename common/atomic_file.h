// AtomicFile: the one crash-safe file write of the tree (temp file beside the target, fsync,
// rename over the target, fsync of the directory), and FileError, which names path and errno.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "common/unique_fd.h"

namespace elastic {

// A failed file operation. what() is "<action> <path>: <errno text>"; reason() is the same
// without the path, for callers whose own error type names the path (CheckpointError).
class FileError : public std::runtime_error {
 public:
  FileError(const std::string& what, std::filesystem::path path, std::string reason);
  const std::filesystem::path& path() const { return path_; }
  const std::string& reason() const { return reason_; }

 private:
  std::filesystem::path path_;
  std::string reason_;
};

// "0600" for a mode's permission bits (error messages).
std::string OctalMode(mode_t mode);
// The directory holding `path` ("." for a bare file name): where a rename lands, what to fsync.
std::filesystem::path DirectoryOf(const std::filesystem::path& path);

enum class TempName {
  // <target>.tmp-XXXXXX, created with O_CREAT|O_EXCL (mkostemp): nothing planted there is
  // reused, and concurrent writers never share a temp file.
  kUnique,
  // <target>.tmp, opened O_CREAT|O_TRUNC|O_NOFOLLOW: a crash leftover is reused, so temp files
  // never pile up; a symlink planted there fails the write instead of being followed.
  kFixed,
};

struct AtomicFileOptions {
  // Set exactly (fchmod), whatever the umask and whatever mode a reused temp file had. Unset:
  // the mode creation gives under the umask, as std::ofstream would (0666, or 0600 for kUnique).
  std::optional<mode_t> mode = 0600;
  TempName temp_name = TempName::kUnique;
};

// Writes a file so that after a crash `target` holds either the old content or all of the new.
// The temp file is removed unless Commit renamed it. Not thread-safe. Throws FileError.
class AtomicFile {
 public:
  // Creates the temp file in target's directory.
  explicit AtomicFile(std::filesystem::path target, AtomicFileOptions options = {});
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // The temp file, open for writing at offset 0, for streaming writers that do their own
  // write/pwrite calls (the checkpoint's RecordSink). REQUIRES: before Commit.
  int fd() const { return fd_.get(); }
  const std::filesystem::path& temp_path() const { return temp_; }
  const std::filesystem::path& target() const { return target_; }

  // Appends all of `bytes` (EINTR and short writes handled).
  void Write(std::string_view bytes);
  // fsync, close (checked), rename over the target, fsync of the directory.
  // REQUIRES: called at most once.
  void Commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path temp_;
  UniqueFd fd_;
  bool renamed_ = false;
};

// Writes `bytes` to `target` through an AtomicFile.
void WriteFileAtomically(const std::filesystem::path& target, std::string_view bytes,
                         AtomicFileOptions options = {});

// fsyncs a directory, so that entries created, renamed or removed in it survive a crash.
void SyncDirectory(const std::filesystem::path& dir);

}  // namespace elastic
