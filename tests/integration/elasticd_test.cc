// elasticd against a real munged and slurmctld: config validation, `elasticd status`, refusal
// of forged and replayed credentials, the cap on refusal log lines, and answers while slurmctld
// hangs.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/common/local_cluster.h"
#include "tests/common/temp_dir.h"

namespace elastic::testing {
namespace {

const std::string kElasticd = ELASTIC_BINARY_DIR "/scheduler/daemon/elasticd";

class Elasticd : public ClusterSuite {
 protected:
  void SetUp() override {
    ClusterSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    socket_ = (dir_.path() / "run" / "elasticd.sock").string();
    config_ = dir_.Write("elasticd.toml",
                         "[daemon]\nsocket = \"" + socket_ + "\"\nstate_dir = \"" +
                             (dir_.path() / "state").string() + "\"\nmunge_socket = \"" +
                             cluster().Export("ELASTIC_MUNGE_SOCKET") + "\"\nlog_file = \"" +
                             (dir_.path() / "elasticd.log").string() + "\"\n")
                  .string();
    const std::string slurm_conf = cluster().Export("SLURM_CONF");
    pid_ = fork();
    if (pid_ == 0) {
      setenv("SLURM_CONF", slurm_conf.c_str(), 1);  // the suite's slurmctld, as in production
      execl(kElasticd.c_str(), "elasticd", "--foreground", "--config", config_.c_str(), nullptr);
      _exit(127);
    }
    for (int i = 0; i < 100 && !std::filesystem::exists(socket_); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(std::filesystem::exists(socket_)) << Log();
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << Log();
      EXPECT_FALSE(std::filesystem::exists(socket_)) << "socket left behind";
    }
  }
  std::string Log() const { return RunCommand("cat " + ShellQuote((dir_.path() / "elasticd.log").string())).output; }
  // Sends one raw line to the daemon and returns its reply.
  std::string SendRaw(const std::string& line) const {
    return RunCommand("printf '%s\\n' " + ShellQuote(line) + " | python3 -c " +
                      ShellQuote("import socket,sys\ns=socket.socket(socket.AF_UNIX)\n"
                                 "s.connect(sys.argv[1])\ns.sendall(sys.stdin.buffer.read())\n"
                                 "print(s.makefile().readline(), end='')") +
                      " " + ShellQuote(socket_))
        .output;
  }
  std::string Credential(const std::string& payload) const {
    return RunCommand("munge -S " + ShellQuote(cluster().Export("ELASTIC_MUNGE_SOCKET")) +
                      " -s " + ShellQuote(payload))
        .output;
  }

  // The PID of one of the suite cluster's daemons ("slurmctld", ...), from local-cluster.sh's
  // list; -1 if none.
  static pid_t ClusterDaemonPid(const std::string& name) {
    std::ifstream pids(cluster().Export("ELASTIC_CLUSTER_DIR") + "/pids");
    std::string daemon, comm;
    pid_t pid = -1;
    while (pids >> daemon >> pid >> comm) {
      if (daemon == name) return pid;
    }
    return -1;
  }

