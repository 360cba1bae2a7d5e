// Tests for checkpoint cleanup: the pure choice (live jobs kept, retention honoured, only job-id
// names) and the fd-relative delete on real directories (symlinks removed as links, their
// targets intact; symlinked job and user directories never entered; deep trees left alone).
#include "scheduler/daemon/checkpoint_cleanup.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/common/temp_dir.h"

namespace elastic::daemon {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

constexpr std::int64_t kNow = 1'700'000'000;

TEST(ParseJobDirName, OnlyCanonicalJobIds) {
  EXPECT_EQ(ParseJobDirName("1"), 1u);
  EXPECT_EQ(ParseJobDirName("4294967295"), 4294967295u);
  for (const char* name :
       {"", "0", "007", "4294967296", "12a", "-3", "+3", " 3", "tmp", "1e3", "99999999999"}) {
    EXPECT_EQ(ParseJobDirName(name), std::nullopt) << name;
  }
}

TEST(ChooseExpired, LiveJobsAreKeptAndRetentionIsHonoured) {
  std::vector<CheckpointEntry> found = {
      {"alice", 10, kNow - 1000},  // finished long ago
      {"alice", 11, kNow - 1000},  // still live (e.g. pending after a requeue)
      {"bob", 12, kNow - 30},      // finished recently
      {"bob", 13, kNow + 50},      // mtime in the future (clock skew): not yet
  };
  std::set<std::uint32_t> live = {11};
  EXPECT_EQ(ChooseExpired(found, live, kNow, seconds(60)),
            (std::vector<CheckpointEntry>{found[0]}));
  EXPECT_EQ(ChooseExpired(found, live, kNow, seconds(0)),
            (std::vector<CheckpointEntry>{found[0], found[2]}));
  EXPECT_EQ(ChooseExpired(found, live, kNow, seconds(30)),
            (std::vector<CheckpointEntry>{found[0], found[2]}));  // exactly the retention: gone
  EXPECT_EQ(ChooseExpired(found, live, kNow, seconds(1001)), std::vector<CheckpointEntry>{});
  EXPECT_EQ(ChooseExpired(found, {10, 11, 12, 13}, kNow, seconds(0)),
            std::vector<CheckpointEntry>{});
}

class CheckpointTree : public ::testing::Test {
 protected:
  fs::path base() const { return root_.path() / "base"; }
  fs::path outside() const { return root_.path() / "outside"; }

  void SetUp() override {
    fs::create_directories(base());
    fs::create_directories(outside() / "outdir");
    WriteFile(outside() / "secret", "keep me");
    WriteFile(outside() / "outdir" / "keep", "keep me too");
  }

