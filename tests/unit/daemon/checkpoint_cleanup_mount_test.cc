// Checkpoint cleanup against what a user can do that the plain tree tests cannot show: mount
// points in the tree (never entered, nothing on them removed; needs root for mount(2), skipped
// otherwise) and a directory swapped for a symlink while cleanup runs (never followed).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdarg.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "scheduler/daemon/checkpoint_cleanup.h"
#include "tests/common/temp_dir.h"

namespace elastic::daemon {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

constexpr std::int64_t kFarFuture = 4'000'000'000;  // "now" past every mtime

void WriteFile(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

std::string Joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  return all;
}

// Mounts made by one test; all lazily unmounted when it ends, whether it passed or not.
class Mounts {
 public:
  ~Mounts() {
    for (auto it = paths_.rbegin(); it != paths_.rend(); ++it) umount2(it->c_str(), MNT_DETACH);
  }
  // "" on success, else why not.
  std::string Tmpfs(const fs::path& at) {
    if (mount("elastic-cleanup-test", at.c_str(), "tmpfs", 0, "size=1m,mode=0755") != 0) {
      return std::string("mount tmpfs: ") + std::strerror(errno);
    }
    paths_.push_back(at.string());
    return "";
  }
  std::string Bind(const fs::path& from, const fs::path& at) {
    if (mount(from.c_str(), at.c_str(), nullptr, MS_BIND, nullptr) != 0) {
      return std::string("bind mount: ") + std::strerror(errno);
    }
    paths_.push_back(at.string());
    return "";
  }

 private:
  std::vector<std::string> paths_;
};

// Whether `path` is a mount point, from the kernel's table (a bind mount of a file need not
// change st_dev).
bool IsMountPoint(const fs::path& path) {
  std::ifstream table("/proc/self/mountinfo");
  std::string line;
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string id, parent, devices, root, mount_point;
    fields >> id >> parent >> devices >> root >> mount_point;
    if (mount_point == path.string()) return true;
  }
  return false;
}

// U13: a tmpfs mounted inside a finished job's directory, a job directory and a user directory
// that are mount points, and a file bind-mounted into a job directory: cleanup removes what lies
// on the base's filesystem and nothing on another one.
TEST(CheckpointCleanupMounts, NothingOnAnotherFilesystemIsEnteredOrRemoved) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to mount";
  elastic::testing::TempDir root;
  const fs::path base = root.path() / "base";
  const fs::path outside = root.path() / "outside";
  fs::create_directories(base / "alice" / "10" / "mnt");
  fs::create_directories(base / "alice" / "11");
  fs::create_directories(base / "alice" / "13");
  fs::create_directories(base / "bob");
  fs::create_directories(outside);
  WriteFile(base / "alice" / "10" / "ckpt-1.elck", "x");
  WriteFile(base / "alice" / "13" / "data", "");

  Mounts mounts;
  std::string error = mounts.Tmpfs(base / "alice" / "10" / "mnt");
  if (error.find("Operation not permitted") != std::string::npos) GTEST_SKIP() << error;
  ASSERT_EQ(error, "");
  ASSERT_EQ(mounts.Tmpfs(base / "alice" / "11"), "");
  ASSERT_EQ(mounts.Tmpfs(base / "bob"), "");
  ASSERT_EQ(mounts.Tmpfs(outside), "");
  WriteFile(outside / "shared.dat", "keep");
  ASSERT_EQ(mounts.Bind(outside / "shared.dat", base / "alice" / "13" / "data"), "");
  fs::create_directories(base / "alice" / "10" / "mnt" / "deep");
  WriteFile(base / "alice" / "10" / "mnt" / "deep" / "keep", "1");
  WriteFile(base / "alice" / "11" / "ckpt-1.elck", "2");
  fs::create_directories(base / "bob" / "12");
  WriteFile(base / "bob" / "12" / "ckpt-1.elck", "3");

  CleanupReport report = CleanFinishedCheckpoints(base.string(), {}, kFarFuture, seconds(0));
  const std::string errors = Joined(report.errors);
  // Job 10: its own file went, the mount point and all on it stayed (so did 10 itself).
  EXPECT_FALSE(fs::exists(base / "alice" / "10" / "ckpt-1.elck"));
  EXPECT_TRUE(IsMountPoint(base / "alice" / "10" / "mnt"));
  EXPECT_TRUE(fs::exists(base / "alice" / "10" / "mnt" / "deep" / "keep")) << errors;
  EXPECT_NE(errors.find("alice/10/mnt: on another filesystem (a mount point?): left alone"),
            std::string::npos)
      << errors;
  // Job 11 is a mount point and user bob's directory is one: neither is even a candidate.
  EXPECT_TRUE(fs::exists(base / "alice" / "11" / "ckpt-1.elck"));
  EXPECT_TRUE(fs::exists(base / "bob" / "12" / "ckpt-1.elck"));
  // The bind-mounted file is not removed, and its source keeps its content.
  EXPECT_TRUE(IsMountPoint(base / "alice" / "13" / "data"));
  EXPECT_TRUE(fs::exists(outside / "shared.dat"));
  std::string content;
  std::ifstream(outside / "shared.dat") >> content;
  EXPECT_EQ(content, "keep");
  for (const std::string& removed : report.removed) {
    EXPECT_EQ(removed.find("/alice/1"), std::string::npos) << removed << "\n" << errors;
    EXPECT_EQ(removed.find("/bob/"), std::string::npos) << removed;
  }
}