  TempDir dir_;
  std::string socket_;
  std::string config_;
  pid_t pid_ = -1;
};

TEST_F(Elasticd, StatusAnswersOverMunge) {
  CommandResult status = RunCommand(kElasticd + " status --config " + ShellQuote(config_));
  EXPECT_EQ(status.exit_code, 0) << status.output << Log();
  EXPECT_NE(status.output.find("elasticd 0."), std::string::npos) << status.output;
  EXPECT_NE(status.output.find("policy elastic"), std::string::npos) << status.output;
  EXPECT_NE(status.output.find("no elastic jobs"), std::string::npos) << status.output;

  CommandResult json = RunCommand(kElasticd + " status --json --config " + ShellQuote(config_));
  ASSERT_EQ(json.exit_code, 0) << json.output;
  auto reply = nlohmann::json::parse(json.output);
  EXPECT_TRUE(reply["ok"]);
  EXPECT_TRUE(reply["jobs"].is_array());
}

TEST_F(Elasticd, ForgedAndReplayedCredentialsAreRefused) {
  auto garbage = nlohmann::json::parse(SendRaw(R"({"op":"status"})"));
  EXPECT_FALSE(garbage["ok"]);
  EXPECT_NE(garbage["error"].get<std::string>().find("MUNGE credential refused"),
            std::string::npos);

  std::string credential = Credential(R"({"op":"status"})");
  ASSERT_EQ(credential.rfind("MUNGE:", 0), 0u) << credential;
  credential.erase(credential.find_last_not_of("\n") + 1);
  auto first = nlohmann::json::parse(SendRaw(credential));
  EXPECT_TRUE(first["ok"]) << first.dump();
  auto replay = nlohmann::json::parse(SendRaw(credential));
  EXPECT_FALSE(replay["ok"]);
  EXPECT_NE(replay["error"].get<std::string>().find("Replayed"), std::string::npos)
      << replay.dump();

  auto bad_op = nlohmann::json::parse(SendRaw(
      [&] { std::string c = Credential(R"({"op":"rm -rf"})"); c.pop_back(); return c; }()));
  EXPECT_FALSE(bad_op["ok"]);
  EXPECT_EQ(bad_op["error"],
            "unknown op \"rm -rf\": expected status, register, poll, deregister or resize");
  EXPECT_NE(Log().find("rejected request: MUNGE credential refused"), std::string::npos);
}

// A flood of unauthenticated requests is answered in full but writes at most 20 log lines a
// minute (LogThrottle, one source for all unauthenticated clients): the log cannot be used to
// fill the disk.
TEST_F(Elasticd, AFloodOfRefusedRequestsIsAnsweredButItsLogLinesAreCapped) {
  const std::string send_40 =
      "import socket,sys\n"
      "answers = 0\n"
      "for i in range(40):\n"
      "    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
      "    s.sendall(b'garbage\\n')\n"
      "    answers += 'MUNGE credential refused' in s.makefile().readline()\n"
      "print(answers)\n";
  CommandResult flood = RunCommand("python3 -c " + ShellQuote(send_40) + " " + ShellQuote(socket_));
  ASSERT_EQ(flood.exit_code, 0) << flood.output;
  EXPECT_EQ(flood.output, "40\n");
  const std::string log = Log();
  int lines = 0;
  for (auto at = log.find("rejected request"); at != std::string::npos;
       at = log.find("rejected request", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 20) << log;
}

// A hung slurmctld (stopped: every RPC waits for MessageTimeout, twice) must not stall the
// socket. elasticd asked Slurm on its event loop: one register held every other client for 20 s
// (bench/elasticd_load.sh --slurmctld-stopped: 1 answer in 60 s to 200 clients). Now Slurm is
// asked on a thread of its own, and the waiting register is not cut off by the client timeout.
TEST_F(Elasticd, AnswersWhileSlurmctldHangs) {
  const pid_t slurmctld = ClusterDaemonPid("slurmctld");
  ASSERT_GT(slurmctld, 0);
  std::string credential = Credential(R"({"op":"register","job_id":999999})");
  credential.erase(credential.find_last_not_of("\n") + 1);
  ASSERT_EQ(kill(slurmctld, SIGSTOP), 0);
  struct Resume {
    pid_t pid;
    ~Resume() { kill(pid, SIGCONT); }
  } resume{slurmctld};
  auto registered = std::async(std::launch::async, [&] { return SendRaw(credential); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // elasticd is waiting for Slurm

  const auto start = std::chrono::steady_clock::now();
  CommandResult status = RunCommand(kElasticd + " status --config " + ShellQuote(config_));
  EXPECT_EQ(status.exit_code, 0) << status.output << Log();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << Log();
  EXPECT_EQ(registered.wait_for(std::chrono::seconds(6)), std::future_status::timeout);

  kill(slurmctld, SIGCONT);
  ASSERT_EQ(registered.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  auto reply = nlohmann::json::parse(registered.get(), nullptr, false);
  ASSERT_TRUE(reply.is_object()) << Log();
  EXPECT_FALSE(reply["ok"]);
  EXPECT_EQ(reply["error"], "job 999999 is not known to Slurm") << reply.dump();
}

TEST_F(Elasticd, SecondDaemonOnSameSocketRefuses) {
  CommandResult second = RunCommand(kElasticd + " --foreground --config " + ShellQuote(config_));
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_NE(second.output.find("another elasticd already answers on " + socket_),
            std::string::npos)
      << second.output;
}

TEST(ElasticdConfig, BadConfigIsRefusedWithFileKeyAndLine) {
  TempDir dir;
  std::string bad = dir.Write("bad.toml", "[daemon]\nsocket = \"/tmp/x.sock\"\n\n[scheduler]\n"
                                          "polcy = \"elastic\"\n").string();
  CommandResult run = RunCommand(kElasticd + " --foreground --config " + ShellQuote(bad));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.output.find(bad + ":5: scheduler.polcy: unknown key"), std::string::npos)
      << run.output;
  CommandResult check = RunCommand(kElasticd + " --check --config " +
                                   ShellQuote(ELASTIC_SOURCE_DIR "/etc/elasticd.toml"));
  EXPECT_EQ(check.exit_code, 0) << check.output;
  CommandResult usage = RunCommand(kElasticd + " --bogus");
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.output.find("unrecognised option '--bogus'"), std::string::npos) << usage.output;
}

}  // namespace
}  // namespace elastic::testing