  static void WriteFile(const fs::path& path, const std::string& text) {
    std::ofstream(path) << text;
  }
  static std::string ReadFile(const fs::path& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // Creates a job directory with a checkpoint file and a nested one; its mtime is set last.
  fs::path MakeJobDir(const std::string& user, const std::string& name, std::int64_t mtime) {
    fs::path dir = base() / user / name;
    fs::create_directories(dir / "sub");
    WriteFile(dir / "ckpt-0000000001.elck", "data");
    WriteFile(dir / "sub" / "part", "more");
    SetMtime(dir, mtime);
    return dir;
  }
  static void SetMtime(const fs::path& path, std::int64_t mtime) {
    struct timespec times[2] = {{mtime, 0}, {mtime, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << path;
  }
  static std::vector<CheckpointEntry> Sorted(std::vector<CheckpointEntry> entries) {
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      return std::tie(a.user, a.job_id) < std::tie(b.user, b.job_id);
    });
    return entries;
  }

  testing::TempDir root_;
};

TEST_F(CheckpointTree, ScanFindsOnlyRealJobDirectories) {
  MakeJobDir("alice", "100", kNow - 10);
  MakeJobDir("alice", "0100", kNow - 10);   // not canonical
  MakeJobDir("alice", "notes", kNow - 10);  // not a job id
  MakeJobDir("bob", "7", kNow - 20);
  WriteFile(base() / "alice" / "101", "a file, not a directory");
  fs::create_directory_symlink(outside() / "outdir", base() / "alice" / "102");
  fs::create_directory_symlink(outside(), base() / "mallory");  // a user dir that is a link
  fs::create_directories(outside() / "103");
  std::vector<std::string> errors;
  std::vector<CheckpointEntry> found = Sorted(ScanCheckpointBase(base().string(), errors));
  EXPECT_EQ(found,
            (std::vector<CheckpointEntry>{{"alice", 100, kNow - 10}, {"bob", 7, kNow - 20}}));
  EXPECT_TRUE(errors.empty()) << errors.front();
}

TEST_F(CheckpointTree, RemovesFinishedKeepsLiveAndRecent) {
  fs::path finished = MakeJobDir("alice", "100", kNow - 3600);
  fs::path live = MakeJobDir("alice", "101", kNow - 3600);
  fs::path recent = MakeJobDir("bob", "102", kNow - 10);
  fs::path other = MakeJobDir("alice", "scratch", kNow - 3600);
  CleanupReport report = CleanFinishedCheckpoints(base().string(), {101}, kNow, seconds(60));
  EXPECT_TRUE(report.errors.empty()) << report.errors.front();
  EXPECT_EQ(report.removed, std::vector<std::string>{finished.string()});
  EXPECT_EQ(report.entries_removed, 4u);  // file, sub/part, sub, the job dir
  EXPECT_EQ(report.kept, 2u);
  EXPECT_FALSE(fs::exists(finished));
  EXPECT_TRUE(fs::exists(live / "sub" / "part"));
  EXPECT_TRUE(fs::exists(recent / "ckpt-0000000001.elck"));
  EXPECT_TRUE(fs::exists(other / "sub" / "part"));
  EXPECT_TRUE(fs::is_directory(base() / "alice"));  // the user's directory stays

  // Once the retention has passed, the recent one goes too.
  report = CleanFinishedCheckpoints(base().string(), {101}, kNow + 60, seconds(60));
  EXPECT_EQ(report.removed, std::vector<std::string>{recent.string()});
  EXPECT_TRUE(fs::exists(live));
}

// A user moves a directory that is not theirs (here uid 4242's) into their finished job's
// directory: root's cleanup removes only what the job directory's user owns.
TEST_F(CheckpointTree, AnythingNotOwnedByTheUserIsLeftAlone) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to create files of another uid";
  fs::path job = MakeJobDir("alice", "300", kNow - 3600);
  fs::create_directories(job / "project");
  WriteFile(job / "project" / "results", "somebody else's");
  ASSERT_EQ(lchown((job / "project").c_str(), 4242, 4242), 0);
  ASSERT_EQ(lchown((job / "project" / "results").c_str(), 4242, 4242), 0);
  SetMtime(job, kNow - 3600);
  CleanupReport report = CleanFinishedCheckpoints(base().string(), {}, kNow, seconds(60));
  ASSERT_EQ(report.errors.size(), 1u);
  EXPECT_NE(report.errors[0].find("project: owned by uid 4242, not by the directory's user"),
            std::string::npos) << report.errors[0];
  EXPECT_TRUE(report.removed.empty());
  EXPECT_EQ(ReadFile(job / "project" / "results"), "somebody else's");
  EXPECT_FALSE(fs::exists(job / "ckpt-0000000001.elck"));  // alice's own files went
  EXPECT_FALSE(fs::exists(job / "sub"));
}

TEST_F(CheckpointTree, SymlinksInsideAreRemovedAsLinksAndTargetsSurvive) {
  fs::path job = base() / "alice" / "200";
  fs::create_directories(job / "sub");
  fs::create_symlink(outside() / "secret", job / "link-to-file");
  fs::create_directory_symlink(outside() / "outdir", job / "link-to-dir");
  fs::create_directory_symlink(outside(), job / "sub" / "link-to-outside");
  SetMtime(job, kNow - 100);
  CleanupReport report = CleanFinishedCheckpoints(base().string(), {}, kNow, seconds(0));
  EXPECT_TRUE(report.errors.empty()) << report.errors.front();
  EXPECT_EQ(report.removed, std::vector<std::string>{job.string()});
  EXPECT_EQ(report.entries_removed, 5u);
  EXPECT_FALSE(fs::exists(fs::symlink_status(job)));
  EXPECT_EQ(ReadFile(outside() / "secret"), "keep me");
  EXPECT_EQ(ReadFile(outside() / "outdir" / "keep"), "keep me too");
}

TEST_F(CheckpointTree, SymlinkedJobOrUserDirectoryIsNeverEntered) {
  fs::create_directories(base() / "alice");
  fs::create_directory_symlink(outside() / "outdir", base() / "alice" / "300");
  fs::create_directories(outside() / "400");
  WriteFile(outside() / "400" / "file", "x");
  fs::create_directory_symlink(outside(), base() / "mallory");
  CleanupReport report = CleanFinishedCheckpoints(base().string(), {}, kNow, seconds(0));
  EXPECT_TRUE(report.removed.empty());
  EXPECT_EQ(report.entries_removed, 0u);
  EXPECT_TRUE(fs::is_symlink(base() / "alice" / "300"));
  EXPECT_EQ(ReadFile(outside() / "outdir" / "keep"), "keep me too");
  EXPECT_EQ(ReadFile(outside() / "400" / "file"), "x");
}

TEST_F(CheckpointTree, DeepTreeIsLeftAloneAndReported) {
  fs::path job = base() / "alice" / "500";
  fs::path deep = job;
  for (int i = 0; i < 140; ++i) deep /= "d";
  fs::create_directories(deep);
  SetMtime(job, kNow - 100);
  CleanupReport report = CleanFinishedCheckpoints(base().string(), {}, kNow, seconds(0));
  EXPECT_TRUE(report.removed.empty());
  ASSERT_EQ(report.errors.size(), 1u);
  EXPECT_NE(report.errors[0].find("nested more than 128 levels: left alone"), std::string::npos)
      << report.errors[0];
  EXPECT_EQ(report.kept, 1u);
  EXPECT_TRUE(fs::is_directory(job));
}

TEST_F(CheckpointTree, MissingBaseIsNotAnError) {
  CleanupReport report =
      CleanFinishedCheckpoints((base() / "absent").string(), {}, kNow, seconds(0));
  EXPECT_TRUE(report.errors.empty());
  EXPECT_TRUE(report.removed.empty());
  EXPECT_EQ(report.kept, 0u);
}

}  // namespace
}  // namespace elastic::daemon
