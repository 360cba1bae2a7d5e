// Security claims about a real elasticd against a real munged and slurmctld (docs/security.md):
// the state directory's mode, credentials munged refuses (expired, rewound, another key), the
// bound on registers waiting for Slurm, when cleanup runs, SlurmUser as admin (and start-up
// without Slurm), the CLI's deadline, and what two uids at the connection cap do to a
// 1024-descriptor limit.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/common/local_cluster.h"
#include "tests/common/temp_dir.h"
#include "tests/common/time_scale.h"

namespace elastic::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const std::string kElasticd = ELASTIC_BINARY_DIR "/scheduler/daemon/elasticd";

// Python: sends each argument after the socket path as one line on its own connection (all
// connected first, in order), prints each reply line as JSON list. Lines are MUNGE credentials.
const char* kSendAll =
    "import json, socket, sys\n"
    "conns = []\n"
    "for line in sys.argv[2:]:\n"
    "    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
    "    s.sendall(line.encode() + b'\\n'); conns.append(s)\n"
    "print(json.dumps([c.makefile().readline().strip() for c in conns]))\n";

class SecurityElasticd : public ClusterSuite {
 protected:
  void SetUp() override {
    ClusterSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    socket_ = (dir_.path() / "run" / "elasticd.sock").string();
    state_dir_ = (dir_.path() / "state").string();
    base_ = (dir_.path() / "ckpt").string();
  }
  void TearDown() override { Stop(); }

  // Starts elasticd with `extra` TOML after the [daemon] table; `slurm_conf` defaults to the
  // suite cluster's; `nofile` > 0 sets RLIMIT_NOFILE. Waits for the socket.
  void Start(const std::string& extra = "", std::string slurm_conf = "", rlim_t nofile = 0) {
    config_ = dir_.Write("elasticd.toml",
                         "[daemon]\nsocket = \"" + socket_ + "\"\nstate_dir = \"" + state_dir_ +
                             "\"\nmunge_socket = \"" + Munge() + "\"\nlog_file = \"" +
                             (dir_.path() / "elasticd.log").string() + "\"\n" + extra)
                  .string();
    if (slurm_conf.empty()) slurm_conf = cluster().Export("SLURM_CONF");
    pid_ = fork();
    if (pid_ == 0) {
      setenv("SLURM_CONF", slurm_conf.c_str(), 1);
      if (nofile > 0) {
        struct rlimit limit = {nofile, nofile};
        setrlimit(RLIMIT_NOFILE, &limit);
      }
      execl(kElasticd.c_str(), "elasticd", "--foreground", "--config", config_.c_str(), nullptr);
      _exit(127);
    }
    for (int i = 0; i < 600 && !fs::exists(socket_); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(fs::exists(socket_)) << Log();
  }
  void Stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << Log();
  }

  // A copy of the cluster's slurm.conf naming a slurmctld port nobody listens on, with a 2 s
  // MessageTimeout (libslurm retries a refused connection for that long): every RPC fails.
  std::string DeadSlurmConf() const {
    const std::string dead = (dir_.path() / "dead-slurm.conf").string();
    CommandResult copy = RunCommand(
        "sed 's/^SlurmctldPort=.*/SlurmctldPort=1/' " + ShellQuote(cluster().Export("SLURM_CONF")) +
        " > " + ShellQuote(dead) + " && echo MessageTimeout=2 >> " + ShellQuote(dead));
    EXPECT_EQ(copy.exit_code, 0) << copy.output;
    return dead;
  }
  std::string Munge() const { return cluster().Export("ELASTIC_MUNGE_SOCKET"); }
  std::string Log() const {
    return RunCommand("cat " + ShellQuote((dir_.path() / "elasticd.log").string())).output;
  }
  // A MUNGE credential for `payload` from munged at `munge_socket` (`munge` ARGS added).
  static std::string Credential(const std::string& munge_socket, const std::string& payload,
                                const std::string& args = "") {
    std::string c = RunCommand("munge -S " + ShellQuote(munge_socket) + " " + args + " -s " +
                               ShellQuote(payload))
                        .output;
    c.erase(c.find_last_not_of('\n') + 1);
    return c;
  }
  // Sends each line on its own connection; the replies, parsed.
  nlohmann::json SendAll(const std::vector<std::string>& lines) const {
    std::string command = "python3 -c " + ShellQuote(kSendAll) + " " + ShellQuote(socket_);
    for (const std::string& line : lines) command += " " + ShellQuote(line);
    CommandResult r = RunCommand(command);
    nlohmann::json replies = nlohmann::json::parse(r.output, nullptr, false);
    EXPECT_TRUE(replies.is_array()) << r.output;
    nlohmann::json parsed = nlohmann::json::array();
    for (const auto& reply : replies)
      parsed.push_back(nlohmann::json::parse(reply.get<std::string>(), nullptr, false));
    return parsed;
  }
  nlohmann::json Send(const std::string& line) const { return SendAll({line})[0]; }

