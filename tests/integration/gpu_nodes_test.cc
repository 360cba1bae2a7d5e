// elasticd on GPU nodes (stand-in GPUs: local-cluster.sh --gpus-per-node 2), with real Slurm
// allocations and the real agent: a job sharing its node's GPUs is never grown, and elasticd says
// why; a job holding its nodes' GPUs as gres shrinks for a waiting job and grows again by a
// requeue (Slurm 22.05 does not merge an expansion into a job with allocated GRES), resuming
// from its checkpoint (docs/gpu.md).
#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <thread>

#include "tests/common/agent_runs.h"
#include "tests/common/elasticd_cluster.h"
#include "tests/common/temp_dir.h"
#include "tests/common/time_scale.h"

namespace elastic::testing {
namespace {

class GpuNodes : public ElasticdClusterSuite {
 protected:
  static void SetUpTestSuite() {
    LocalCluster::Options options;
    options.nodes = 3;
    options.gpus_per_node = 2;
    StartWithElasticd(options);
  }

  // Polls squeue until `job` is running (up to `timeout_s`, scaled).
  static bool WaitForRunning(const std::string& job, int timeout_s) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(ScaledSeconds(timeout_s));
    do {
      if (cluster().Run("squeue -h -t R -j " + job + " -o %i").output == job + "\n") return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    } while (std::chrono::steady_clock::now() < deadline);
    return false;
  }

  // Polls `elasticd status` until it contains `text` (up to `timeout_s`, scaled); the last
  // output.
  static std::string WaitForStatus(const std::string& text, int timeout_s) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(ScaledSeconds(timeout_s));
    std::string status;
    do {
      status = cluster().Run(ElasticdCli() + " status").output;
      if (status.find(text) != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    } while (std::chrono::steady_clock::now() < deadline);
    return status;
  }
};

std::string Config(const TempDir& dir, const std::string& name) {
  FmnistJob job;
  job.ests = 4;
  job.global_batch = 64;
  job.steps = 100000;  // runs until cancelled
  job.log_every = 500;
  job.checkpoint_dir = (dir.path() / name).string();
  return dir.Write(name + ".toml", FmnistJobText(job)).string();
}

std::string JobOutput(const std::string& path) {
  return RunCommand("cat " + ShellQuote(path)).output;
}

// Rigid jobs hold n2 and n3 while the 1-GPU job starts: Slurm gives it n1 only (with nodes free
// it would give it one GPU on each of up to 3). Once n2 and n3 are idle, elasticd does not grow
// it and says why. A 2-GPU job then starts on n2 and n3; it shrinks to one node for a waiting
// 2-GPU job, which then runs, and when that job has gone it grows back to two nodes by a
// requeue: Slurm restarts it at once on both, and its agents resume from the checkpoint they
// wrote on SIGTERM. Its two ranks per node share the one CPU per node Slurm gave it. No order
// ever fails.
TEST_F(GpuNodes, AJobSharingItsNodeIsHeldAndAGresJobShrinksThenGrowsByRequeue) {
  TempDir dir;
  const std::string hold =
      Submit("-N 2 -w n2,n3 --exclusive --wrap 'sleep " + std::to_string(ScaledSeconds(20)) + "'");
  // An elastic job `name` with Slurm arguments `args` under `elastic-agent run`, its output in
  // `name`.out (appended to after a requeue); returns its id.
  auto submit_agent = [&](const std::string& name, const std::string& args) {
    return Submit(args + " --elastic --open-mode=append -o " +
                  (dir.path() / (name + ".out")).string() + " --wrap " +
                  ShellQuote(AgentPath() + " run --config " + Config(dir, name)));
  };
  const std::string shared_out = (dir.path() / "shared.out").string();
  const std::string shared = submit_agent("shared", "-N 1-3 --gres=gpu:1");
  ASSERT_FALSE(WaitForNodes(shared, 1, "1-3", 120).empty()) << AdminComment(shared) << "\n"
                                                            << Log() << JobOutput(shared_out);
  ASSERT_EQ(cluster().WaitForJob(hold, 120), "COMPLETED");
  const std::string partial = "grow held back: holds 1 of the 2 GPUs of its 1 node(s)";
  std::string status = WaitForStatus(partial, 120);
  EXPECT_NE(status.find(partial), std::string::npos) << status << "\n"
                                                     << Log() << JobOutput(shared_out);

  const std::string whole_out = (dir.path() / "whole.out").string();
  const std::string whole = submit_agent("whole", "-N 1-2 --gres=gpu:2");
  ASSERT_FALSE(WaitForNodes(whole, 2, "1-2", 120).empty()) << AdminComment(whole) << "\n"
                                                           << Log() << JobOutput(whole_out);
  const std::string waiting = Submit("-N 1 --gres=gpu:2 --wrap 'sleep 600'");
  EXPECT_FALSE(WaitForNodes(whole, 1, "1-2", 180).empty()) << AdminComment(whole) << "\n"
                                                           << Log() << JobOutput(whole_out);
  // Slurm starts it at its next scheduling pass after the shrink (under CI's load, seconds later).
  EXPECT_TRUE(WaitForRunning(waiting, 60)) << Log();
  // Once the waiting job is gone its node is idle again: the 2-GPU job grows back by a requeue.
  cluster().Run("scancel " + waiting);
  EXPECT_FALSE(WaitForNodes(whole, 2, "1-2", 240).empty()) << AdminComment(whole) << "\n"
                                                           << Log() << JobOutput(whole_out);
  const std::string log = Log();
  EXPECT_NE(log.find("job " + whole + " requeued to grow"), std::string::npos) << log;
  EXPECT_NE(log.find("job " + whole + " starts again on 2 nodes"), std::string::npos) << log;
  EXPECT_NE(cluster().Run("scontrol show job " + whole).output.find("Restarts=1"),
            std::string::npos);
  EXPECT_NE(AdminComment(shared).find("nodes=1/1-3"), std::string::npos) << AdminComment(shared);
  cluster().Run("scancel " + whole + " " + shared);
  EXPECT_EQ(log.find("not carried out"), std::string::npos) << log;
  const std::string text = JobOutput(whole_out);
  EXPECT_NE(text.find("2 rank(s) per node on 1 CPU(s) per node: srun --overcommit"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("generation 2: srun on 1 node(s)"), std::string::npos) << text;
  EXPECT_TRUE(std::regex_search(text, std::regex("resuming from \\S+ckpt-\\d+\\.elck"))) << text;
}

}  // namespace
}  // namespace elastic::testing
