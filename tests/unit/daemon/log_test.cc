// elasticd's log: one record per line whatever a message quotes from a user.
#include "scheduler/daemon/log.h"

#include <gtest/gtest.h>

#include <algorithm>
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

}  // namespace
}  // namespace elastic::daemon
