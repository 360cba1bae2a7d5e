// elasticd SIGKILLed in each state of a resize (issue 7), on a real 4-node cluster: an order
// issued but not yet delivered, an order delivered while the step checkpoints, and the step
// relaunched on the new nodes before its first step. Each time a new elasticd restores the
// registry from its state file, the resize completes, and the job ends with the parameters of an
// undisturbed run.
#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <thread>

#include "tests/common/agent_runs.h"
#include "tests/common/elasticd_cluster.h"
#include "tests/common/process_tools.h"
#include "tests/common/temp_dir.h"
#include "tests/common/time_scale.h"

namespace elastic::testing {
namespace {

using Clock = std::chrono::steady_clock;

class ElasticdRestart : public ElasticdClusterSuite {
 protected:
  static void SetUpTestSuite() {
    LocalCluster::Options options;
    options.resize_interval = "1h";  // elasticd's own grows stay away: only our orders resize
    StartWithElasticd(options);
  }

  std::string Config(const std::string& ckpt) {
    return WriteFmnistJobConfig(dir_, ckpt, /*ests=*/8, /*seed=*/13, /*steps=*/3000);
  }

  std::string Output() const { return RunCommand("cat " + ShellQuote(out_)).output; }
  static int Occurrences(const std::string& text, const std::string& words) {
    int n = 0;
    for (auto at = text.find(words); at != std::string::npos; at = text.find(words, at + 1)) ++n;
    return n;
  }
  int Pauses() const { return Occurrences(Output(), "resize pause"); }
  // Polls the job's output (every 50 ms) until `pattern` matches; false after `timeout_s`.
  bool WaitForOutput(const std::regex& pattern, int timeout_s) const {
    const auto deadline = Clock::now() + std::chrono::seconds(ScaledSeconds(timeout_s));
    while (Clock::now() < deadline) {
      if (std::regex_search(Output(), pattern)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  // `pkill -SIGNAL` this job's supervisor ("run") or training ranks ("train").
  void Signal(const std::string& signal, const std::string& command) {
    CommandResult r = RunCommand(std::string(kPkill) + " -" + signal + " -f " +
                                 ShellQuote("[e]lastic-agent " + command + " --config " + config_));
    ASSERT_EQ(r.exit_code, 0) << "no elastic-agent " << command << " to signal: " << r.output;
  }

  // The admin orders the job to `nodes` nodes; returns the order's generation.
  std::uint64_t Order(int nodes) {
    CommandResult r = cluster().Run(ElasticdCli() + " resize --job " + job_ + " --nodes " +
                                    std::to_string(nodes));
    EXPECT_EQ(r.exit_code, 0) << r.output << "\n" << Log();
    std::smatch m;
    EXPECT_TRUE(std::regex_search(r.output, m, std::regex("generation (\\d+)"))) << r.output;
    return m.empty() ? 0 : std::stoull(m[1].str());
  }

  // After a restart: the resize to `nodes` ends on `nodes` nodes with its pause measured (the
  // supervisor's `pauses`-th pause line), and Slurm, elasticd and the job agree on it.
  void ExpectResizedTo(int nodes, int pauses) {
    EXPECT_FALSE(WaitForNodes(job_, nodes, "1-4", 90).empty())
        << AdminComment(job_) << "\n" << Log() << Output();
    const auto deadline = Clock::now() + std::chrono::seconds(ScaledSeconds(90));
    while (Pauses() < pauses && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ASSERT_EQ(Pauses(), pauses) << Output();
    CommandResult held = cluster().Run("squeue -h -j " + job_ + " -o %D");
    EXPECT_EQ(std::stoi("0" + held.output), nodes) << held.output;
  }

  void ExpectRunning() {
    CommandResult state = cluster().Run("squeue -h -j " + job_ + " -o %T");
    ASSERT_NE(state.output.find("RUNNING"), std::string::npos)
        << "the job ended before the faults were all injected (more train.steps needed?)\n"
        << state.output << Output();
  }

  TempDir dir_;
  std::string config_, out_, job_;
};

TEST_F(ElasticdRestart, EveryResizeStateSurvivesAKilledElasticd) {
  config_ = Config("ckpt");
  out_ = (dir_.path() / "job.out").string();
  job_ = Submit("-N 1-4 --exclusive --elastic --elastic-est=8 -o " + out_ + " --wrap " +
                ShellQuote("exec " + AgentPath() + " run --config " + config_));
  // Slurm starts it on all 4 idle nodes.
  ASSERT_FALSE(WaitForNodes(job_, 4, "1-4", 90).empty()) << AdminComment(job_) << Log();
  ASSERT_TRUE(WaitForOutput(std::regex("registered with elasticd"), 60)) << Output();
  int pauses = 0;

  // 1. Ordered, not yet delivered: the supervisor is stopped, so its next poll can only reach
  //    the new elasticd, which must have the order from its saved registry.
  ASSERT_NO_FATAL_FAILURE(Signal("STOP", "run"));
  const std::uint64_t first = Order(2);  // a shrink
  ASSERT_NO_FATAL_FAILURE(RestartElasticd());
  ASSERT_NO_FATAL_FAILURE(Signal("CONT", "run"));
  ASSERT_TRUE(WaitForOutput(std::regex("order generation " + std::to_string(first) +
                                       ": shrink to 2 node\\(s\\)"), 60))
      << Output() << Log();
  ASSERT_NO_FATAL_FAILURE(ExpectResizedTo(2, ++pauses));

  // 2. Delivered, the step checkpointing: the ranks are stopped, so the step cannot finish its
  //    checkpoint until after elasticd has died and come back.
  ASSERT_NO_FATAL_FAILURE(ExpectRunning());
  ASSERT_NO_FATAL_FAILURE(Signal("STOP", "train"));
  const std::uint64_t second = Order(1);  // a shrink
  const bool delivered = WaitForOutput(
      std::regex("order generation " + std::to_string(second) + ": shrink to 1 node\\(s\\)"), 60);
  ASSERT_NO_FATAL_FAILURE(RestartElasticd());
  ASSERT_NO_FATAL_FAILURE(Signal("CONT", "train"));
  ASSERT_TRUE(delivered) << Output() << Log();
  ASSERT_NO_FATAL_FAILURE(ExpectResizedTo(1, ++pauses));

  // 3. Relaunched on the new node set, first step not yet done: killed as soon as the
  //    supervisor starts the new step. (Whether the supervisor's report of the new generation
  //    reached the old elasticd first is a race; either way the new one must end the order.)
  ASSERT_NO_FATAL_FAILURE(ExpectRunning());
  const std::uint64_t third = Order(3);  // a grow: the longest relaunch
  ASSERT_TRUE(WaitForOutput(std::regex("generation " + std::to_string(third) +
                                       ": srun on 3 node\\(s\\)"), 60))
      << Output() << Log();
  ASSERT_NO_FATAL_FAILURE(RestartElasticd());
  ASSERT_NO_FATAL_FAILURE(ExpectResizedTo(3, ++pauses));

  const std::string state = cluster().WaitForJob(job_, 600);
  const std::string text = Output();
  ASSERT_EQ(state, "COMPLETED") << text;
  const std::string log = Log();
  EXPECT_EQ(Occurrences(log, "registry restored: 1 elastic job(s)"), 3) << log;
  EXPECT_EQ(log.find("expired"), std::string::npos) << log;  // no order was given up
  for (std::uint64_t g : {first, second, third}) {
    EXPECT_NE(log.find("generation " + std::to_string(g)), std::string::npos) << log;
  }

  const std::string reference =
      RunCommand(ShellQuote(AgentPath()) + " train --config " + Config("reference")).output;
  ASSERT_FALSE(LastParamsHash(reference).empty()) << reference;
  EXPECT_EQ(LastParamsHash(text), LastParamsHash(reference)) << text;
}

}  // namespace
}  // namespace elastic::testing
