// elasticd takes job_submit.lua's nice back from an elastic job that has waited long (issue 28;
// policy/nice_lift.h) on a real 4-node cluster: the job's Nice goes from 1000000 to its owner's
// own, elasticd logs why, a rigid job's nice is left alone, and Slurm then starts the lifted job
// ahead of a rigid job submitted after it, which it would otherwise let go first.
#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <thread>

#include "tests/common/elasticd_cluster.h"
#include "tests/common/time_scale.h"

namespace elastic::testing {
namespace {

class NiceLift : public ElasticdClusterSuite {
 protected:
  // The cluster's elasticd with nice_lift_after = 0.1: a job with a 1-minute limit is lifted
  // after 6 s of waiting.
  static void SetUpTestSuite() {
    StartWithElasticd();
    const std::string dir = cluster().Export("ELASTIC_CLUSTER_DIR");
    CommandResult edit = cluster().Run(
        "sed -i 's/^\\[scheduler\\]$/[scheduler]\\nnice_lift_after = 0.1/' " + dir +
        "/etc/elasticd.toml && grep -q nice_lift_after " + dir + "/etc/elasticd.toml");
    ASSERT_EQ(edit.exit_code, 0) << edit.output;
    RestartElasticd();
  }

  static std::string Field(const std::string& job, const std::string& name) {
    CommandResult r = cluster().Run("scontrol show job " + job);
    std::smatch m;
    return std::regex_search(r.output, m, std::regex(name + "=(\\S+)")) ? m[1].str() : "";
  }

  // Polls until `job`'s field `name` equals `value`; false after `timeout_s` (scaled).
  static bool WaitForField(const std::string& job, const std::string& name,
                           const std::string& value, int timeout_s) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(ScaledSeconds(timeout_s));
    while (std::chrono::steady_clock::now() < deadline) {
      if (Field(job, name) == value) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    return false;
  }
};

TEST_F(NiceLift, AnElasticJobThatWaitedItsBoundGetsItsPlaceInTheQueueBack) {
  const std::string hold = Submit("-N 4 --exclusive -o /dev/null --wrap 'sleep 25'");
  ASSERT_TRUE(WaitForField(hold, "JobState", "RUNNING", 30));
  const std::string elastic =
      Submit("-N 4 --exclusive --elastic -t 1 -o /dev/null --wrap 'sleep 1'");
  const std::string rigid = Submit("-N 1 --exclusive --nice=50 -t 1 -o /dev/null --wrap 'sleep 1'");
  EXPECT_EQ(Field(elastic, "Nice"), "1000000");  // job_submit.lua's

  ASSERT_TRUE(WaitForField(elastic, "Nice", "0", 20)) << Field(elastic, "Nice") << "\n" << Log();
  const std::string log = Log();
  EXPECT_TRUE(std::regex_search(log, std::regex("job " + elastic +
                                                " nice lifted \\(Nice=0\\): waited \\d+ s, "
                                                "at least 6 s \\(0.1 x its time limit of 60 s\\)")))
      << log;
  EXPECT_EQ(Field(rigid, "Nice"), "50");  // a rigid job's own nice is not elasticd's
  EXPECT_EQ(log.find("job " + rigid + " nice"), std::string::npos) << log;

  // Lifted, the older elastic job comes first: it takes all four nodes when the holder ends,
  // and the rigid job (ahead of it while it was niced) waits for it.
  ASSERT_TRUE(WaitForField(elastic, "JobState", "RUNNING", 60)) << Field(elastic, "Reason");
  EXPECT_EQ(Field(rigid, "JobState"), "PENDING");
  EXPECT_EQ(cluster().WaitForJob(rigid, ScaledSeconds(120)), "COMPLETED");
}

}  // namespace
}  // namespace elastic::testing
