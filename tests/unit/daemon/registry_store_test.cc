// The registry file in state_dir: private to root whatever the umask, and its temp file never
// followed through a symlink.
#include "scheduler/daemon/registry_store.h"
#include "tests/common/umask_scope.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "tests/common/temp_dir.h"

namespace elastic::daemon {
namespace {

std::string Contents(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

mode_t ModeOf(const std::filesystem::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

DaemonState OneJob(std::uint32_t job_id) {
  DaemonState state;
  JobRecord job;
  job.job_id = job_id;
  job.uid = 1001;
  job.nodes = {"n1"};
  state.jobs.push_back(job);
  return state;
}

using test::UmaskScope;

TEST(RegistryStore, SavedRegistryIs0600WhateverTheUmaskAndReadsBack) {
  testing::TempDir dir;
  UmaskScope umask(0);
  SaveRegistry(dir.path().string(), OneJob(11));
  EXPECT_EQ(ModeOf(dir.path() / "registry.json"), 0600u);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "registry.json.tmp"));
  DaemonState restored;
  ASSERT_TRUE(LoadRegistry(dir.path().string(), restored));
  ASSERT_EQ(restored.jobs.size(), 1u);
  EXPECT_EQ(restored.jobs[0].job_id, 11u);
}

// A temp file left behind with another mode (an administrator's copy or restore) is truncated
// and reused: the registry must still end up 0600 (it did not before the fix: O_CREAT's mode only
// applies to a new file).
TEST(RegistryStore, ALeftoverTempFileDoesNotLoosenTheRegistry) {
  testing::TempDir dir;
  const std::filesystem::path temp = dir.Write("registry.json.tmp", "half a registry");
  ASSERT_EQ(::chmod(temp.c_str(), 0644), 0);
  SaveRegistry(dir.path().string(), OneJob(11));
  EXPECT_EQ(ModeOf(dir.path() / "registry.json"), 0600u);
}

// A symlink at registry.json.tmp is not followed: the save fails, its target is untouched, and
// the registry saved before stays as it was.
TEST(RegistryStore, ASymlinkAtTheTempFileIsNotFollowed) {
  testing::TempDir dir;
  const std::string state_dir = dir.path().string();
  SaveRegistry(state_dir, OneJob(11));
  const std::string saved = Contents(dir.path() / "registry.json");
  const std::filesystem::path victim = dir.Write("victim", "root's file\n");
  ASSERT_EQ(::chmod(victim.c_str(), 0644), 0);
  const std::filesystem::path temp = dir.path() / "registry.json.tmp";
  const std::filesystem::path absent = dir.path() / "absent";
  for (const std::filesystem::path& target : {victim, absent}) {
    std::filesystem::remove(temp);
    std::filesystem::create_symlink(target, temp);
    try {
      SaveRegistry(state_dir, OneJob(12));
      ADD_FAILURE() << "saved through a symlink to " << target;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot create " + temp.string()), std::string::npos)
          << e.what();
    }
    EXPECT_TRUE(std::filesystem::is_symlink(temp));
  }
  EXPECT_EQ(Contents(victim), "root's file\n");
  EXPECT_EQ(ModeOf(victim), 0644u);
  EXPECT_FALSE(std::filesystem::exists(absent));
  EXPECT_EQ(Contents(dir.path() / "registry.json"), saved);
}

// elasticd saves a change at once but writes AdminComment only at its next cycle; one killed in
// between must rewrite every restored job's comment, or Slurm shows the old size until the job
// changes again (found by tests/integration/elasticd_restart_test.cc).
TEST(RegistryStore, RestoredJobsHaveTheirAdminCommentRewritten) {
  testing::TempDir dir;
  DaemonState saved = OneJob(11);
  saved.jobs[0].comment_dirty = false;  // as after a cycle
  SaveRegistry(dir.path().string(), saved);
  DaemonState restored;
  ASSERT_TRUE(LoadRegistry(dir.path().string(), restored));
  ASSERT_EQ(restored.jobs.size(), 1u);
  EXPECT_TRUE(restored.jobs[0].comment_dirty);
}

}  // namespace
}  // namespace elastic::daemon
