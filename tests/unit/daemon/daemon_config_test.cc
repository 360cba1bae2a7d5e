// Tests for elasticd.toml: pinned defaults, the shipped file, and an invalid-input table.
#include "scheduler/daemon/daemon_config.h"

#include <gtest/gtest.h>

#include "tests/unit/daemon/config_error_cases.h"

#include "common/toml_reader.h"

namespace elastic::daemon {
namespace {

using std::chrono::milliseconds;

TEST(DaemonConfig, DefaultsArePinned) {
  DaemonConfig c = ParseDaemonConfig("", "empty.toml");
  EXPECT_EQ(c.socket, "/run/elasticd/elasticd.sock");
  EXPECT_EQ(c.state_dir, "/var/lib/elasticd");
  EXPECT_EQ(c.log_level, LogLevel::kInfo);
  EXPECT_EQ(c.log_file, "");
  EXPECT_EQ(c.munge_socket, "");
  EXPECT_EQ(c.policy, "elastic");
  EXPECT_EQ(c.cycle_interval, milliseconds(10'000));
  EXPECT_EQ(c.min_resize_interval, milliseconds(60'000));
  EXPECT_DOUBLE_EQ(c.reconfig_penalty, 0.97);
  EXPECT_TRUE(c.preemption);
  EXPECT_TRUE(c.preempt_for_rigid);
  EXPECT_EQ(c.elastic_nice, 1'000'000);  // etc/job_submit.lua's ELASTIC_NICE
  EXPECT_DOUBLE_EQ(c.nice_lift_after, 6.0);
  EXPECT_FALSE(c.quotas.has_value());  // no [quotas]: every guaranteed job is within quota
}

TEST(DaemonConfig, ShippedFileLoadsWithDefaults) {
  DaemonConfig c = LoadDaemonConfig(ELASTIC_SOURCE_DIR "/etc/elasticd.toml");
  EXPECT_EQ(c.policy, "elastic");
  EXPECT_EQ(c.cycle_interval, milliseconds(10'000));
}

TEST(DaemonConfig, ReadsEveryKey) {
  DaemonConfig c = ParseDaemonConfig(
      "[daemon]\nsocket=\"/tmp/s\"\nstate_dir=\"/tmp/st\"\nlog_level=\"debug\"\n"
      "log_file=\"/tmp/l\"\nmunge_socket=\"/tmp/m\"\n[scheduler]\npolicy=\"rubick\"\n"
      "cycle_interval=\"500ms\"\nmin_resize_interval=\"2m\"\nreconfig_penalty=0.9\n"
      "preemption=false\npreempt_for_rigid=false\nelastic_nice=5000\nnice_lift_after=2.5\n[quotas]"
      "\nphysics=16\nbio-lab=0\n[node_types]"
      "\na100=2.0\nv100=1\n",
      "full.toml");
  EXPECT_EQ(c.socket, "/tmp/s");
  EXPECT_EQ(c.state_dir, "/tmp/st");
  EXPECT_EQ(c.log_level, LogLevel::kDebug);
  EXPECT_EQ(c.log_file, "/tmp/l");
  EXPECT_EQ(c.munge_socket, "/tmp/m");
  EXPECT_EQ(c.policy, "rubick");
  EXPECT_EQ(c.cycle_interval, milliseconds(500));
  EXPECT_EQ(c.min_resize_interval, milliseconds(120'000));
  EXPECT_DOUBLE_EQ(c.reconfig_penalty, 0.9);
  EXPECT_FALSE(c.preemption);
  EXPECT_FALSE(c.preempt_for_rigid);
  EXPECT_EQ(c.elastic_nice, 5000);
  EXPECT_DOUBLE_EQ(c.nice_lift_after, 2.5);
  EXPECT_EQ(c.quotas, (std::map<std::string, int>{{"physics", 16}, {"bio-lab", 0}}));
  EXPECT_EQ(c.node_types, (std::map<std::string, double>{{"a100", 2.0}, {"v100", 1.0}}));
}

// An empty [quotas] is a table: every account's quota is 0 (no guaranteed job is within).
TEST(DaemonConfig, AnEmptyQuotasTableGivesEveryAccountZero) {
  DaemonConfig c = ParseDaemonConfig("[quotas]\n", "q.toml");
  ASSERT_TRUE(c.quotas.has_value());
  EXPECT_TRUE(c.quotas->empty());
}

// log_file and munge_socket may be empty (stderr; libmunge's default socket), else absolute.
TEST(DaemonConfig, LogFileAndMungeSocketMayBeEmpty) {
  DaemonConfig c =
      ParseDaemonConfig("[daemon]\nlog_file = \"\"\nmunge_socket = \"\"\n", "empty.toml");
  EXPECT_EQ(c.log_file, "");
  EXPECT_EQ(c.munge_socket, "");
}

TEST(DaemonConfig, InvalidInputTable) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[daemon]\nsockt = \"/x\"\n", "bad.toml:2: daemon.sockt: unknown key"},
      {"[scheduler]\npolicy = \"fifo\"\n",
       "bad.toml:2: scheduler.policy: invalid value \"fifo\": expected one of backfill, "
       "easyscale, rubick, elastic"},
      {"[daemon]\nsocket = \"run/e.sock\"\n",
       "bad.toml:2: daemon.socket: invalid value \"run/e.sock\": expected an absolute path"},
      {"[daemon]\nstate_dir = \"var/lib/e\"\n",
       "bad.toml:2: daemon.state_dir: invalid value \"var/lib/e\": expected an absolute path"},
      {"[daemon]\nlog_file = \"elasticd.log\"\n",
       "bad.toml:2: daemon.log_file: invalid value \"elasticd.log\": expected an absolute path"},
      {"[daemon]\nmunge_socket = \"run/munge/munge.socket.2\"\n",
       "bad.toml:2: daemon.munge_socket: invalid value \"run/munge/munge.socket.2\": expected an "
       "absolute path"},
      {"[daemon]\nlog_level = \"trace\"\n", "daemon.log_level: invalid value \"trace\""},
      {"[scheduler]\ncycle_interval = 10\n", "scheduler.cycle_interval: expected a string"},
      {"[scheduler]\ncycle_interval = \"10\"\n", "invalid duration \"10\""},
      {"[scheduler]\ncycle_interval = \"50ms\"\n", "must be at least 100ms"},
      {"[scheduler]\nreconfig_penalty = 1.5\n", "expected a number from 0 to 1"},
      {"[policy]\nname = \"x\"\n", "bad.toml:2: policy.name: unknown key"},
      {"[daemon\n", "bad.toml:1: invalid TOML"},
      {"[quotas]\nphysics = -1\n",
       "bad.toml:2: quotas.physics: invalid value -1: expected an integer from 0 to 1048576"},
      {"[quotas]\nphysics = \"16\"\n", "quotas.physics: expected an integer from 0"},
      {"[quotas]\n\"a.b\" = 4\n",
       "quotas.a.b: invalid account name \"a.b\": expected a Slurm account (letters, digits, _ -)"},
      {"[node_types]\na100 = 0\n", "node_types.a100: must be above 0"},
      {"[node_types]\na100 = \"fast\"\n", "node_types.a100: expected a number"},
      {"[node_types]\n\"h 100\" = 3\n", "invalid node type name \"h 100\""},
      {"[quotas.physics]\ngpus = 4\n", "quotas.physics: expected an integer from 0"},
      {"[scheduler]\npreemption = \"yes\"\n", "scheduler.preemption"},
      {"[scheduler]\npreempt_for_rigid = 1\n", "scheduler.preempt_for_rigid"},
      {"[scheduler]\nnice_lift_after = -1\n", "scheduler.nice_lift_after"},
      {"[scheduler]\nelastic_nice = -5\n", "scheduler.elastic_nice"},
  };
  ExpectConfigErrors(cases);
}

}  // namespace
}  // namespace elastic::daemon