// Set by a test: the next openat() of `name` first exchanges it with the path `partner` (one
// atomic rename), exactly where a racing user would: after cleanup's fstatat saw a directory,
// before its openat. openat below is this binary's own, so cleanup's calls come through it.
std::atomic<bool> g_swap_armed{false};
std::string g_swap_name, g_swap_partner;
int g_swaps = 0;

// U12: a directory swapped for a symlink between cleanup's fstatat and its openat — a job's
// subdirectory, and a job directory itself — is refused by openat(O_NOFOLLOW) and never entered;
// the directory outside the base the link names (same owner, same filesystem, so no other check
// would stop it) keeps its file, and the refusal is reported.
TEST(CheckpointCleanupRace, ADirectorySwappedForASymlinkIsNeverEntered) {
  for (const std::string level : {"sub", "7"}) {
    SCOPED_TRACE(level);
    elastic::testing::TempDir root;
    const fs::path base = root.path() / "base";
    const fs::path victim = root.path() / "victim";
    fs::create_directories(victim);
    WriteFile(victim / "precious", "do not delete");
    const fs::path job = base / "alice" / "7";
    fs::create_directories(job / "sub");
    WriteFile(job / "sub" / "file", "");
    const fs::path parent = level == "sub" ? job : job.parent_path();
    // The link waits outside the tree, so that cleanup meets it only through the swap.
    fs::create_directories(root.path() / "stash");
    fs::create_symlink(victim, root.path() / "stash" / "lnk");
    g_swap_name = level;
    g_swap_partner = (root.path() / "stash" / "lnk").string();
    g_swaps = 0;
    g_swap_armed = true;
    CleanupReport report = CleanFinishedCheckpoints(base.string(), {}, kFarFuture, seconds(0));
    g_swap_armed = false;
    ASSERT_EQ(g_swaps, 1) << "cleanup never opened " << level;
    EXPECT_TRUE(fs::is_symlink(parent / level));  // the swap happened
    EXPECT_TRUE(fs::exists(victim / "precious")) << Joined(report.errors);
    // O_NOFOLLOW|O_DIRECTORY on a link: ENOTDIR here (ELOOP without O_DIRECTORY).
    EXPECT_NE(Joined(report.errors).find((parent / level).string() + ": cannot open directory: "),
              std::string::npos)
        << Joined(report.errors);
    EXPECT_TRUE(report.removed.empty());
  }
}

}  // namespace
}  // namespace elastic::daemon

// This test binary's openat: forwards to the system call, after the swap a test armed.
extern "C" int openat(int dirfd, const char* path, int flags, ...) {
  mode_t mode = 0;
  if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE) {
    va_list args;
    va_start(args, flags);
    mode = va_arg(args, mode_t);
    va_end(args);
  }
  using elastic::daemon::g_swap_armed;
  if (g_swap_armed && path == elastic::daemon::g_swap_name) {
    g_swap_armed = false;
    ++elastic::daemon::g_swaps;
    renameat2(dirfd, path, AT_FDCWD, elastic::daemon::g_swap_partner.c_str(), RENAME_EXCHANGE);
  }
  return static_cast<int>(syscall(SYS_openat, dirfd, path, flags, mode));
}
