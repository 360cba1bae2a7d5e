// AtomicFile: POSIX temp-file creation, complete writes and the fsync/rename/fsync-dir order.
#include "common/atomic_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <vector>

namespace elastic {
namespace {

[[noreturn]] void Fail(const std::string& action, const std::filesystem::path& path, int error) {
  const std::string text = strerror(error);
  throw FileError(action + " " + path.string() + ": " + text, path, action + ": " + text);
}

// mkostemp: O_CREAT|O_EXCL, mode 0600 under the umask; never follows a symlink.
UniqueFd CreateUnique(const std::filesystem::path& target, std::filesystem::path* temp) {
  const std::string pattern = target.string() + ".tmp-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  UniqueFd fd(mkostemp(name.data(), O_CLOEXEC));
  if (!fd.ok()) Fail("cannot create", pattern, errno);
  *temp = name.data();
  return fd;
}

// The creation mode is at most 0600 when an exact mode follows, so the file is never more open
// than asked for, even for a moment.
UniqueFd OpenFixed(const std::filesystem::path& temp, std::optional<mode_t> mode) {
  const int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW;
  UniqueFd fd(::open(temp.c_str(), flags, mode ? 0600 : 0666));
  if (!fd.ok()) Fail("cannot create", temp, errno);
  return fd;
}

}  // namespace

std::string OctalMode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

std::filesystem::path DirectoryOf(const std::filesystem::path& path) {
  std::filesystem::path dir = path.parent_path();
  return dir.empty() ? std::filesystem::path(".") : dir;
}


FileError::FileError(const std::string& what, std::filesystem::path path, std::string reason)
    : std::runtime_error(what), path_(std::move(path)), reason_(std::move(reason)) {}

AtomicFile::AtomicFile(std::filesystem::path target, AtomicFileOptions options)
    : target_(std::move(target)) {
  if (options.temp_name == TempName::kUnique) {
    fd_ = CreateUnique(target_, &temp_);
  } else {
    temp_ = target_.string() + ".tmp";
    fd_ = OpenFixed(temp_, options.mode);
  }
  // O_CREAT's mode applies to a new file only and goes through the umask; a reused temp file
  // would otherwise pass its own mode on to the target.
  if (options.mode && ::fchmod(fd_.get(), *options.mode) != 0) {
    const int error = errno;
    ::unlink(temp_.c_str());
    Fail("cannot chmod " + OctalMode(*options.mode), temp_, error);
  }
}

AtomicFile::~AtomicFile() {
  if (!renamed_) ::unlink(temp_.c_str());
}

void AtomicFile::Write(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd_.get(), bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      Fail("cannot write", temp_, errno);
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
}

// The data must be durable before the name points at it, and the name before success is
// reported.
void AtomicFile::Commit() {
  if (::fsync(fd_.get()) != 0) Fail("cannot fsync", temp_, errno);
  if (const int error = fd_.Close(); error != 0) Fail("cannot close", temp_, error);
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    const std::string text = strerror(errno);
    throw FileError("cannot rename " + temp_.string() + " to " + target_.string() + ": " + text,
                    target_, "cannot rename " + temp_.string() + " to it: " + text);
  }
  renamed_ = true;
  SyncDirectory(DirectoryOf(target_));
}

void WriteFileAtomically(const std::filesystem::path& target, std::string_view bytes,
                         AtomicFileOptions options) {
  AtomicFile file(target, options);
  file.Write(bytes);
  file.Commit();
}

void SyncDirectory(const std::filesystem::path& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.ok()) Fail("cannot open directory to fsync", dir, errno);
  if (::fsync(fd.get()) != 0) Fail("cannot fsync directory", dir, errno);
}

}  // namespace elastic
