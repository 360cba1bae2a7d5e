// Checkpoint cleanup: pure choice of expired job directories, and an fd-relative recursive
// delete that never follows a symlink, leaves the base's filesystem, or touches anything not
// owned by the owner of <base>/<user>.
#include "scheduler/daemon/checkpoint_cleanup.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

#include "common/unique_fd.h"

namespace elastic::daemon {
namespace {

// User trees nested deeper than this are left alone (and reported): recursion keeps one fd and
// one stack frame per level, and a user must not be able to exhaust either in a root daemon.
constexpr int kMaxDepth = 128;
constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

std::string Problem(const std::string& path, const char* what) {
  return "checkpoint cleanup: " + path + ": " + what + ": " + std::strerror(errno);
}

// The names in an open directory, without "." and "..". `fd` stays open and owned by the caller.
bool ListNames(int fd, std::vector<std::string>& names) {
  int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) return false;
  DIR* dir = fdopendir(copy);
  if (dir == nullptr) {
    close(copy);
    return false;
  }
  rewinddir(dir);  // the dup shares the offset with `fd`
  errno = 0;
  while (dirent* entry = readdir(dir)) {
    std::string_view name(entry->d_name);
    if (name != "." && name != "..") names.emplace_back(name);
  }
  bool ok = errno == 0;
  closedir(dir);
  return ok;
}

// Removes a finished job's tree as root, but only what the tree's user owns: a user who moves
// somebody else's directory (say, a group project's) into their job directory must not get root
// to delete it. Anything owned by another uid is left, with its parents, and reported.
class TreeRemover {
 public:
  TreeRemover(dev_t dev, uid_t owner, CleanupReport& report)
      : dev_(dev), owner_(owner), report_(report) {}

  // Removes `name` under `parent` (whose path is `parent_path`); true when it is gone.
  bool Remove(int parent, const std::string& parent_path, const std::string& name, int depth) {
    std::string path = parent_path + "/" + name;
    struct stat st {};
    if (fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) return true;
      report_.errors.push_back(Problem(path, "cannot stat"));
      return false;
    }
    if (st.st_uid != owner_) return NotTheOwners(path, st.st_uid);
    if (!S_ISDIR(st.st_mode)) return Unlink(parent, path, name, 0);  // a symlink goes as a link
    if (st.st_dev != dev_) {
      report_.errors.push_back("checkpoint cleanup: " + path +
                               ": on another filesystem (a mount point?): left alone");
      return false;
    }
    if (depth >= kMaxDepth) {
      report_.errors.push_back("checkpoint cleanup: " + path + ": nested more than " +
                               std::to_string(kMaxDepth) + " levels: left alone");
      return false;
    }
    // O_NOFOLLOW: if the user swapped the directory for a symlink since fstatat, this fails.
    UniqueFd dir(openat(parent, name.c_str(), kDirFlags));
    if (!dir.ok()) {
      report_.errors.push_back(Problem(path, "cannot open directory"));
      return false;
    }
    struct stat opened {};
    if (fstat(dir.get(), &opened) != 0 || opened.st_dev != dev_ || opened.st_uid != owner_) {
      report_.errors.push_back("checkpoint cleanup: " + path + ": changed while removing it");
      return false;
    }
    std::vector<std::string> names;
    if (!ListNames(dir.get(), names)) {
      report_.errors.push_back(Problem(path, "cannot list"));
      return false;
    }
    bool all_gone = true;
    for (const std::string& child : names) {
      all_gone = Remove(dir.get(), path, child, depth + 1) && all_gone;
    }
    return all_gone && Unlink(parent, path, name, AT_REMOVEDIR);
  }

 private:
  bool NotTheOwners(const std::string& path, uid_t uid) {
    report_.errors.push_back("checkpoint cleanup: " + path + ": owned by uid " +
                             std::to_string(uid) + ", not by the directory's user (uid " +
                             std::to_string(owner_) + "): left alone");
    return false;
  }

  bool Unlink(int parent, const std::string& path, const std::string& name, int flags) {
    if (unlinkat(parent, name.c_str(), flags) != 0) {
      if (errno == ENOENT) return true;
      report_.errors.push_back(Problem(path, "cannot remove"));
      return false;
    }
    ++report_.entries_removed;
    return true;
  }

  dev_t dev_;
  uid_t owner_;
  CleanupReport& report_;
};

