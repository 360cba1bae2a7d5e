// A cluster that cannot grow jobs (SchedulerParameters without permit_job_expansion): --elastic
// submissions are refused before anything is queued, with the reason and the fix; submissions
// without --elastic are untouched.
#include <gtest/gtest.h>

#include "tests/common/local_cluster.h"

namespace elastic::testing {
namespace {

constexpr const char* kRefusal =
    "elastic: --elastic: this cluster cannot resize jobs: SchedulerParameters lacks "
    "permit_job_expansion";

class SpankRefuse : public ClusterSuite {
 protected:
  static void SetUpTestSuite() {
    LocalCluster::Options options;
    options.scheduler_parameters = "batch_sched_delay=0";
    StartSuiteCluster(options);
  }
  std::string QueueContents() const { return cluster().Run("squeue -h -o '%i %j'").output; }
};

TEST_F(SpankRefuse, ElasticSubmissionsAreRefusedAndNothingIsQueued) {
  for (const char* command : {"sbatch --elastic -N 1-2 --wrap true",
                              "salloc --no-shell --elastic -N 1-2", "srun --elastic -N 1-2 true"}) {
    CommandResult result = cluster().Run(command);
    EXPECT_NE(result.exit_code, 0) << command << " was accepted: " << result.output;
    EXPECT_NE(result.output.find(kRefusal), std::string::npos) << command << ": " << result.output;
    EXPECT_NE(result.output.find("Submit without --elastic"), std::string::npos) << result.output;
    EXPECT_EQ(QueueContents(), "") << "queued after: " << command;
  }
  CommandResult accounted = cluster().Run("sacct -n -X -a -o JobID");
  EXPECT_EQ(accounted.output.find_first_not_of(" \n"), std::string::npos)
      << "refused submissions reached the accounting database: " << accounted.output;
}

TEST_F(SpankRefuse, NonElasticSubmissionsStillRun) {
  CommandResult submit = cluster().Run("sbatch --parsable -N 1 --wrap true");
  ASSERT_EQ(submit.exit_code, 0) << submit.output;
  EXPECT_EQ(submit.output.find("elastic:"), std::string::npos) << submit.output;
  std::string job = submit.output.substr(0, submit.output.find_first_of(";\n"));
  EXPECT_EQ(cluster().WaitForJob(job, 60), "COMPLETED");
  CommandResult step = cluster().Run("srun -N 1 echo step-ran");
  EXPECT_EQ(step.exit_code, 0) << step.output;
  EXPECT_NE(step.output.find("step-ran"), std::string::npos) << step.output;
}

TEST_F(SpankRefuse, StepsInsideARunningJobAreNotRefused) {
  // srun inside a job inherits --elastic from an elastic job; it starts a step, not a new
  // allocation, so the cluster check must not stop it.
  CommandResult result = cluster().Run("salloc -N 1 srun --elastic -N 1 echo inner-step-ran");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("inner-step-ran"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("elastic:"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace elastic::testing
