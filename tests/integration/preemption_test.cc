// Preemption live (issue 28 item 7, Rubick §5): a best-effort elastic job holds every node of
// the 4-node cluster; a guaranteed job (-N 4: shrinking the other to its MIN of 1 frees only 3)
// arrives and elasticd requeues the best-effort job, whose ranks checkpoint on Slurm's SIGTERM.
// The guaranteed job runs within 60 s; the preempted job runs again after it, resumes from its
// checkpoint and ends with the bits of one undisturbed process. A rigid job does the same when
// Slurm starts it next ([scheduler] preempt_for_rigid).
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <regex>
#include <thread>

#include "tests/common/agent_runs.h"
#include "tests/common/elasticd_cluster.h"
#include "tests/common/temp_dir.h"
#include "tests/common/time_scale.h"

namespace elastic::testing {
namespace {

class Preemption : public ElasticdClusterSuite {
 protected:
  static void SetUpTestSuite() { StartWithElasticd(); }

  static std::string Field(const std::string& job, const std::string& name) {
    CommandResult r = cluster().Run("scontrol show job " + job);
    std::smatch m;
    return std::regex_search(r.output, m, std::regex(name + "=(\\S+)")) ? m[1].str() : "";
  }

  // Seconds until `job` is RUNNING (or past it), or -1 after `timeout_s`.
  static double SecondsUntilRunning(const std::string& job, int timeout_s) {
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < std::chrono::seconds(timeout_s)) {
      const std::string state = Field(job, "JobState");
      if (state == "RUNNING" || state == "COMPLETED" || state == "COMPLETING") {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    return -1.0;
  }

  // Once `preemptor` has completed, starts the requeued `job` at once (without Slurm's requeue
  // delay) and waits for it to end; returns its output file's text, "" unless it completed.
  static std::string RunAgainAfter(const std::string& preemptor, const std::string& job,
                                   const std::string& out) {
    EXPECT_EQ(cluster().WaitForJob(preemptor, ScaledSeconds(120)), "COMPLETED");
    cluster().Run("scontrol update JobId=" + job + " StartTime=now");
    const std::string state = cluster().WaitForJob(job, 900);
    const std::string text = RunCommand("cat " + ShellQuote(out)).output;
    EXPECT_EQ(state, "COMPLETED") << text << "\n" << Log();
    return state == "COMPLETED" ? text : "";
  }
};

// The line a resumed agent prints, naming the checkpoint its ranks wrote on SIGTERM.
const std::regex kResumed("resuming from \\S+ckpt-000000\\d{4}\\.elck");

FmnistJob Job(const TempDir& dir, const std::string& name) {
  FmnistJob job;
  job.ests = 8;
  job.global_batch = 64;
  job.seed = 11;
  job.steps = 1200;  // preempted a few seconds after it reaches 4 nodes, near step 300
  job.log_every = 500;
  job.checkpoint_dir = (dir.path() / name).string();
  return job;
}

TEST_F(Preemption, AGuaranteedJobPreemptsTheBestEffortJobWhichResumesWithTheUndisturbedBits) {
  TempDir dir;
  const std::string config = dir.Write("job.toml", FmnistJobText(Job(dir, "job"))).string();
  const std::string out = (dir.path() / "job.out").string();
  // --open-mode=append: the requeued run's output follows the first one's.
  const auto [job, hold] = GrowToAllFourNodes(config, out, "--requeue --open-mode=append");
  ASSERT_FALSE(job.empty());
  EXPECT_NE(AdminComment(job).find("class=best-effort"), std::string::npos) << AdminComment(job);

  const std::string guaranteed = Submit(
      "-N 4 --exclusive --elastic --elastic-class=guaranteed -o /dev/null --wrap 'sleep 15'");
  const double waited = SecondsUntilRunning(guaranteed, ScaledSeconds(60));
  const std::string log = Log();
  ASSERT_GE(waited, 0.0) << Field(guaranteed, "Reason") << "\n" << log;
  std::cout << "guaranteed job running " << waited << " s after submission\n";
  EXPECT_NE(log.find("job " + job + " preempted (requeue): guaranteed job " + guaranteed),
            std::string::npos)
      << log;
  EXPECT_NE(AdminComment(guaranteed).find("class=guaranteed"), std::string::npos)
      << AdminComment(guaranteed);
  EXPECT_EQ(Field(job, "JobState"), "PENDING");  // requeued, not cancelled
  EXPECT_EQ(Field(job, "Restarts"), "1");

  // After the guaranteed job, the preempted one runs again and resumes from its checkpoint.
  const std::string text = RunAgainAfter(guaranteed, job, out);
  ASSERT_FALSE(text.empty());
  std::smatch resumed;
  EXPECT_TRUE(std::regex_search(text, resumed, kResumed)) << text;
  if (!resumed.empty()) std::cout << resumed[0] << "\n";  // for the record: where it resumed
  const std::string reference =
      dir.Write("reference.toml", FmnistJobText(Job(dir, "reference"))).string();
  const std::string expected = OneProcessParamsHash(reference);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(LastParamsHash(text), expected) << text;
  EXPECT_EQ(cluster().WaitForJob(hold, 10), "COMPLETED");
}

// Elastic best-effort jobs give back what Slurm's rigid queue needs ([scheduler]
// preempt_for_rigid): a rigid -N 4 job, Slurm's next, that shrinking alone cannot start has the
// grown job requeued; it runs within 60 s, and the requeued job resumes from its checkpoint.
TEST_F(Preemption, ARigidJobSlurmStartsNextPreemptsTheBestEffortJobWhichResumes) {
  TempDir dir;
  const std::string config = dir.Write("job.toml", FmnistJobText(Job(dir, "job"))).string();
  const std::string out = (dir.path() / "job.out").string();
  const auto [job, hold] = GrowToAllFourNodes(config, out, "--requeue --open-mode=append");
  ASSERT_FALSE(job.empty());
  const std::string rigid = Submit("-N 4 --exclusive -o /dev/null --wrap 'sleep 10'");
  const double waited = SecondsUntilRunning(rigid, ScaledSeconds(60));
  const std::string log = Log();
  ASSERT_GE(waited, 0.0) << Field(rigid, "Reason") << "\n" << log;
  std::cout << "rigid job running " << waited << " s after submission\n";
  EXPECT_NE(log.find("job " + job + " preempted (requeue): rigid job " + rigid +
                     " (4 nodes, Slurm's next)"),
            std::string::npos)
      << log;
  EXPECT_EQ(Field(job, "JobState"), "PENDING");
  EXPECT_EQ(Field(job, "Restarts"), "1");
  const std::string text = RunAgainAfter(rigid, job, out);
  ASSERT_FALSE(text.empty());
  EXPECT_TRUE(std::regex_search(text, kResumed)) << text;
  EXPECT_EQ(cluster().WaitForJob(hold, 10), "COMPLETED");
}

}  // namespace
}  // namespace elastic::testing