  // Starts a munged of its own (its own key, socket under dir_) for credentials of another realm.
  std::string StartOtherMunged() {
    const std::string d = (dir_.path() / "other-munge").string();
    CommandResult r =
        RunCommand("mkdir -p " + d + " && chmod 0755 " + ShellQuote(dir_.path().string()) + " " +
                   d + " && mungekey --create --keyfile=" + d + "/key && munged --socket=" + d +
                   "/sock --key-file=" + d + "/key --pid-file=" + d + "/pid --log-file=" + d +
                   "/log --seed-file=" + d + "/seed && cat " + d + "/pid");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    other_munged_pid_ = std::atoi(r.output.c_str());
    return d + "/sock";
  }

  TempDir dir_;
  std::string socket_, state_dir_, base_, config_;
  pid_t pid_ = -1;
  pid_t other_munged_pid_ = -1;

 public:
  ~SecurityElasticd() override {
    if (other_munged_pid_ > 0) kill(other_munged_pid_, SIGTERM);
  }
};

// U7: the state directory (registry, decisions) is made 0700 at start-up, whatever mode it had.
TEST_F(SecurityElasticd, StateDirIsMade0700AtStartWhateverItsMode) {
  ASSERT_TRUE(fs::create_directories(state_dir_));
  ASSERT_EQ(chmod(state_dir_.c_str(), 0777), 0);
  ASSERT_NO_FATAL_FAILURE(Start());
  struct stat st {};
  ASSERT_EQ(stat(state_dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  Stop();
  // A missing one (and its missing parent) under a permissive umask: 0700 too.
  state_dir_ = (dir_.path() / "new" / "state").string();
  const mode_t old = umask(0);
  ASSERT_NO_FATAL_FAILURE(Start());
  umask(old);
  ASSERT_EQ(stat(state_dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

// U16: munged's refusals reach the client and nothing is done: an expired credential (TTL 1 s,
// sent 3 s later) and one sealed by a munged with another key. A fresh credential from the
// cluster's munged, for comparison, is answered.
TEST_F(SecurityElasticd, ExpiredAndOtherKeyCredentialsAreRefused) {
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::string expiring = Credential(Munge(), R"({"op":"status"})", "-t 1");
  const std::string other = StartOtherMunged();
  const std::string foreign = Credential(other, R"({"op":"status"})");
  ASSERT_EQ(foreign.rfind("MUNGE:", 0), 0u) << foreign;
  std::this_thread::sleep_for(std::chrono::seconds(3));

  nlohmann::json expired = Send(expiring);
  EXPECT_EQ(expired["ok"], false) << expired.dump();
  EXPECT_EQ(expired.value("error", ""), "MUNGE credential refused: Expired credential");
  nlohmann::json wrong_key = Send(foreign);
  EXPECT_EQ(wrong_key["ok"], false) << wrong_key.dump();
  EXPECT_EQ(wrong_key.value("error", ""), "MUNGE credential refused: Invalid credential");
  nlohmann::json fresh = Send(Credential(Munge(), R"({"op":"status"})"));
  EXPECT_EQ(fresh["ok"], true) << fresh.dump();
  EXPECT_NE(Log().find("rejected request: MUNGE credential refused: Expired credential"),
            std::string::npos)
      << Log();
}

// U16: a credential made "in the future" — by a munged holding the cluster's key whose clock runs
// an hour ahead (LD_PRELOAD shim) — is refused as rewound.
TEST_F(SecurityElasticd, ACredentialFromTheFutureIsRefusedAsRewound) {
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::string d = (dir_.path() / "ahead").string();
  const std::string key = cluster().Export("ELASTIC_CLUSTER_DIR") + "/private/munge.key";
  CommandResult r = RunCommand(
      "mkdir -p " + d + " && chmod 0755 " + ShellQuote(dir_.path().string()) + " " + d +
      " && ELASTIC_TIME_SHIFT_S=3600 LD_PRELOAD=" ELASTIC_TIME_SHIFT_LIB " munged --socket=" + d +
      "/sock --key-file=" + ShellQuote(key) + " --pid-file=" + d + "/pid --log-file=" + d +
      "/log --seed-file=" + d + "/seed && cat " + d + "/pid");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  other_munged_pid_ = std::atoi(r.output.c_str());
  const std::string ahead = Credential(d + "/sock", R"({"op":"status"})");
  ASSERT_EQ(ahead.rfind("MUNGE:", 0), 0u) << ahead;
  // The shim works: the credential says it was made an hour from now.
  CommandResult decoded =
      RunCommand("printf '%s' " + ShellQuote(ahead) + " | unmunge -S " + ShellQuote(Munge()));
  EXPECT_NE(decoded.output.find("Rewound credential"), std::string::npos) << decoded.output;

  nlohmann::json rewound = Send(Credential(d + "/sock", R"({"op":"status"})"));
  EXPECT_EQ(rewound["ok"], false) << rewound.dump();
  EXPECT_EQ(rewound.value("error", ""), "MUNGE credential refused: Rewound credential");
}

// U26: at most 64 registers wait for Slurm at once; while slurmctld hangs, the 65th and later are
// answered "elasticd is busy" at once, the waiting ones once slurmctld answers again.
TEST_F(SecurityElasticd, AtMost64RegistersWaitForSlurmTheRestAreToldBusy) {
  ASSERT_NO_FATAL_FAILURE(Start());
  std::ifstream pids(cluster().Export("ELASTIC_CLUSTER_DIR") + "/pids");
  std::string name, comm;
  pid_t slurmctld = -1, pid = -1;
  while (pids >> name >> pid >> comm) {
    if (name == "slurmctld") slurmctld = pid;
  }
  ASSERT_GT(slurmctld, 0);
  std::vector<std::string> lines;
  for (int i = 0; i < 70; ++i) {
    lines.push_back(
        Credential(Munge(), R"({"op":"register","job_id":)" + std::to_string(900000 + i) + "}"));
  }
  ASSERT_EQ(kill(slurmctld, SIGSTOP), 0);
  struct Resume {
    pid_t pid;
    ~Resume() { kill(pid, SIGCONT); }
  } resume{slurmctld};
  // Elasticd's own cycle may hold one more place in the queue: the cap counts every Slurm call.
  auto replies = std::async(std::launch::async, [&] { return SendAll(lines); });
  std::this_thread::sleep_for(std::chrono::seconds(5));
  EXPECT_EQ(replies.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  kill(slurmctld, SIGCONT);
  ASSERT_EQ(replies.wait_for(std::chrono::seconds(120)), std::future_status::ready);
  nlohmann::json answers = replies.get();
  ASSERT_EQ(answers.size(), 70u);
  int busy = 0, unknown = 0;
  for (const auto& a : answers) {
    const std::string error = a.value("error", "");
    if (error.rfind("elasticd is busy: 64 requests are waiting for Slurm", 0) == 0) ++busy;
    if (error.find("is not known to Slurm") != std::string::npos) ++unknown;
  }
  // 70 sent: 64 (less any place the cycle's read held) waited and were answered, the rest busy.
  EXPECT_GE(busy, 6) << answers.dump();
  EXPECT_LE(busy, 7) << answers.dump();
  EXPECT_EQ(busy + unknown, 70) << answers.dump();
  EXPECT_NE(Log().find("elasticd is busy"), std::string::npos) << Log();
}

// U11: cleanup runs in the first cycle whose Slurm read succeeds, then not again for a minute;
// with Slurm unreachable (every read fails) it never runs, even with retention 0.
TEST_F(SecurityElasticd, CleanupRunsAtMostOnceAMinuteAndNeverWithoutSlurm) {
  auto make_finished = [&](const std::string& job) {
    fs::create_directories(base_ + "/root/" + job);
    std::ofstream(base_ + "/root/" + job + "/ckpt-1.elck") << "x";
  };
  const std::string cleanup =
      "[scheduler]\ncycle_interval = \"500ms\"\n[cleanup]\n"
      "checkpoint_base = \"" +
      base_ + "\"\nretention = \"0s\"\n";
  const std::string dead = DeadSlurmConf();
  make_finished("4000001");
  ASSERT_NO_FATAL_FAILURE(Start(cleanup, dead));
  std::this_thread::sleep_for(std::chrono::seconds(8));  // reads fail after MessageTimeout (2 s)
  EXPECT_TRUE(fs::exists(base_ + "/root/4000001")) << Log();
  EXPECT_NE(Log().find("cannot read Slurm's state, no decisions this cycle"), std::string::npos)
      << Log();
  Stop();

  // Slurm reachable: removed in the first cycle; one finished right after waits a minute.
  ASSERT_NO_FATAL_FAILURE(Start(cleanup));
  auto deadline = Clock::now() + std::chrono::seconds(ScaledSeconds(20));
  while (fs::exists(base_ + "/root/4000001") && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_FALSE(fs::exists(base_ + "/root/4000001")) << Log();
  const auto first = Clock::now();
  make_finished("4000002");
  std::this_thread::sleep_for(std::chrono::seconds(50));  // ~100 cycles
  EXPECT_TRUE(fs::exists(base_ + "/root/4000002")) << Log();
  deadline = first + std::chrono::seconds(ScaledSeconds(90));
  while (fs::exists(base_ + "/root/4000002") && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_FALSE(fs::exists(base_ + "/root/4000002")) << Log();
  EXPECT_GE(Clock::now() - first, std::chrono::seconds(55)) << Log();
}

// U9, the failure path: with Slurm unreachable, elasticd still starts, says that only root is
// admin, and answers root's status.
TEST_F(SecurityElasticd, WithoutSlurmAtStartOnlyRootIsAdmin) {
  const std::string dead = DeadSlurmConf();
  ASSERT_NO_FATAL_FAILURE(Start("", dead));
  EXPECT_NE(Log().find("SlurmUser unknown, only root is admin"), std::string::npos) << Log();
  nlohmann::json status = Send(Credential(Munge(), R"({"op":"status"})"));
  EXPECT_EQ(status["ok"], true) << status.dump();
}

// U33: the connection cap is per uid (512), so two uids together can hold every descriptor of
// elasticd under systemd's default soft limit of 1024: root and nobody each hold 512 idle
// connections, and a third uid's request waits until the idle ones are cut off (5 s to send a
// line), then is answered.
TEST_F(SecurityElasticd, TwoUidsAtTheCapHoldEveryDescriptorOfA1024Limit) {
  ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);  // other uids must reach the socket
  ASSERT_NO_FATAL_FAILURE(Start("", "", 1024));
  const std::string hold =
      "import socket, sys, time\n"
      "conns = []\n"
      "for i in range(512):\n"
      "    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); conns.append(s)\n"
      "print('held', len(conns), flush=True)\n"
      "time.sleep(10)\n";
  const std::string as_nobody = "setpriv --reuid=nobody --regid=nogroup --clear-groups ";
  auto start_holding = [&](const std::string& who) {
    const std::string out = (dir_.path() / who).string();
    RunCommand("rm -f " + ShellQuote(out) + "; " + (who == "nobody" ? as_nobody : "") +
               "/usr/bin/python3 -c " + ShellQuote(hold) + " " + ShellQuote(socket_) + " > " +
               ShellQuote(out) + " 2>&1 &");
  };
  auto held = [&](const std::string& who) {
    return RunCommand("cat " + ShellQuote((dir_.path() / who).string())).output == "held 512\n";
  };
  auto wait_held = [&](const std::vector<std::string>& holders) {
    const auto deadline = Clock::now() + std::chrono::seconds(ScaledSeconds(20));
    auto all = [&] {
      for (const std::string& who : holders) {
        if (!held(who)) return false;
      }
      return true;
    };
    while (!all() && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return all();
  };
  const std::string ask =
      "import socket, sys, time\n"
      "t = time.monotonic()\n"
      "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b'garbage\\n')\n"
      "line = s.makefile().readline()\n"
      "print('%.2f %s' % (time.monotonic() - t, line.strip()))\n";
  auto third_uid_waits = [&] {
    CommandResult third =
        RunCommand("setpriv --reuid=12345 --regid=12345 --clear-groups /usr/bin/python3 -c " +
                   ShellQuote(ask) + " " + ShellQuote(socket_));
    EXPECT_EQ(third.exit_code, 0) << third.output;
    EXPECT_NE(third.output.find("MUNGE credential refused"), std::string::npos) << third.output;
    std::fprintf(stderr, "third uid answered after %s", third.output.c_str());
    return std::atof(third.output.c_str());
  };
  // One uid at its cap leaves descriptors free: the third uid is answered at once.
  start_holding("root");
  ASSERT_TRUE(wait_held({"root"}));
  EXPECT_LT(third_uid_waits(), 1.5) << Log();
  std::this_thread::sleep_for(std::chrono::seconds(6));  // root's idle connections cut off
  // Two uids at their caps: the third waits until their idle connections are cut off.
  start_holding("root");
  start_holding("nobody");
  ASSERT_TRUE(wait_held({"root", "nobody"}));
  const double waited = third_uid_waits();
  EXPECT_GE(waited, 1.5) << Log();  // held out while the 1024 were open
  EXPECT_LT(waited, 30.0);
}

// U9: elasticd asks slurmctld for SlurmUser at start-up and makes it an admin. A slurmctld of its
// own here runs as SlurmUser=nobody (no nodes, no accounting; the suite's munged): against it,
// nobody's `resize` passes the admin check (refused only because the job is not registered),
// while uid 12345's is refused as an admin command.
TEST_F(SecurityElasticd, TheSlurmUserOfSlurmctldIsAdminAndNoOtherUser) {
  ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);  // nobody (slurmctld, the CLI) must get in
  const fs::path ctl = dir_.path() / "ctl";
  fs::create_directories(ctl / "state");
  fs::create_directories(ctl / "log");
  ASSERT_EQ(chown((ctl / "state").c_str(), 65534, 65534), 0);
  ASSERT_EQ(chown((ctl / "log").c_str(), 65534, 65534), 0);
  int port = 0;
  {
    const int probe = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in any{};
    any.sin_family = AF_INET;
    any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof any;
    ASSERT_EQ(bind(probe, reinterpret_cast<sockaddr*>(&any), sizeof any), 0);
    ASSERT_EQ(getsockname(probe, reinterpret_cast<sockaddr*>(&any), &length), 0);
    port = ntohs(any.sin_port);
    close(probe);
  }
  std::string host = RunCommand("hostname -s").output;
  host.erase(host.find_last_not_of('\n') + 1);
  const std::string conf =
      dir_.Write("ctl/slurm.conf",
                 "ClusterName=elasticadmins\nSlurmctldHost=" + host +
                     "(127.0.0.1)\n"
                     "SlurmctldPort=" +
                     std::to_string(port) +
                     "\nSlurmUser=nobody\n"
                     "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=" +
                     Munge() +
                     "\n"
                     "StateSaveLocation=" +
                     (ctl / "state").string() +
                     "\n"
                     "SlurmctldPidFile=" +
                     (ctl / "log" / "slurmctld.pid").string() +
                     "\n"
                     "SlurmctldLogFile=" +
                     (ctl / "log" / "slurmctld.log").string() +
                     "\n"
                     "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nMpiDefault=none\n"
                     "MailProg=/bin/true\nNodeName=n1 NodeHostname=" +
                     host + " NodeAddr=127.0.0.1 Port=" + std::to_string(port + 1) +
                     " CPUs=1 State=UNKNOWN\nPartitionName=main Nodes=n1 Default=YES State=UP\n")
          .string();
  const pid_t slurmctld = fork();
  if (slurmctld == 0) {
    setsid();
    const int out = open((ctl / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(out, 2);
    execlp("slurmctld", "slurmctld", "-D", "-f", conf.c_str(), nullptr);
    _exit(127);
  }
  ASSERT_GT(slurmctld, 0);
  struct Reap {
    pid_t pid;
    ~Reap() {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reap{slurmctld};
  const std::string ask_config = "SLURM_CONF=" + ShellQuote(conf) + " scontrol show config 2>&1";
  bool up = false;
  for (int i = 0; i < 150 && !up; ++i) {
    up = RunCommand(ask_config).output.find("nobody(65534)") != std::string::npos;
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_TRUE(up) << RunCommand(ask_config + "; cat " + ShellQuote((ctl / "out").string())).output;

  ASSERT_NO_FATAL_FAILURE(Start("", conf));
  EXPECT_EQ(Log().find("SlurmUser unknown"), std::string::npos) << Log();
  const std::string resize =
      " " + kElasticd + " resize --job 5 --nodes 1 --config " + ShellQuote(config_) + " 2>&1";
  CommandResult slurm_user =
      RunCommand("setpriv --reuid=nobody --regid=nogroup --clear-groups" + resize);
  EXPECT_NE(slurm_user.output.find("job 5 is not registered"), std::string::npos)
      << slurm_user.output << Log();
  CommandResult other = RunCommand("setpriv --reuid=12345 --regid=12345 --clear-groups" + resize);
  EXPECT_NE(other.output.find("resize is an admin command (root or SlurmUser)"), std::string::npos)
      << other.output;
}

// U28: the elasticd CLI gives up on a daemon that accepts but never answers after its 30 s.
TEST_F(SecurityElasticd, TheCliGivesUpAfter30Seconds) {
  // A listening socket nobody accepts from: the kernel queues the connection and the line.
  fs::create_directories(fs::path(socket_).parent_path());
  const int silent = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket_.c_str(), sizeof address.sun_path - 1);
  ASSERT_EQ(bind(silent, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(listen(silent, 8), 0);
  config_ = dir_.Write("client.toml", "[daemon]\nsocket = \"" + socket_ + "\"\nmunge_socket = \"" +
                                          Munge() + "\"\n")
                .string();
  const auto start = Clock::now();
  CommandResult status = RunCommand(kElasticd + " status --config " + ShellQuote(config_));
  const auto took = Clock::now() - start;
  close(silent);
  EXPECT_NE(status.exit_code, 0);
  EXPECT_NE(status.output.find("did not answer within 30000 ms"), std::string::npos)
      << status.output;
  EXPECT_GE(took, std::chrono::seconds(29));
  EXPECT_LT(took, std::chrono::seconds(60));
}

}  // namespace
}  // namespace elastic::testing
