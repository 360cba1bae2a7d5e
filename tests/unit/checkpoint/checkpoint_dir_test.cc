// Checkpoint directories: permissions, picking the newest valid checkpoint, crash leftovers,
// retention.
#include "agent/checkpoint/checkpoint_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "agent/checkpoint/checkpoint_error.h"
#include "agent/checkpoint/checkpoint_writer.h"
#include "agent/checkpoint/format.h"
#include "tests/common/temp_dir.h"
#include "tests/unit/checkpoint/checkpoint_test_util.h"

namespace elastic::agent {
namespace {

using testing_util::ReadFile;
using testing_util::SampleFingerprint;
using testing_util::WriteFile;
using testing_util::WriteSampleCheckpoint;

mode_t ModeOf(const std::filesystem::path& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) ADD_FAILURE() << "cannot stat " << path;
  return info.st_mode & 07777;
}

void FlipByte(const std::filesystem::path& path, std::size_t offset) {
  std::string file = ReadFile(path);
  file[offset] ^= 0x01;
  WriteFile(path, file);
}

std::vector<std::string> FileNames(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

struct Warnings {
  std::vector<std::string> messages;
  CheckpointWarning sink() {
    return [this](const std::string& message) { messages.push_back(message); };
  }
};

// Restores the process umask when the test ends, even on failure.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : saved_(umask(mask)) {}
  ~ScopedUmask() { umask(saved_); }

 private:
  mode_t saved_;
};

TEST(CheckpointDirTest, CreatesUserOnlyDirectoriesAndFilesWhateverTheUmask) {
  for (mode_t mask : {mode_t{0}, mode_t{022}, mode_t{0277}}) {
    ScopedUmask scoped(mask);
    elastic::testing::TempDir root;
    std::filesystem::path dir = root.path() / "jobs" / "123" / "ckpt";
    std::filesystem::path file = WriteSampleCheckpoint(dir, 5);
    SCOPED_TRACE("umask " + std::to_string(mask));
    EXPECT_EQ(ModeOf(file), 0600u);
    EXPECT_EQ(ModeOf(dir), 0700u);
    EXPECT_EQ(ModeOf(dir.parent_path()), 0700u);
    EXPECT_EQ(ModeOf(dir.parent_path().parent_path()), 0700u);
  }
}

TEST(CheckpointDirTest, ExistingDirectoryModeIsLeftAloneWhenPrivate) {
  elastic::testing::TempDir root;
  std::filesystem::path dir = root.path() / "ckpt";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  ASSERT_EQ(chmod(dir.c_str(), 0755), 0);
  WriteSampleCheckpoint(dir, 1);
  EXPECT_EQ(ModeOf(dir), 0755u);  // readable by others is the user's choice; the files are 0600
  EXPECT_EQ(ModeOf(dir / checkpoint::CheckpointFileName(1)), 0600u);
}

TEST(CheckpointDirTest, DirectoryWritableByOthersIsRefused) {
  elastic::testing::TempDir root;
  std::filesystem::path dir = root.path() / "ckpt";
  WriteSampleCheckpoint(dir, 1);
  for (mode_t mode : {mode_t{0770}, mode_t{0702}, mode_t{01777}}) {
    ASSERT_EQ(chmod(dir.c_str(), mode), 0);
    Warnings warnings;
    EXPECT_THROW(WriteSampleCheckpoint(dir, 2), CheckpointError);
    EXPECT_THROW(FindNewestValid(dir, warnings.sink()), CheckpointError);
    EXPECT_THROW(PruneOld(dir), CheckpointError);
  }
  try {
    FindNewestValid(dir, Warnings().sink());
  } catch (const CheckpointError& e) {
    EXPECT_EQ(e.path(), dir);
    EXPECT_EQ(e.reason(),
              "directory mode 1777 lets group or others write; expected a user-only "
              "directory (chmod 0700)");
  }
  EXPECT_EQ(FileNames(dir), std::vector<std::string>{"ckpt-0000000001.elck"});  // no temp left
}

TEST(CheckpointDirTest, DirectoryOwnedByAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to chown a directory to another user";
  elastic::testing::TempDir root;
  std::filesystem::path dir = root.path() / "ckpt";
  WriteSampleCheckpoint(dir, 1);
  ASSERT_EQ(chown(dir.c_str(), 65534, 65534), 0);
  try {
    FindNewestValid(dir, Warnings().sink());
    FAIL() << "accepted";
  } catch (const CheckpointError& e) {
    EXPECT_TRUE(e.reason().starts_with("directory is owned by uid 65534, not by this user"))
        << e.what();
  }
  EXPECT_THROW(WriteSampleCheckpoint(dir, 2), CheckpointError);
}

TEST(CheckpointDirTest, MissingOrEmptyDirectoryHasNoCheckpoint) {
  elastic::testing::TempDir root;
  Warnings warnings;
  EXPECT_FALSE(FindNewestValid(root.path() / "absent", warnings.sink()).has_value());
  EXPECT_FALSE(FindNewestValid(root.path(), warnings.sink()).has_value());
  EXPECT_TRUE(warnings.messages.empty());
  EXPECT_TRUE(PruneOld(root.path() / "absent").empty());
  EXPECT_FALSE(std::filesystem::exists(root.path() / "absent"));
}

TEST(CheckpointDirTest, NewestStepWinsOrderedByNumberNotName) {
  elastic::testing::TempDir root;
  WriteSampleCheckpoint(root.path(), 9);
  WriteSampleCheckpoint(root.path(), 12345678901);  // 11 digits: sorts before 9 by name
  WriteSampleCheckpoint(root.path(), 100);
  root.Write("notes.txt", "not a checkpoint");
  Warnings warnings;
  std::optional<CheckpointReader> found = FindNewestValid(root.path(), warnings.sink());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->step(), 12345678901u);
  EXPECT_TRUE(warnings.messages.empty());
  std::vector<CheckpointFile> listed = ListCheckpoints(root.path());
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[1].step, 100u);
  EXPECT_EQ(listed[2].path, root.path() / "ckpt-0000000009.elck");
}

