// The --elastic* flags on a real cluster: listed in --help, every bad value refused before
// anything is queued, good values reaching the tasks' environment.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "spank/elastic_flags.h"
#include "tests/common/local_cluster.h"
#include "tests/common/temp_dir.h"

namespace elastic::testing {
namespace {

class SpankFlags : public ClusterSuite {
 protected:
  std::string QueueContents() const { return cluster().Run("squeue -h -o '%i %j'").output; }
};

TEST_F(SpankFlags, HelpListsEveryFlag) {
  for (const char* command : {"sbatch --help", "srun --help", "salloc --help"}) {
    CommandResult help = cluster().Run(command);
    EXPECT_EQ(help.exit_code, 0) << command << ": " << help.output;
    for (const auto& flag : spank::Flags()) {
      std::string listed = std::string("--") + flag.name;
      if (flag.arginfo != nullptr) listed += std::string("=") + flag.arginfo;
      EXPECT_NE(help.output.find(listed), std::string::npos) << command << " lacks " << listed;
    }
  }
}

struct BadSubmission {
  std::string command;
  std::string message;
};

TEST_F(SpankFlags, EveryBadFlagIsRefusedAndNothingIsQueued) {
  const std::string wrap = " --wrap true";
  const std::vector<BadSubmission> cases = {
      {"sbatch -N1 --elastic --elastic-est=0" + wrap,
       "elastic: --elastic-est: invalid value \"0\": expected an integer from 1 to 1048576"},
      {"sbatch -N1 --elastic --elastic-est=many" + wrap, "--elastic-est: invalid value \"many\""},
      {"sbatch -N1 --elastic --elastic-plan=fsdp" + wrap,
       "--elastic-plan: invalid value \"fsdp\": expected one of auto, dp"},
      {"sbatch -N1 --elastic --elastic-class=gold" + wrap,
       "--elastic-class: invalid value \"gold\": expected one of guaranteed"},
      {"sbatch -N1 --elastic --elastic-determinism=d9" + wrap,
       "--elastic-determinism: invalid value \"d9\": expected one of d0, d1, d2, statistical"},
      {"sbatch -N1 --elastic-est=4" + wrap, "--elastic-est needs --elastic"},
      {"sbatch -N1 --elastic --elastic-plan=tp" + wrap,
       "--elastic-plan=tp is not bitwise reproducible under --elastic-determinism=d1"},
      {"SLURM_ELASTIC_CLASS=platinum sbatch -N1 --elastic" + wrap,
       "SLURM_ELASTIC_CLASS (read because --elastic-class was not given): invalid value"},
      {"salloc --no-shell -N1 --elastic --elastic-est=-2", "--elastic-est: invalid value \"-2\""},
      {"srun -N1 --elastic --elastic-plan=zero true", "--elastic-plan: invalid value \"zero\""},
      {"srun -N1 --elastic-class=background true", "--elastic-class needs --elastic"},
  };
  for (const auto& c : cases) {
    CommandResult result = cluster().Run(c.command);
    EXPECT_NE(result.exit_code, 0) << c.command << " was accepted: " << result.output;
    EXPECT_NE(result.output.find(c.message), std::string::npos)
        << c.command << "\nprinted: " << result.output << "\nexpected: " << c.message;
    EXPECT_EQ(QueueContents(), "") << "queued after: " << c.command;
  }
  CommandResult accounted = cluster().Run("sacct -n -X -a -o JobID");
  EXPECT_EQ(accounted.output.find_first_not_of(" \n"), std::string::npos)
      << "refused submissions reached the accounting database: " << accounted.output;
}

TEST_F(SpankFlags, SettingsReachEveryTaskAndTheBatchScript) {
  TempDir dir;
  std::string out = (dir.path() / "out.txt").string();
  CommandResult submit = cluster().Run(
      "sbatch --parsable -N2 --elastic --elastic-est=8 --elastic-plan=dp "
      "--elastic-determinism=d2 -o " + ShellQuote(out) +
      " --wrap 'env | grep ^SLURM_ELASTIC | sort | sed s/^/batch:/; "
      "srun -N2 sh -c \"env | grep ^SLURM_ELASTIC | sort | sed s/^/\\$SLURMD_NODENAME:/\"'");
  ASSERT_EQ(submit.exit_code, 0) << submit.output;
  std::string job = submit.output.substr(0, submit.output.find_first_of(";\n"));
  ASSERT_EQ(cluster().WaitForJob(job, 60), "COMPLETED");
  std::string text = RunCommand("cat " + ShellQuote(out)).output;
  std::string ckpt_dir = cluster().checkpoint_base() + "/root/" + job;
  for (const std::string who : {"batch", "n1", "n2"}) {
    for (const std::string var : {"SLURM_ELASTIC=1", "SLURM_ELASTIC_EST=8",
                                  "SLURM_ELASTIC_PLAN=dp", "SLURM_ELASTIC_DETERMINISM=d2"}) {
      EXPECT_NE(text.find(who + ":" + var), std::string::npos) << who << " lacks " << var
                                                               << " in:\n" << text;
    }
    EXPECT_NE(text.find(who + ":SLURM_ELASTIC_CHECKPOINT_DIR=" + ckpt_dir), std::string::npos)
        << text;
  }
  struct stat st {};
  ASSERT_EQ(stat(ckpt_dir.c_str(), &st), 0) << ckpt_dir;
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

// A user plants a file where their next job's checkpoint directory goes. slurmstepd (root)
// refuses to use it, and that must fail the job, with the reason in its output, but never
// drain the node (an error from a remote SPANK init callback would: any user could take nodes
// out of service at will).
TEST_F(SpankFlags, ARefusedCheckpointDirFailsTheJobButNeverDrainsTheNode) {
  TempDir dir;
  const std::string out = (dir.path() / "out.txt").string();
  CommandResult held = cluster().Run("sbatch --parsable -H --wrap true");
  ASSERT_EQ(held.exit_code, 0) << held.output;
  const long next = std::stol(held.output) + 1;
  cluster().Run("scancel " + held.output);
  const std::string user_dir = cluster().checkpoint_base() + "/root";
  CommandResult plant = RunCommand("mkdir -p -m 0700 " + ShellQuote(user_dir) + " && ln -sfn " +
                                   "/etc " + ShellQuote(user_dir + "/" + std::to_string(next)));
  ASSERT_EQ(plant.exit_code, 0) << plant.output;

  CommandResult submit = cluster().Run("sbatch --parsable -N1 -w n3 --elastic -o " +
                                       ShellQuote(out) + " --wrap 'echo the task ran'");
  ASSERT_EQ(submit.exit_code, 0) << submit.output;
  const std::string job = submit.output.substr(0, submit.output.find_first_of(";\n"));
  ASSERT_EQ(job, std::to_string(next)) << "another job took the planted id";
  EXPECT_EQ(cluster().WaitForJob(job, 60), "FAILED");
  const std::string text = RunCommand("cat " + ShellQuote(out) + " 2>&1").output;
  EXPECT_EQ(text.find("the task ran"), std::string::npos) << text;
  CommandResult node = cluster().Run("sinfo -h -n n3 -o '%T %E'");
  EXPECT_EQ(node.output.find("drain"), std::string::npos) << node.output;
  EXPECT_EQ(node.output.rfind("idle", 0), 0u) << node.output;
  // The node still runs the next job.
  CommandResult next_job = cluster().Run("srun -N1 -w n3 echo ok");
  EXPECT_EQ(next_job.output, "ok\n") << next_job.output;
}

TEST_F(SpankFlags, NonElasticJobsAreUntouched) {
  CommandResult run = cluster().Run("srun -N1 sh -c 'env | grep -c ^SLURM_ELASTIC || true'");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output, "0\n");
}

}  // namespace
}  // namespace elastic::testing
