// Tests for the per-job checkpoint directory the plugin creates as root for the job's user.
#include "spank/checkpoint_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <thread>
#include <utility>

#include "tests/common/temp_dir.h"

namespace elastic::spank {
namespace {

constexpr uid_t kUser = 65534;  // nobody
constexpr gid_t kGroup = 65534;

class CheckpointDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (the plugin runs as root in slurmstepd)";
    base_ = (tmp_.path() / "ckpt").string();
  }
  struct stat Stat(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
    return st;
  }
  testing::TempDir tmp_;
  std::string base_;
};

TEST_F(CheckpointDirTest, CreatesPrivateUserOwnedDirectories) {
  std::string path;
  ASSERT_EQ(PrepareJobCheckpointDir(base_, "alice", kUser, kGroup, 42, path), "");
  EXPECT_EQ(path, base_ + "/alice/42");
  EXPECT_EQ(Stat(base_).st_uid, 0u);
  EXPECT_EQ(Stat(base_).st_mode & 07777, 0755u);
  for (const std::string& dir : {base_ + "/alice", path}) {
    struct stat st = Stat(dir);
    EXPECT_EQ(st.st_uid, kUser) << dir;
    EXPECT_EQ(st.st_gid, kGroup) << dir;
    EXPECT_EQ(st.st_mode & 07777, 0700u) << dir;
  }
  // Idempotent: every step on every node calls it again.
  std::string again;
  EXPECT_EQ(PrepareJobCheckpointDir(base_, "alice", kUser, kGroup, 42, again), "");
  EXPECT_EQ(again, path);
}

TEST_F(CheckpointDirTest, RefusesASymlinkPlantedByTheUser) {
  std::string path;
  ASSERT_EQ(PrepareJobCheckpointDir(base_, "alice", kUser, kGroup, 1, path), "");
  std::filesystem::create_directory_symlink("/etc", base_ + "/alice/2");
  std::string error = PrepareJobCheckpointDir(base_, "alice", kUser, kGroup, 2, path);
  EXPECT_NE(error.find("cannot open (a symlink or not a directory?)"), std::string::npos) << error;
  EXPECT_EQ(Stat("/etc").st_uid, 0u) << "/etc was handed to the user";
}

TEST_F(CheckpointDirTest, RefusesADirectoryOfAnotherUser) {
  std::filesystem::create_directories(base_ + "/alice");
  ASSERT_EQ(chown((base_ + "/alice").c_str(), 1234, 1234), 0);
  std::string path;
  std::string error = PrepareJobCheckpointDir(base_, "alice", kUser, kGroup, 7, path);
  EXPECT_NE(error.find("belongs to uid 1234, not to the job's user (uid 65534)"),
            std::string::npos) << error;
}

TEST_F(CheckpointDirTest, RefusesAnUnsafeBaseOrName) {
  std::filesystem::create_directories(base_);
  chmod(base_.c_str(), 0777);
  std::string path;
  EXPECT_NE(PrepareJobCheckpointDir(base_, "alice", kUser, kGroup, 7, path)
                .find("must be owned by root and not writable by group or others"),
            std::string::npos);
  chmod(base_.c_str(), 0755);
  EXPECT_NE(PrepareJobCheckpointDir(base_, "..", kUser, kGroup, 7, path).find("unusable user"),
            std::string::npos);
  EXPECT_NE(PrepareJobCheckpointDir(base_, "a/b", kUser, kGroup, 7, path).find("unusable user"),
            std::string::npos);
}

// The <jobid> level runs the same checks as the <user> level: a directory another user owns
// there is refused and left as it is.
TEST_F(CheckpointDirTest, RefusesAJobDirectoryOfAnotherUser) {
  std::string path;
  ASSERT_EQ(PrepareJobCheckpointDir(base_, "alice", kUser, kGroup, 1, path), "");
  const std::string job_dir = base_ + "/alice/7";
  ASSERT_EQ(mkdir(job_dir.c_str(), 0750), 0);
  ASSERT_EQ(chown(job_dir.c_str(), 1234, 1234), 0);
  std::string error = PrepareJobCheckpointDir(base_, "alice", kUser, kGroup, 7, path);
  EXPECT_NE(error.find(job_dir + " belongs to uid 1234, not to the job's user (uid 65534)"),
            std::string::npos) << error;
  struct stat st = Stat(job_dir);
  EXPECT_EQ(st.st_uid, 1234u);
  EXPECT_EQ(st.st_gid, 1234u);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
}

// A regular file or a FIFO the user planted as <jobid> is refused by O_DIRECTORY before it is
// opened, so a FIFO with no writer cannot hang slurmstepd; neither is handed over or changed.
TEST_F(CheckpointDirTest, RefusesAFileOrFifoPlantedAsTheJobDirectoryWithoutBlocking) {
  std::string path;
  ASSERT_EQ(PrepareJobCheckpointDir(base_, "alice", kUser, kGroup, 1, path), "");
  const std::string file = base_ + "/alice/8", fifo = base_ + "/alice/9";
  { std::ofstream(file) << "planted\n"; }
  ASSERT_EQ(chmod(file.c_str(), 0644), 0);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  for (const auto& [job_id, planted] : {std::pair{8u, file}, std::pair{9u, fifo}}) {
    std::promise<std::string> result;
    std::future<std::string> done = result.get_future();
    std::thread prepare([&, id = job_id] {
      std::string ignored;
      result.set_value(PrepareJobCheckpointDir(base_, "alice", kUser, kGroup, id, ignored));
    });
    if (done.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      // Blocked opening the FIFO: give it a writer so the thread can end, then fail.
      int writer = open(planted.c_str(), O_WRONLY | O_NONBLOCK);
      prepare.join();
      if (writer >= 0) close(writer);
      FAIL() << "PrepareJobCheckpointDir blocked on " << planted;
    }
    prepare.join();
    const std::string error = done.get();
    EXPECT_NE(error.find(planted + ": cannot open (a symlink or not a directory?): Not a "
                                   "directory"),
              std::string::npos) << error;
    struct stat st = Stat(planted);
    EXPECT_EQ(st.st_uid, 0u) << planted;
    EXPECT_EQ(st.st_mode & 07777, 0644u) << planted;
  }
  std::ifstream in(file);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "planted\n");
}

}  // namespace
}  // namespace elastic::spank