TEST(CheckpointDirTest, CorruptNewestFallsBackToPreviousWithWarningNamingBoth) {
  elastic::testing::TempDir root;
  std::filesystem::path older = WriteSampleCheckpoint(root.path(), 10);
  std::filesystem::path newer = WriteSampleCheckpoint(root.path(), 20);
  FlipByte(newer, 100);
  Warnings warnings;
  std::optional<CheckpointReader> found = FindNewestValid(root.path(), warnings.sink());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->path(), older);
  EXPECT_EQ(found->Get("bucket_map"), "0:0-9\n1:10-19\n");
  ASSERT_EQ(warnings.messages.size(), 1u);
  const std::string& message = warnings.messages[0];
  EXPECT_TRUE(message.starts_with("checkpoint " + newer.string() + " is corrupt (record "))
      << message;
  EXPECT_NE(message.find("CRC mismatch"), std::string::npos) << message;
  EXPECT_TRUE(message.ends_with("); falling back to " + older.string())) << message;
}

TEST(CheckpointDirTest, TornFinalFileFallsBackAndEveryCorruptOneIsReported) {
  elastic::testing::TempDir root;
  std::filesystem::path oldest = WriteSampleCheckpoint(root.path(), 1);
  std::filesystem::path middle = WriteSampleCheckpoint(root.path(), 2);
  std::filesystem::path newest = WriteSampleCheckpoint(root.path(), 3);
  // A rename that reached the disk before the data (no fsync): the name holds a short file.
  WriteFile(newest, ReadFile(newest).substr(0, 1000));
  FlipByte(middle, 50);
  Warnings warnings;
  std::optional<CheckpointReader> found = FindNewestValid(root.path(), warnings.sink());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->path(), oldest);
  ASSERT_EQ(warnings.messages.size(), 2u);
  EXPECT_NE(warnings.messages[0].find(newest.string() + " is corrupt (truncated after 1000 bytes"),
            std::string::npos)
      << warnings.messages[0];
  EXPECT_NE(warnings.messages[1].find(middle.string()), std::string::npos);
  for (const std::string& message : warnings.messages) {
    EXPECT_TRUE(message.ends_with("falling back to " + oldest.string())) << message;
  }
}

TEST(CheckpointDirTest, NoValidCheckpointLeftIsReportedAndReturnsNothing) {
  elastic::testing::TempDir root;
  std::filesystem::path only = WriteSampleCheckpoint(root.path(), 7);
  FlipByte(only, 20);
  Warnings warnings;
  EXPECT_FALSE(FindNewestValid(root.path(), warnings.sink()).has_value());
  ASSERT_EQ(warnings.messages.size(), 1u);
  EXPECT_TRUE(
      warnings.messages[0].ends_with("; no older valid checkpoint in " + root.path().string()))
      << warnings.messages[0];
}

