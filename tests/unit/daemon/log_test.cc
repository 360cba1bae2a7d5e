// elasticd's log: one record per line whatever a message quotes from a user.
#include "scheduler/daemon/log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/common/temp_dir.h"

namespace elastic::daemon {
namespace {

TEST(Log, ControlCharactersFromUsersAreEscaped) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "elasticd.log").string();
  ASSERT_TRUE(OpenLog(path, LogLevel::kInfo));
  Log(LogLevel::kWarn, "refused: unknown op \"x\nFORGED elasticd[1] info: ok\x1b[2J\"");
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  const std::string log = text.str();
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;
  EXPECT_NE(log.find("unknown op \"x\\x0aFORGED elasticd[1] info: ok\\x1b[2J\""),
            std::string::npos) << log;
}

// The descriptor this process holds open on `path` (-1 if none).
int FdOpenOn(const std::string& path) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (std::filesystem::read_symlink(entry.path(), ec) == path) {
      return std::stoi(entry.path().filename().string());
    }
  }
  return -1;
}

std::string Contents(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The log names users and jobs: a new file is 0640 whatever elasticd's umask, opened for
// appending only and closed across exec; elasticd's own umask is given back.
TEST(Log, ANewFileIs0640AppendOnlyAndTheUmaskIsRestored) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "elasticd.log").string();
  const mode_t old_mask = ::umask(0);
  const bool opened = OpenLog(path, LogLevel::kInfo);
  EXPECT_EQ(::umask(old_mask), 0u);  // OpenLog put back the umask it found
  ASSERT_TRUE(opened);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  const int fd = FdOpenOn(path);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(::fcntl(fd, F_GETFL) & O_APPEND);
  EXPECT_EQ(::fcntl(fd, F_GETFL) & O_ACCMODE, O_WRONLY);
  EXPECT_TRUE(::fcntl(fd, F_GETFD) & FD_CLOEXEC);
}

// An existing log keeps its mode (an administrator's choice) and what it held.
TEST(Log, AnExistingFileKeepsItsModeAndContent) {
  testing::TempDir dir;
  const std::string path = dir.Write("elasticd.log", "an earlier line\n").string();
  for (mode_t mode : {0600, 0644}) {
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    ASSERT_TRUE(OpenLog(path, LogLevel::kInfo));
    Log(LogLevel::kWarn, "written with mode 0" + std::to_string(mode));
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, mode);
  }
  const std::string log = Contents(path);
  EXPECT_EQ(log.rfind("an earlier line\n", 0), 0u) << log;
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 3) << log;
}

}  // namespace
}  // namespace elastic::daemon
