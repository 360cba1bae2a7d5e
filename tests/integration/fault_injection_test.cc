// Faults injected into a real elastic job on a real 4-node cluster (issue 7): each ends with the
// job finished and the parameters of an undisturbed run of the same config.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <thread>

#include "tests/common/local_cluster.h"
#include "tests/common/temp_dir.h"

namespace elastic::testing {
namespace {

class FaultInjection : public ClusterSuite {
 protected:
  std::string Submit(const std::string& args) {
    CommandResult r = cluster().Run("sbatch --parsable " + args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.output.substr(0, r.output.find_first_of(";\n"));
  }

  // Polls until `path` exists (true) or `timeout_s` passes (false).
  static bool WaitForFile(const std::filesystem::path& path, int timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
      if (std::filesystem::exists(path)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
};

// `extra_train`: more [train] lines (settings that change no result bit).
std::string Config(const TempDir& dir, const std::string& ckpt,
                   const std::string& extra_train = "") {
  return dir.Write(ckpt + ".toml",
                   "[model]\nname = \"fmnist_cnn\"\n"
                   "[data]\npath = \"/usr/share/datasets/fashion-mnist\"\n"
                   "[train]\nests = 4\nglobal_batch = 64\nlr = 0.05\nmomentum = 0.9\n"
                   "seed = 9\nsteps = 1500\nthreads = 1\nlog_every = 500\n" + extra_train +
                   "[checkpoint]\ndir = \"" + (dir.path() / ckpt).string() + "\"\n"
                   "every_steps = 150\n")
      .string();
}

std::string FinalHash(const std::string& text) {
  static const std::regex kHash("params_sha256=([0-9a-f]{64})");
  std::string last;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kHash);
       it != std::sregex_iterator(); ++it) {
    last = (*it)[1];
  }
  return last;
}

// kill -9 of one training rank mid-run: srun takes the step down (--kill-on-bad-exit), the
// supervisor relaunches it on the same nodes from the newest periodic checkpoint, and the
// replayed steps give bit for bit what an undisturbed run computes.
TEST_F(FaultInjection, KilledRankIsRestartedFromTheNewestCheckpoint) {
  TempDir dir;
  const std::string config = Config(dir, "ckpt");
  const std::string out = (dir.path() / "job.out").string();
  const std::string job = Submit("-N 2 --exclusive --elastic --elastic-est=4 -o " + out +
                                 " --wrap " +
                                 ShellQuote(ELASTIC_BINARY_DIR "/agent/elastic-agent run "
                                            "--config " + config));
  // Killed after the first periodic checkpoint, well before the end.
  ASSERT_TRUE(WaitForFile(dir.path() / "ckpt" / "ckpt-0000000150.elck", 300))
      << RunCommand("cat " + out).output;
  CommandResult kill =
      // "[e]" keeps the pattern from matching the shell that runs pkill.
      RunCommand("pkill -KILL -n -f " + ShellQuote("[e]lastic-agent train --config " + config));
  ASSERT_EQ(kill.exit_code, 0) << "no training rank to kill: " << kill.output;

  const std::string state = cluster().WaitForJob(job, 600);
  const std::string text = RunCommand("cat " + ShellQuote(out)).output;
  ASSERT_EQ(state, "COMPLETED") << text;
  EXPECT_NE(text.find("restart 1 of 2 on the same nodes from the newest checkpoint"),
            std::string::npos) << text;
  EXPECT_TRUE(std::regex_search(text, std::regex("resuming from \\S+ckpt-000000\\d{4}\\.elck")))
      << text;

  const std::string reference = RunCommand(ShellQuote(ELASTIC_BINARY_DIR "/agent/elastic-agent") +
                                           " train --config " + Config(dir, "reference"))
                                    .output;
  ASSERT_FALSE(FinalHash(reference).empty()) << reference;
  EXPECT_EQ(FinalHash(text), FinalHash(reference)) << text;
}

// The supervisor itself killed (-9): the batch step ends, Slurm takes the job's steps down and the
// job fails; requeued, it starts over on fresh nodes, resumes from the newest checkpoint and
// finishes with the undisturbed run's parameters.
TEST_F(FaultInjection, KilledSupervisorsJobRequeuedResumesFromTheNewestCheckpoint) {
  TempDir dir;
  const std::string config = Config(dir, "ckpt");
  const std::string out = (dir.path() / "job.out").string();
  const std::string job = Submit("-N 2 --exclusive --elastic --elastic-est=4 --requeue "
                                 "--open-mode=append -o " + out + " --wrap " +
                                 ShellQuote("exec " ELASTIC_BINARY_DIR "/agent/elastic-agent run "
                                            "--config " + config));
  ASSERT_TRUE(WaitForFile(dir.path() / "ckpt" / "ckpt-0000000150.elck", 300))
      << RunCommand("cat " + out).output;
  CommandResult kill =
      RunCommand("pkill -KILL -f " + ShellQuote("[e]lastic-agent run --config " + config));
  ASSERT_EQ(kill.exit_code, 0) << "no supervisor to kill: " << kill.output;
  CommandResult state;
  for (int i = 0; i < 120; ++i) {  // until Slurm has ended the job
    state = cluster().Run("scontrol show job " + job + " | grep -o 'JobState=[A-Z_]*'");
    if (state.output.find("FAILED") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ASSERT_NE(state.output.find("FAILED"), std::string::npos) << state.output;
  CommandResult requeue = cluster().Run("scontrol requeue " + job);
  ASSERT_EQ(requeue.exit_code, 0) << requeue.output;
  // Slurm holds a requeued job back for a while (its begin time moves ahead); start it now.
  CommandResult now = cluster().Run("scontrol update JobId=" + job + " StartTime=now");
  EXPECT_EQ(now.exit_code, 0) << now.output;

  const std::string final_state = cluster().WaitForJob(job, 600);
  const std::string text = RunCommand("cat " + ShellQuote(out)).output;
  ASSERT_EQ(final_state, "COMPLETED") << text;
  EXPECT_TRUE(std::regex_search(text, std::regex("resuming from \\S+ckpt-000000\\d{4}\\.elck")))
      << text;
  const std::string reference = RunCommand(ShellQuote(ELASTIC_BINARY_DIR "/agent/elastic-agent") +
                                           " train --config " + Config(dir, "reference"))
                                    .output;
  ASSERT_FALSE(FinalHash(reference).empty()) << reference;
  EXPECT_EQ(FinalHash(text), FinalHash(reference)) << text;
}

// A node of a --no-kill job dies (its slurmd and the job's processes on it killed, the node set
// DOWN): Slurm removes it from the job, the step fails, and the supervisor relaunches on the node
// that is left from the newest checkpoint; the ESTs make the result independent of the count.
TEST_F(FaultInjection, ALostNodeUnderNoKillIsDroppedAndTrainingFinishesOnTheRest) {
  TempDir dir;
  const std::string config = Config(dir, "ckpt");
  const std::string out = (dir.path() / "job.out").string();
  const std::string job = Submit("-N 2 -w n3,n4 --no-kill --exclusive --elastic --elastic-est=4 "
                                 "-o " + out + " --wrap " +
                                 ShellQuote(ELASTIC_BINARY_DIR "/agent/elastic-agent run "
                                            "--config " + config));
  ASSERT_TRUE(WaitForFile(dir.path() / "ckpt" / "ckpt-0000000150.elck", 300))
      << RunCommand("cat " + out).output;
  const std::string pids = cluster().Export("ELASTIC_CLUSTER_DIR") + "/pids";
  CommandResult lose = cluster().Run(
      "kill -KILL $(awk '$1 == \"slurmd-n4\" {print $2}' " + pids + ") && "
      "for p in $(pgrep -f " + ShellQuote("[e]lastic-agent train --config " + config) + "); do "
      "  tr '\\0' '\\n' </proc/$p/environ | grep -qx SLURMD_NODENAME=n4 && kill -KILL $p; "
      "done; scontrol update NodeName=n4 State=DOWN Reason=fault-injection-test");
  ASSERT_EQ(lose.exit_code, 0) << lose.output;

  const std::string state = cluster().WaitForJob(job, 600);
  const std::string text = RunCommand("cat " + ShellQuote(out)).output;
  ASSERT_EQ(state, "COMPLETED") << text;
  EXPECT_NE(text.find("Slurm removed 1 failed node(s) from the job; continuing on n3"),
            std::string::npos) << text;
  EXPECT_NE(text.find("ranks=1"), std::string::npos) << text;
  const std::string reference = RunCommand(ShellQuote(ELASTIC_BINARY_DIR "/agent/elastic-agent") +
                                           " train --config " + Config(dir, "reference"))
                                    .output;
  ASSERT_FALSE(FinalHash(reference).empty()) << reference;
  EXPECT_EQ(FinalHash(text), FinalHash(reference)) << text;
}

// One rank stopped (SIGSTOP) mid-run: its peer blocks in the next collective, its step watchdog
// (train.step_timeout_s) ends it, srun takes the step down (the stopped rank included) and the
// supervisor relaunches from the newest checkpoint.
TEST_F(FaultInjection, AStalledRankIsDetectedByTheStepTimeoutAndTheStepRelaunched) {
  TempDir dir;
  const std::string config = Config(dir, "ckpt", "step_timeout_s = 10\n");
  const std::string out = (dir.path() / "job.out").string();
  const std::string job = Submit("-N 2 --exclusive --elastic --elastic-est=4 -o " + out +
                                 " --wrap " +
                                 ShellQuote(ELASTIC_BINARY_DIR "/agent/elastic-agent run "
                                            "--config " + config));
  ASSERT_TRUE(WaitForFile(dir.path() / "ckpt" / "ckpt-0000000150.elck", 300))
      << RunCommand("cat " + out).output;
  CommandResult stop =
      RunCommand("pkill -STOP -n -f " + ShellQuote("[e]lastic-agent train --config " + config));
  ASSERT_EQ(stop.exit_code, 0) << "no training rank to stop: " << stop.output;

  const std::string state = cluster().WaitForJob(job, 600);
  const std::string text = RunCommand("cat " + ShellQuote(out)).output;
  ASSERT_EQ(state, "COMPLETED") << text;
  EXPECT_NE(text.find("no training step completed for"), std::string::npos) << text;
  EXPECT_NE(text.find("restart 1 of 2 on the same nodes from the newest checkpoint"),
            std::string::npos) << text;
  const std::string reference = RunCommand(ShellQuote(ELASTIC_BINARY_DIR "/agent/elastic-agent") +
                                           " train --config " + Config(dir, "reference"))
                                    .output;
  ASSERT_FALSE(FinalHash(reference).empty()) << reference;
  EXPECT_EQ(FinalHash(text), FinalHash(reference)) << text;
}

}  // namespace
}  // namespace elastic::testing