TEST(CheckpointDirTest, TempFilesNeverCountEvenWhenComplete) {
  elastic::testing::TempDir root;
  std::filesystem::path valid = WriteSampleCheckpoint(root.path(), 20);
  // A crash mid-write leaves a partial temp file; a crash between fsync and rename leaves a
  // complete one. Neither was committed, so neither is a checkpoint.
  root.Write("ckpt-0000000030.elck.tmp-Ab12Cd", ReadFile(valid).substr(0, 500));
  std::filesystem::path complete = WriteSampleCheckpoint(root.path() / "elsewhere", 40);
  std::filesystem::copy_file(complete, root.path() / "ckpt-0000000040.elck.tmp-Zz99Yy");
  Warnings warnings;
  std::optional<CheckpointReader> found = FindNewestValid(root.path(), warnings.sink());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->step(), 20u);
  EXPECT_TRUE(warnings.messages.empty());
}

TEST(CheckpointDirTest, PruneRemovesStaleTempFilesAndOldCheckpoints) {
  elastic::testing::TempDir root;
  for (std::uint64_t step : {1, 2, 3, 4, 5}) WriteSampleCheckpoint(root.path(), step);
  root.Write("ckpt-0000000006.elck.tmp-Ab12Cd", "partial");
  root.Write("notes.txt", "kept");
  std::vector<std::filesystem::path> removed = PruneOld(root.path(), 2);
  EXPECT_EQ(removed.size(), 4u);
  EXPECT_EQ(
      FileNames(root.path()),
      (std::vector<std::string>{"ckpt-0000000004.elck", "ckpt-0000000005.elck", "notes.txt"}));
  EXPECT_TRUE(PruneOld(root.path(), 2).empty());
}

TEST(CheckpointDirTest, PruneNeverRemovesTheNewestValidOnes) {
  elastic::testing::TempDir root;
  for (std::uint64_t step : {1, 2, 3, 4, 5}) WriteSampleCheckpoint(root.path(), step);
  FlipByte(root.path() / "ckpt-0000000005.elck", 200);
  FlipByte(root.path() / "ckpt-0000000003.elck", 200);
  PruneOld(root.path(), 2);
  // 5 and 3 are corrupt, so the two newest valid ones are 4 and 2; the corrupt 5 is newer and
  // stays (readers skip it), the corrupt 3 lies between kept ones and stays, 1 goes.
  EXPECT_EQ(FileNames(root.path()),
            (std::vector<std::string>{"ckpt-0000000002.elck", "ckpt-0000000003.elck",
                                      "ckpt-0000000004.elck", "ckpt-0000000005.elck"}));
}

TEST(CheckpointDirTest, PruneKeepsEverythingWhileTooFewAreValid) {
  elastic::testing::TempDir root;
  WriteSampleCheckpoint(root.path(), 1);
  WriteSampleCheckpoint(root.path(), 2);
  FlipByte(root.path() / "ckpt-0000000002.elck", 200);
  EXPECT_TRUE(PruneOld(root.path(), 2).empty());
  EXPECT_EQ(FileNames(root.path()).size(), 2u);
  EXPECT_THROW(PruneOld(root.path(), 0), CheckpointError);
}

TEST(CheckpointDirTest, CommitOfAnExistingStepReplacesItWhole) {
  elastic::testing::TempDir root;
  CheckpointWriter first(SampleFingerprint());
  first.Add("params", "old");
  std::filesystem::path path = first.Commit(root.path(), 8);
  CheckpointWriter second(SampleFingerprint());
  second.Add("params", "new");
  EXPECT_EQ(second.Commit(root.path().string() + "/", 8), path.string());
  EXPECT_EQ(CheckpointReader::Open(path).Get("params"), "new");
  EXPECT_EQ(FileNames(root.path()), std::vector<std::string>{"ckpt-0000000008.elck"});
}

TEST(CheckpointDirTest, FailedCommitLeavesNoTempFile) {
  elastic::testing::TempDir root;
  std::filesystem::path dir = root.path() / "ckpt";
  WriteSampleCheckpoint(dir, 1);
  // A directory under the final name makes the rename fail after the temp file was written.
  std::filesystem::create_directory(dir / checkpoint::CheckpointFileName(2));
  root.Write("ckpt/ckpt-0000000002.elck/inside", "x");
  try {
    WriteSampleCheckpoint(dir, 2);
    FAIL() << "rename over a non-empty directory succeeded";
  } catch (const CheckpointError& e) {
    EXPECT_EQ(e.path(), dir / checkpoint::CheckpointFileName(2));
    EXPECT_NE(e.reason().find("cannot rename"), std::string::npos) << e.what();
  }
  EXPECT_EQ(FileNames(dir),
            (std::vector<std::string>{"ckpt-0000000001.elck", "ckpt-0000000002.elck"}));
}

}  // namespace
}  // namespace elastic::agent
