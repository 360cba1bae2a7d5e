// PrepareJobCheckpointDir: fd-relative mkdir/open with O_NOFOLLOW, then fchown/fchmod on the fd.
#include "spank/checkpoint_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "common/unique_fd.h"

namespace elastic::spank {
namespace {

std::string Errno(const std::string& path, const char* what) {
  return "elastic: checkpoint directory " + path + ": " + what + ": " + std::strerror(errno);
}

// Opens (creating if absent) `name` under `parent` as a directory, never following a symlink.
std::string OpenOrMakeDir(int parent, const std::string& name, const std::string& path,
                          mode_t mode, UniqueFd& out) {
  if (mkdirat(parent, name.c_str(), mode) != 0 && errno != EEXIST) {
    return Errno(path, "cannot create");
  }
  int fd = openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Errno(path, "cannot open (a symlink or not a directory?)");
  out = UniqueFd(fd);
  return {};
}

// Gives the directory to the user with mode 0700, unless someone else already owns it.
std::string HandOver(const UniqueFd& dir, const std::string& path, uid_t uid, gid_t gid) {
  struct stat st {};
  if (fstat(dir.get(), &st) != 0) return Errno(path, "cannot stat");
  if (st.st_uid != uid && st.st_uid != 0) {
    return "elastic: checkpoint directory " + path + " belongs to uid " +
           std::to_string(st.st_uid) + ", not to the job's user (uid " + std::to_string(uid) +
           "): refusing to use it";
  }
  if (fchown(dir.get(), uid, gid) != 0) return Errno(path, "cannot chown");
  if (fchmod(dir.get(), 0700) != 0) return Errno(path, "cannot chmod");
  return {};
}

bool SafeName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

}  // namespace

std::string UserNameOf(uid_t uid) {
  std::vector<char> buffer(16384);
  struct passwd entry {};
  struct passwd* result = nullptr;
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &result) == 0 && result != nullptr) {
    return entry.pw_name;
  }
  return std::to_string(uid);
}

std::string PrepareJobCheckpointDir(const std::string& base, const std::string& user_name,
                                    uid_t uid, gid_t gid, std::uint32_t job_id,
                                    std::string& path) {
  if (!SafeName(user_name)) return "elastic: unusable user name \"" + user_name + "\"";
  // The base is the sysadmin's: create it if missing (root, 0755), never loosen or take it over.
  if (mkdir(base.c_str(), 0755) != 0 && errno != EEXIST) return Errno(base, "cannot create");
  UniqueFd base_fd(open(base.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (base_fd.get() < 0) return Errno(base, "cannot open");
  struct stat st {};
  if (fstat(base_fd.get(), &st) != 0) return Errno(base, "cannot stat");
  if (st.st_uid != 0 || (st.st_mode & 022) != 0) {
    return "elastic: checkpoint_base " + base +
           " must be owned by root and not writable by group or others";
  }
  std::string user_path = base + "/" + user_name;
  UniqueFd user_fd;
  std::string error = OpenOrMakeDir(base_fd.get(), user_name, user_path, 0700, user_fd);
  if (error.empty()) error = HandOver(user_fd, user_path, uid, gid);
  if (!error.empty()) return error;
  std::string job_name = std::to_string(job_id);
  path = user_path + "/" + job_name;
  UniqueFd job_fd;
  error = OpenOrMakeDir(user_fd.get(), job_name, path, 0700, job_fd);
  if (error.empty()) error = HandOver(job_fd, path, uid, gid);
  return error;
}

}  // namespace elastic::spank
