// AtomicFile: content and mode after Commit, no temp file left, the old file kept on failure,
// symlinks at the target or the fixed temp name not followed.
#include "common/atomic_file.h"
#include "tests/common/umask_scope.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/temp_dir.h"

namespace elastic {
namespace {

namespace fs = std::filesystem;

using test::UmaskScope;

// Lowers the file-size limit so a write fails with EFBIG (as root too), SIGXFSZ ignored.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old_);
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit lower = old_;
    lower.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &lower);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    ::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit old_{};
  sighandler_t old_handler_;
};

std::string Contents(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

mode_t ModeOf(const fs::path& path) {
  struct stat info {};
  EXPECT_EQ(::lstat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

std::vector<std::string> Names(const fs::path& dir) {
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

const AtomicFileOptions kUnique{.mode = 0600, .temp_name = TempName::kUnique};
const AtomicFileOptions kFixed{.mode = 0600, .temp_name = TempName::kFixed};

TEST(AtomicFile, CommitWritesTheContentWithTheExactModeWhateverTheUmask) {
  for (mode_t mask : {0000u, 0077u}) {
    for (const AtomicFileOptions& base : {kUnique, kFixed}) {
      testing::TempDir dir;
      UmaskScope umask(mask);
      AtomicFileOptions options = base;
      options.mode = 0640;
      WriteFileAtomically(dir.path() / "out.json", "{}\n", options);
      EXPECT_EQ(Contents(dir.path() / "out.json"), "{}\n");
      EXPECT_EQ(ModeOf(dir.path() / "out.json"), 0640u) << "umask " << mask;
      EXPECT_EQ(Names(dir.path()), std::vector<std::string>{"out.json"});
    }
  }
}

TEST(AtomicFile, WithoutAModeTheUmaskDecidesAsForAnyNewFile) {
  testing::TempDir dir;
  UmaskScope umask(0022);
  WriteFileAtomically(dir.path() / "points.csv", "a,b\n",
                      {.mode = std::nullopt, .temp_name = TempName::kFixed});
  EXPECT_EQ(ModeOf(dir.path() / "points.csv"), 0644u);
}

TEST(AtomicFile, ReplacesAnOldFileWhole) {
  testing::TempDir dir;
  const fs::path target = dir.Write("registry.json", "old content that is longer\n");
  WriteFileAtomically(target, "new\n", kFixed);
  EXPECT_EQ(Contents(target), "new\n");
  EXPECT_EQ(Names(dir.path()), std::vector<std::string>{"registry.json"});
}

// The streaming interface the checkpoint writer uses: write and pwrite on fd() before Commit.
TEST(AtomicFile, StreamsThroughItsDescriptorIntoAUniqueTempBesideTheTarget) {
  testing::TempDir dir;
  const fs::path target = dir.path() / "ckpt-0000000001.elck";
  AtomicFile file(target, kUnique);
  EXPECT_EQ(file.temp_path().parent_path(), dir.path());
  EXPECT_EQ(file.temp_path().filename().string().rfind("ckpt-0000000001.elck.tmp-", 0), 0u);
  EXPECT_EQ(ModeOf(file.temp_path()), 0600u);
  file.Write("xxxx-tail");
  ASSERT_EQ(::pwrite(file.fd(), "head", 4, 0), 4);
  EXPECT_FALSE(fs::exists(target));  // nothing under the name before Commit
  file.Commit();
  EXPECT_EQ(Contents(target), "head-tail");
  EXPECT_EQ(Names(dir.path()), std::vector<std::string>{"ckpt-0000000001.elck"});
}

TEST(AtomicFile, DestroyedWithoutCommitItLeavesTheOldFileAndNoTemp) {
  for (const AtomicFileOptions& options : {kUnique, kFixed}) {
    testing::TempDir dir;
    const fs::path target = dir.Write("state", "old\n");
    {
      AtomicFile file(target, options);
      file.Write("half of the new");
    }
    EXPECT_EQ(Contents(target), "old\n");
    EXPECT_EQ(Names(dir.path()), std::vector<std::string>{"state"});
  }
}

TEST(AtomicFile, AWriteErrorLeavesTheOldFileAndNoTemp) {
  for (const AtomicFileOptions& options : {kUnique, kFixed}) {
    testing::TempDir dir;
    const fs::path target = dir.Write("state", "old\n");
    try {
      FileSizeLimit limit(1024);
      WriteFileAtomically(target, std::string(64 << 10, 'x'), options);
      ADD_FAILURE() << "wrote past RLIMIT_FSIZE";
    } catch (const FileError& e) {
      EXPECT_NE(std::string(e.what()).find("cannot write " + dir.path().string() + "/state.tmp"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(strerror(EFBIG)), std::string::npos) << e.what();
      EXPECT_EQ(e.reason(), std::string("cannot write: ") + strerror(EFBIG));
    }
    EXPECT_EQ(Contents(target), "old\n");
    EXPECT_EQ(Names(dir.path()), std::vector<std::string>{"state"});
  }
}

TEST(AtomicFile, AFailedRenameRemovesTheTempAndNamesBothPaths) {
  testing::TempDir dir;
  dir.Write("state/inside", "x");  // a non-empty directory cannot be renamed over
  const fs::path target = dir.path() / "state";
  try {
    WriteFileAtomically(target, "new\n", kUnique);
    ADD_FAILURE() << "renamed over a non-empty directory";
  } catch (const FileError& e) {
    EXPECT_EQ(e.path(), target);
    EXPECT_EQ(e.reason().rfind("cannot rename " + target.string() + ".tmp-", 0), 0u) << e.what();
    EXPECT_NE(e.reason().find(" to it: "), std::string::npos) << e.what();
  }
  EXPECT_EQ(Names(dir.path()), std::vector<std::string>{"state"});
  EXPECT_EQ(Names(target), std::vector<std::string>{"inside"});
}

TEST(AtomicFile, AMissingDirectoryFailsNamingThePathAndTheErrno) {
  testing::TempDir dir;
  const fs::path target = dir.path() / "missing" / "registry.json";
  try {
    WriteFileAtomically(target, "x", kFixed);
    ADD_FAILURE() << "created a file in a missing directory";
  } catch (const FileError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot create " + target.string() + ".tmp: " +
                                         strerror(ENOENT));
  }
}

// Root may write anywhere, so the read-only directory is tried by a child running as nobody.
TEST(AtomicFile, AReadOnlyDirectoryFailsAndKeepsTheOldFile) {
  testing::TempDir dir;
  const fs::path sub = dir.path() / "ro";
  const fs::path target = dir.Write("ro/state", "old\n");
  const uid_t nobody = 65534;
  if (geteuid() == 0) {
    ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
    ASSERT_EQ(::chown(sub.c_str(), nobody, nobody), 0);
    ASSERT_EQ(::chown(target.c_str(), nobody, nobody), 0);
  }
  ASSERT_EQ(::chmod(sub.c_str(), 0555), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (geteuid() == 0 && (::setgid(nobody) != 0 || ::setuid(nobody) != 0)) ::_exit(2);
    for (const AtomicFileOptions& options : {kUnique, kFixed}) {
      try {
        WriteFileAtomically(target, "new\n", options);
        ::_exit(3);
      } catch (const FileError& e) {
        if (std::string(e.what()).find(strerror(EACCES)) == std::string::npos) ::_exit(4);
      }
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  ::chmod(sub.c_str(), 0755);
  EXPECT_EQ(Contents(target), "old\n");
  EXPECT_EQ(Names(sub), std::vector<std::string>{"state"});
}

// rename replaces the link itself: the file it pointed to is not written.
TEST(AtomicFile, ASymlinkAtTheTargetIsReplacedNotFollowed) {
  for (const AtomicFileOptions& options : {kUnique, kFixed}) {
    testing::TempDir dir;
    const fs::path victim = dir.Write("victim", "someone else's\n");
    const fs::path target = dir.path() / "state";
    fs::create_symlink(victim, target);
    WriteFileAtomically(target, "new\n", options);
    EXPECT_FALSE(fs::is_symlink(target));
    EXPECT_EQ(Contents(target), "new\n");
    EXPECT_EQ(Contents(victim), "someone else's\n");
  }
}

// O_NOFOLLOW: a symlink planted at <target>.tmp fails the write; neither the link, its target
// (existing or not) nor the old file is touched.
TEST(AtomicFile, ASymlinkAtTheFixedTempNameIsNotFollowed) {
  testing::TempDir dir;
  const fs::path target = dir.Write("registry.json", "old\n");
  const fs::path victim = dir.Write("victim", "root's file\n");
  const fs::path absent = dir.path() / "absent";
  const fs::path temp = dir.path() / "registry.json.tmp";
  for (const fs::path& pointee : {victim, absent}) {
    fs::remove(temp);
    fs::create_symlink(pointee, temp);
    try {
      WriteFileAtomically(target, "new\n", kFixed);
      ADD_FAILURE() << "wrote through a symlink to " << pointee;
    } catch (const FileError& e) {
      EXPECT_EQ(e.path(), temp);
      EXPECT_NE(std::string(e.what()).find("cannot create " + temp.string()), std::string::npos);
    }
    EXPECT_TRUE(fs::is_symlink(temp));
  }
  EXPECT_EQ(Contents(victim), "root's file\n");
  EXPECT_FALSE(fs::exists(absent));
  EXPECT_EQ(Contents(target), "old\n");
}

// A crash leftover under the fixed name is truncated and reused; its mode is not passed on.
TEST(AtomicFile, ALeftoverFixedTempIsReusedWithoutItsMode) {
  testing::TempDir dir;
  const fs::path temp = dir.Write("registry.json.tmp", "half a registry, much longer than new");
  ASSERT_EQ(::chmod(temp.c_str(), 0644), 0);
  WriteFileAtomically(dir.path() / "registry.json", "new\n", kFixed);
  EXPECT_EQ(Contents(dir.path() / "registry.json"), "new\n");
  EXPECT_EQ(ModeOf(dir.path() / "registry.json"), 0600u);
  EXPECT_EQ(Names(dir.path()), std::vector<std::string>{"registry.json"});
}

TEST(AtomicFile, SyncDirectoryNamesAMissingDirectory) {
  testing::TempDir dir;
  const fs::path missing = dir.path() / "missing";
  try {
    SyncDirectory(missing);
    ADD_FAILURE() << "synced a missing directory";
  } catch (const FileError& e) {
    EXPECT_EQ(e.path(), missing);
    EXPECT_NE(std::string(e.what()).find(missing.string()), std::string::npos);
  }
}

}  // namespace
}  // namespace elastic
