// Tests for the [cleanup] table of elasticd.toml: pinned defaults, retention forms, bad values.
#include <gtest/gtest.h>

#include "tests/unit/daemon/config_error_cases.h"

#include "common/toml_reader.h"
#include "scheduler/daemon/daemon_config.h"

namespace elastic::daemon {
namespace {

using std::chrono::seconds;

TEST(CleanupConfig, DefaultsArePinned) {
  DaemonConfig c = ParseDaemonConfig("", "empty.toml");
  EXPECT_EQ(c.checkpoint_base, "/var/spool/slurm-elastic");
  EXPECT_EQ(c.checkpoint_retention, std::optional<seconds>(seconds(7 * 24 * 3600)));
}

TEST(CleanupConfig, ShippedFileHasTheDefaults) {
  DaemonConfig c = LoadDaemonConfig(ELASTIC_SOURCE_DIR "/etc/elasticd.toml");
  EXPECT_EQ(c.checkpoint_base, "/var/spool/slurm-elastic");
  EXPECT_EQ(c.checkpoint_retention, std::optional<seconds>(seconds(7 * 24 * 3600)));
}

TEST(CleanupConfig, ReadsBaseAndRetention) {
  DaemonConfig c = ParseDaemonConfig(
      "[cleanup]\ncheckpoint_base = \"/shared/ckpt\"\nretention = \"0s\"\n", "c.toml");
  EXPECT_EQ(c.checkpoint_base, "/shared/ckpt");
  EXPECT_EQ(c.checkpoint_retention, std::optional<seconds>(seconds(0)));
  c = ParseDaemonConfig("[cleanup]\nretention = \"never\"\n", "c.toml");
  EXPECT_EQ(c.checkpoint_retention, std::nullopt);
}

TEST(CleanupConfig, RetentionForms) {
  using R = std::optional<std::optional<seconds>>;
  EXPECT_EQ(ParseRetention("7d"), R(seconds(604800)));
  EXPECT_EQ(ParseRetention("1d"), R(seconds(86400)));
  EXPECT_EQ(ParseRetention("12h"), R(seconds(43200)));
  EXPECT_EQ(ParseRetention("30m"), R(seconds(1800)));
  EXPECT_EQ(ParseRetention("0s"), R(seconds(0)));
  EXPECT_EQ(ParseRetention("1500ms"), R(seconds(1)));
  EXPECT_EQ(ParseRetention("never"), R(std::optional<seconds>()));
  for (const char* bad :
       {"", "d", "7", "-1d", "7 d", "7days", "Never", "1w", "99999999999999999d"}) {
    EXPECT_EQ(ParseRetention(bad), std::nullopt) << bad;
  }
}

TEST(CleanupConfig, InvalidValuesNameKeyAndExpectedForm) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[cleanup]\nretention = \"forever\"\n",
       "bad.toml:2: cleanup.retention: invalid value \"forever\": expected a duration such as "
       "\"7d\", \"12h\", \"0s\", or \"never\""},
      {"[cleanup]\nretention = 7\n", "cleanup.retention: expected a string"},
      {"[cleanup]\ncheckpoint_base = \"var/spool\"\n",
       "bad.toml:2: cleanup.checkpoint_base: invalid value \"var/spool\": expected an absolute "
       "path"},
      {"[cleanup]\ncheckpoint_base = \"\"\n", "cleanup.checkpoint_base: invalid value \"\""},
      {"[cleanup]\nretension = \"1d\"\n", "bad.toml:2: cleanup.retension: unknown key"},
  };
  ExpectConfigErrors(cases);
}

}  // namespace
}  // namespace elastic::daemon
