// elasticd on GPU nodes (stand-in GPUs: local-cluster.sh --gpus-per-node 2), with real Slurm
// allocations and the real agent: a job sharing its node's GPUs is never grown, and elasticd says
// why; a job holding its nodes' GPUs as gres shrinks for a waiting job and grows again by a
// requeue (Slurm 22.05 does not merge an expansion into a job with allocated GRES), resuming
// from its checkpoint, and requeued later it may start on its own node range again (docs/gpu.md).
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
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
    return WaitUntil(
        [&] { return cluster().Run("squeue -h -t R -j " + job + " -o %i").output == job + "\n"; },
        timeout_s);
  }

  // Polls `done` until it holds (up to `timeout_s`, scaled); whether it did.
  static bool WaitUntil(const std::function<bool()>& done, int timeout_s) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(ScaledSeconds(timeout_s));
    do {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    } while (std::chrono::steady_clock::now() < deadline);
    return false;
  }
  // Polls `read` until its output contains `text` (up to `timeout_s`, scaled); the last output.
  static std::string WaitForText(const std::function<std::string()>& read, const std::string& text,
                                 int timeout_s) {
    std::string output;
    WaitUntil([&] { return (output = read()).find(text) != std::string::npos; }, timeout_s);
    return output;
  }
  static std::string WaitForStatus(const std::string& text, int timeout_s) {
    return WaitForText([] { return cluster().Run(ElasticdCli() + " status").output; }, text,
                       timeout_s);
  }
  static std::string WaitForLog(const std::string& text, int timeout_s) {
    return WaitForText([] { return Log(); }, text, timeout_s);
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
// wrote on SIGTERM. Requeued once more, it gets its own node range back and runs on one node.
// Its two ranks per node share the one CPU per node Slurm gave it. No order ever fails.
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
  // Requeued again (as a preemption would), it is not held to the 2 nodes of its regrow: elasticd
  // gives its record back its own 1-2, and it runs on the one node a rigid job leaves. The test
  // skips Slurm's own requeue delay (120 s) by hand once the range is back.
  // Once the regrown run trains (the agent's third first step: before the shrink, after it, and
  // after the regrow), it is requeued.
  EXPECT_TRUE(WaitUntil(
      [&] {
        const std::string text = JobOutput(whole_out);
        std::size_t begun = 0;
        const std::string line = "elastic-agent: first step done";
        for (auto at = text.find(line); at != std::string::npos; at = text.find(line, at + 1)) {
          ++begun;
        }
        return begun >= 3;
      },
      120))
      << JobOutput(whole_out);
  cluster().Run("scontrol requeue " + whole);
  const std::string rigid = Submit("-N 1 --gres=gpu:2 --wrap 'sleep 600'");
  const std::string restored = "job " + whole + " may start on 1-2 nodes again";
  EXPECT_NE(WaitForLog(restored, 90).find(restored), std::string::npos) << Log();
  cluster().Run("scontrol update JobId=" + whole + " StartTime=now");
  EXPECT_FALSE(WaitForNodes(whole, 1, "1-2", 120).empty())
      << cluster().Run("scontrol show job " + whole).output << Log() << JobOutput(whole_out);
  cluster().Run("scancel " + whole + " " + shared + " " + rigid);
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
