// Faults injected into a real elastic job on a real 4-node cluster (issue 7; an elasticd that never
// answers, security.md U28): each ends with the job finished and the parameters of an
// undisturbed run of the same config.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <regex>
#include <thread>

#include "tests/common/agent_runs.h"
#include "tests/common/local_cluster.h"
#include "tests/common/process_tools.h"
#include "tests/common/temp_dir.h"
#include "tests/common/time_scale.h"

namespace elastic::testing {
namespace {

// `extra_train`: more [train] lines (settings that change no result bit).
std::string Config(const TempDir& dir, const std::string& ckpt,
                   const std::string& extra_train = "") {
  return WriteFmnistJobConfig(dir, ckpt, /*ests=*/4, /*seed=*/9, /*steps=*/1500, extra_train,
                              "every_steps = 150\n");
}

class FaultInjection : public ClusterSuite {
 protected:
  // Submits the supervisor (`elastic-agent run`) as a 2-node --elastic job with more sbatch
  // `flags`, and returns once its first periodic checkpoint exists: faults hit it mid-run.
  void StartJob(const std::string& flags, const std::string& extra_train = "") {
    config_ = Config(dir_, "ckpt", extra_train);
    out_ = (dir_.path() / "job.out").string();
    job_ = Submit("-N 2 --exclusive --elastic --elastic-est=4 " + flags + " -o " + out_ +
                  " --wrap " + ShellQuote("exec " + AgentPath() + " run --config " + config_));
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(ScaledSeconds(300));
    const auto first = dir_.path() / "ckpt" / "ckpt-0000000150.elck";
    while (!std::filesystem::exists(first) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(std::filesystem::exists(first)) << Output();
  }

  // A pkill/pgrep -f pattern for this job's `elastic-agent COMMAND` processes ("[e]" keeps it
  // from matching the shell that runs pkill).
  std::string Agents(const std::string& command) const {
    return ShellQuote("[e]lastic-agent " + command + " --config " + config_);
  }

  std::string Output() const { return RunCommand("cat " + ShellQuote(out_)).output; }

  // Waits for the job to end: COMPLETED, with the parameters of an uninterrupted one-process run
  // of the same config. Leaves the job's output in text_ for the test's own checks.
  void ExpectFinishedAsUndisturbed() {
    const std::string state = cluster().WaitForJob(job_, 600);
    text_ = Output();
    ASSERT_EQ(state, "COMPLETED") << text_;
    const std::string reference =
        RunCommand(ShellQuote(AgentPath()) + " train --config " + Config(dir_, "reference"))
            .output;
    ASSERT_FALSE(LastParamsHash(reference).empty()) << reference;
    EXPECT_EQ(LastParamsHash(text_), LastParamsHash(reference)) << text_;
  }

  bool Says(const std::string& words) const { return text_.find(words) != std::string::npos; }
  bool ResumedFromACheckpoint() const {
    return std::regex_search(text_, std::regex("resuming from \\S+ckpt-000000\\d{4}\\.elck"));
  }

  TempDir dir_;
  std::string config_, out_, job_, text_;
};

// kill -9 of one training rank mid-run: srun takes the step down (--kill-on-bad-exit), the
// supervisor relaunches it on the same nodes from the newest periodic checkpoint, and the
// replayed steps give bit for bit what an undisturbed run computes.
TEST_F(FaultInjection, KilledRankIsRestartedFromTheNewestCheckpoint) {
  ASSERT_NO_FATAL_FAILURE(StartJob(""));
  CommandResult kill = RunCommand(std::string(kPkill) + " -KILL -n -f " + Agents("train"));
  ASSERT_EQ(kill.exit_code, 0) << "no training rank to kill: " << kill.output;

  ASSERT_NO_FATAL_FAILURE(ExpectFinishedAsUndisturbed());
  EXPECT_TRUE(Says("restart 1 of 2 on the same nodes from the newest checkpoint")) << text_;
  EXPECT_TRUE(ResumedFromACheckpoint()) << text_;
}

// The supervisor itself killed (-9): the batch step ends, Slurm takes the job's steps down and the
// job fails; requeued, it starts over on fresh nodes, resumes from the newest checkpoint and
// finishes with the undisturbed run's parameters.
TEST_F(FaultInjection, KilledSupervisorsJobRequeuedResumesFromTheNewestCheckpoint) {
  ASSERT_NO_FATAL_FAILURE(StartJob("--requeue --open-mode=append"));
  CommandResult kill = RunCommand(std::string(kPkill) + " -KILL -f " + Agents("run"));
  ASSERT_EQ(kill.exit_code, 0) << "no supervisor to kill: " << kill.output;
  CommandResult state;
  for (int i = 0; i < 120; ++i) {  // until Slurm has ended the job
    state = cluster().Run("scontrol show job " + job_ + " | grep -o 'JobState=[A-Z_]*'");
    if (state.output.find("FAILED") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ASSERT_NE(state.output.find("FAILED"), std::string::npos) << state.output;
  CommandResult requeue = cluster().Run("scontrol requeue " + job_);
  ASSERT_EQ(requeue.exit_code, 0) << requeue.output;
  // Slurm holds a requeued job back for a while (its begin time moves ahead); start it now.
  CommandResult now = cluster().Run("scontrol update JobId=" + job_ + " StartTime=now");
  EXPECT_EQ(now.exit_code, 0) << now.output;

  ASSERT_NO_FATAL_FAILURE(ExpectFinishedAsUndisturbed());
  EXPECT_TRUE(ResumedFromACheckpoint()) << text_;
}

// A node of a --no-kill job dies (its slurmd and the job's processes on it killed, the node set
// DOWN): Slurm removes it from the job, the step fails, and the supervisor relaunches on the node
// that is left from the newest checkpoint; the ESTs make the result independent of the count.
TEST_F(FaultInjection, ALostNodeUnderNoKillIsDroppedAndTrainingFinishesOnTheRest) {
  ASSERT_NO_FATAL_FAILURE(StartJob("-w n3,n4 --no-kill"));
  const std::string pids = cluster().Export("ELASTIC_CLUSTER_DIR") + "/pids";
  CommandResult lose = cluster().Run(
      "kill -KILL $(awk '$1 == \"slurmd-n4\" {print $2}' " + pids + ") && "
      "for p in $(" + kPgrep + " -f " + Agents("train") + "); do "
      "  tr '\\0' '\\n' </proc/$p/environ | grep -qx SLURMD_NODENAME=n4 && kill -KILL $p; "
      "done; scontrol update NodeName=n4 State=DOWN Reason=fault-injection-test");
  ASSERT_EQ(lose.exit_code, 0) << lose.output;

  ASSERT_NO_FATAL_FAILURE(ExpectFinishedAsUndisturbed());
  EXPECT_TRUE(Says("Slurm removed 1 failed node(s) from the job; continuing on n3")) << text_;
  EXPECT_TRUE(Says("ranks=1")) << text_;
}

// One rank stopped (SIGSTOP) mid-run: its peer blocks in the next collective, its step watchdog
// (train.step_timeout_s) ends it, srun takes the step down (the stopped rank included) and the
// supervisor relaunches from the newest checkpoint.
TEST_F(FaultInjection, AStalledRankIsDetectedByTheStepTimeoutAndTheStepRelaunched) {
  ASSERT_NO_FATAL_FAILURE(StartJob("", "step_timeout_s = 10\n"));
  CommandResult stop = RunCommand(std::string(kPkill) + " -STOP -n -f " + Agents("train"));
  ASSERT_EQ(stop.exit_code, 0) << "no training rank to stop: " << stop.output;

  ASSERT_NO_FATAL_FAILURE(ExpectFinishedAsUndisturbed());
  EXPECT_TRUE(Says("no training step completed for")) << text_;
  EXPECT_TRUE(Says("restart 1 of 2 on the same nodes from the newest checkpoint")) << text_;
}

// The checkpoint filesystem fills up mid-run (a 4 MiB tmpfs, filled by a root-owned file): the
// next periodic checkpoint cannot be written, the job warns, leaves no partial file, keeps the
// newest valid checkpoint and trains on; once space is freed the later checkpoints are written
// and the job ends with the undisturbed run's parameters.
TEST_F(FaultInjection, AFullCheckpointFilesystemSkipsACheckpointAndTrainingGoesOn) {
  const std::filesystem::path ckpt = dir_.path() / "ckpt";
  std::filesystem::create_directories(ckpt);
  CommandResult mount = RunCommand("mount -t tmpfs -o size=4m,mode=0700 elastic-full-fs " +
                                   ShellQuote(ckpt.string()));
  ASSERT_EQ(mount.exit_code, 0) << "cannot mount a small tmpfs: " << mount.output;
  struct Unmount {
    std::string path;
    ~Unmount() { RunCommand("umount -l " + ShellQuote(path)); }
  } unmount{ckpt.string()};
  ASSERT_NO_FATAL_FAILURE(StartJob(""));
  // Fill every free byte (dd stops at ENOSPC); the next periodic checkpoint fails.
  RunCommand("dd if=/dev/zero of=" + ShellQuote((ckpt / "filler").string()) + " bs=64k");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(ScaledSeconds(300));
  while (Output().find("No space left on device") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::string warned = Output();
  ASSERT_NE(warned.find("training on (the newest valid checkpoint is kept)"), std::string::npos)
      << warned;
  // Nothing half-written: only whole checkpoints (and the filler) are there.
  CommandResult left = RunCommand("ls " + ShellQuote(ckpt.string()));
  EXPECT_EQ(left.output.find(".tmp-"), std::string::npos) << left.output;
  EXPECT_NE(left.output.find("ckpt-0000000150.elck"), std::string::npos) << left.output;
  std::filesystem::remove(ckpt / "filler");

  ASSERT_NO_FATAL_FAILURE(ExpectFinishedAsUndisturbed());
  // Checkpoints after the freed space were written again: the last one is the final step's.
  EXPECT_TRUE(std::filesystem::exists(ckpt / "ckpt-0000001500.elck"))
      << RunCommand("ls " + ShellQuote(ckpt.string())).output;
}

// elasticd hung: its socket takes connections and never answers. The supervisor gives up on each
// request after its own 5 s deadline (docs/security.md, "client deadlines"; the CLI's 30 s is
// tested with elasticd), says so once, and trains at the size Slurm gave it; the job ends with
// the undisturbed run's parameters.
TEST_F(FaultInjection, AnElasticdThatNeverAnswersCostsEachRequestFiveSecondsAndTrainingGoesOn) {
  const std::string silent = (dir_.path() / "silent.sock").string();
  const int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  struct Close {
    int fd;
    ~Close() { close(fd); }
  } closer{listener};
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, silent.c_str(), sizeof address.sun_path - 1);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(listen(listener, 64), 0);  // never accepted: the kernel queues each connection
  config_ = Config(dir_, "ckpt");
  out_ = (dir_.path() / "job.out").string();
  job_ = Submit("-N 1 --exclusive --elastic --elastic-est=4 -o " + out_ + " --wrap " +
                ShellQuote("exec " + AgentPath() + " run --socket " + ShellQuote(silent) +
                           " --config " + config_));

  ASSERT_NO_FATAL_FAILURE(ExpectFinishedAsUndisturbed());
  EXPECT_TRUE(Says("not registered with elasticd (elasticd at " + silent +
                   " did not answer within 5000 ms); training at a fixed size meanwhile"))
      << text_;
  EXPECT_FALSE(Says("registered with elasticd: nodes")) << text_;
}

}  // namespace
}  // namespace elastic::testing