// Opens the admin-configured base (a symlink there is the admin's choice, so it is followed).
// A base that does not exist yet holds nothing: not an error.
UniqueFd OpenBase(const std::string& base, dev_t& dev, std::vector<std::string>& errors) {
  UniqueFd fd(open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  struct stat st {};
  if (!fd.ok() || fstat(fd.get(), &st) != 0) {
    if (errno != ENOENT) errors.push_back(Problem(base, "cannot open checkpoint base"));
    return UniqueFd();
  }
  dev = st.st_dev;
  return fd;
}

// Opens <base>/<user> if it is a real directory on the base's filesystem.
UniqueFd OpenUserDir(int base_fd, const std::string& path, const std::string& user, dev_t dev,
               std::vector<std::string>& errors) {
  UniqueFd fd(openat(base_fd, user.c_str(), kDirFlags));
  if (!fd.ok()) {
    // Not a directory, or a symlink a user planted: not ours to look into.
    if (errno != ENOTDIR && errno != ELOOP && errno != ENOENT) {
      errors.push_back(Problem(path, "cannot open"));
    }
    return UniqueFd();
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0 || st.st_dev != dev) return UniqueFd();
  return fd;
}

}  // namespace

std::optional<std::uint32_t> ParseJobDirName(std::string_view name) {
  if (name.empty() || name.size() > 10 || name.front() == '0') return std::nullopt;
  std::uint32_t id = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), id);
  if (ec != std::errc() || end != name.data() + name.size()) return std::nullopt;
  return id;
}

std::vector<CheckpointEntry> ChooseExpired(const std::vector<CheckpointEntry>& found,
                                           const std::set<std::uint32_t>& live_job_ids,
                                           std::int64_t now, std::chrono::seconds retention) {
  std::vector<CheckpointEntry> expired;
  for (const CheckpointEntry& entry : found) {
    if (live_job_ids.contains(entry.job_id)) continue;
    // A directory changed "in the future" (clock skew on a shared filesystem) waits too.
    if (now - entry.mtime >= retention.count()) expired.push_back(entry);
  }
  return expired;
}

std::vector<CheckpointEntry> ScanCheckpointBase(const std::string& base,
                                                std::vector<std::string>& errors) {
  std::vector<CheckpointEntry> found;
  dev_t dev = 0;
  UniqueFd base_fd = OpenBase(base, dev, errors);
  std::vector<std::string> users;
  if (!base_fd.ok()) return found;
  if (!ListNames(base_fd.get(), users)) {
    errors.push_back(Problem(base, "cannot list"));
    return found;
  }
  for (const std::string& user : users) {
    std::string user_path = base + "/" + user;
    UniqueFd user_fd = OpenUserDir(base_fd.get(), user_path, user, dev, errors);
    std::vector<std::string> names;
    if (!user_fd.ok()) continue;
    if (!ListNames(user_fd.get(), names)) {
      errors.push_back(Problem(user_path, "cannot list"));
      continue;
    }
    for (const std::string& name : names) {
      std::optional<std::uint32_t> job_id = ParseJobDirName(name);
      struct stat st {};
      if (!job_id || fstatat(user_fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
          !S_ISDIR(st.st_mode) || st.st_dev != dev) {
        continue;
      }
      found.push_back({user, *job_id, static_cast<std::int64_t>(st.st_mtim.tv_sec)});
    }
  }
  return found;
}

CleanupReport CleanFinishedCheckpoints(const std::string& base,
                                       const std::set<std::uint32_t>& live_job_ids,
                                       std::int64_t now, std::chrono::seconds retention) {
  CleanupReport report;
  std::vector<CheckpointEntry> found = ScanCheckpointBase(base, report.errors);
  std::vector<CheckpointEntry> expired = ChooseExpired(found, live_job_ids, now, retention);
  report.kept = found.size() - expired.size();
  if (expired.empty()) return report;
  dev_t dev = 0;
  UniqueFd base_fd = OpenBase(base, dev, report.errors);
  if (!base_fd.ok()) return report;
  for (const CheckpointEntry& entry : expired) {
    std::string user_path = base + "/" + entry.user;
    UniqueFd user_fd = OpenUserDir(base_fd.get(), user_path, entry.user, dev, report.errors);
    struct stat user_dir {};
    if (!user_fd.ok() || fstat(user_fd.get(), &user_dir) != 0) continue;
    TreeRemover remover(dev, user_dir.st_uid, report);
    std::string name = std::to_string(entry.job_id);
    if (remover.Remove(user_fd.get(), user_path, name, 0)) {
      report.removed.push_back(user_path + "/" + name);
    } else {
      ++report.kept;
    }
  }
  return report;
}

}  // namespace elastic::daemon
