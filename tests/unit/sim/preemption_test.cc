// Preemption in the replay (Rubick §5): a hand-checked schedule, and properties over random traces.
#include <gtest/gtest.h>

#include <algorithm>

#include "scheduler/sim/cluster_spec.h"
#include "scheduler/sim/report.h"
#include "scheduler/sim/simulator.h"
#include "tests/unit/sim/random_trace.h"

namespace elastic::sim {
namespace {

// One 4-device node, quota 4 for the tenant. Best-effort b (4 GPUs, 5,000 s) runs on all four from
// t=0. Guaranteed g (4 GPUs, 1,000 s, minRes 4) arrives at t=2,000: b may be reconfigured
// ((2000 - 30)/2000 >= 0.97), shrinks to its minimum of 1 and is then preempted; g runs
// 2,000-3,000. b restarts at 3,000 on all four, pays the 30 s resize cost, and does its remaining
// 3,000 s: it ends at 6,030, JCT 6,030 (the whole time since submission).
TEST(PreemptionReplay, GuaranteedJobPreemptsBestEffortWhichResumesLater) {
  SimOptions options;
  options.quota_fraction = 1.0;
  const std::string b = IdOfClass("b", false, options);
  const std::string g = IdOfClass("g", true, options);
  std::vector<TraceJob> trace{{b, 0, 4, 5000, ""}, {g, 2000, 4, 1000, ""}};
  auto cluster = ParseClusterSpec("1x4");
  for (const char* name : {"rubick", "elastic"}) {
    auto made = policy::MakePolicy(name);
    SimResult result = Simulate(*cluster, trace, **made, options);
    ASSERT_EQ(result.error, "") << name;
    const JobRecord& be = result.jobs[0];
    const JobRecord& gu = result.jobs[1];
    EXPECT_EQ(be.start_s, 0.0) << name;  // the first start: the queueing delay is not reset
    EXPECT_EQ(be.preemptions, 1) << name;
    EXPECT_EQ(be.resizes, 0) << name;
    EXPECT_NEAR(be.end_s, 6030.0, 1e-6) << name;
    EXPECT_NEAR(gu.start_s, 2000.0, 1e-6) << name;
    EXPECT_NEAR(gu.end_s, 3000.0, 1e-6) << name;
    EXPECT_EQ(gu.preemptions, 0) << name;
    EXPECT_EQ(result.preemptions, 1) << name;
    EXPECT_EQ(result.preempted_jobs, 1) << name;
    EXPECT_NEAR(result.avg_jct_s, (6030.0 + 1000.0) / 2, 1e-6) << name;
    // b held 4 devices for 2,000 s and 4 for 3,030 s (the pause holds them too).
    EXPECT_NEAR(be.device_seconds, 4 * 2000.0 + 4 * 3030.0, 1e-6) << name;
  }
  // Without quota g is best-effort too: nobody is preempted, g waits for b.
  options.quota_fraction = 0.0;
  SimResult plain = Simulate(*cluster, trace, **policy::MakePolicy("rubick"), options);
  ASSERT_EQ(plain.error, "");
  EXPECT_EQ(plain.preemptions, 0);
  EXPECT_NEAR(plain.jobs[0].end_s, 5000.0, 1e-6);
}

// Over random traces with guaranteed jobs and quotas: preemptions happen, the simulator never sees
// a guaranteed or rigid job preempted (it rejects such a decision, failing the replay), every
// job finishes, and replays are deterministic.
TEST(PreemptionProperty, OnlyBestEffortElasticJobsArePreemptedAndAllFinish) {
  for (const char* spec : {"2x8", "3x4,1x8:a100"}) {
    auto cluster = ParseClusterSpec(spec);
    for (const char* name : {"rubick", "elastic"}) {
      auto made = policy::MakePolicy(name);
      long preemptions = 0;
      for (std::uint64_t seed = 1; seed <= 12; ++seed) {
        SimOptions options;
        options.seed = seed;
        options.quota_fraction = 1.0;
        options.rigid_fraction = 0.2;
        options.elastic_min_fraction = seed % 2 == 0 ? 0.5 : 0.0;  // fewer devices to shrink
        std::vector<TraceJob> trace = RandomTrace(seed, 80);
        SimResult result = Simulate(*cluster, trace, **made, options);
        ASSERT_EQ(result.error, "") << spec << " " << name << " seed " << seed;
        long counted = 0;
        for (const JobRecord& job : result.jobs) {
          EXPECT_GT(job.end_s, job.start_s) << job.id;
          counted += job.preemptions;
          if (job.preemptions > 0) {
            EXPECT_FALSE(job.guaranteed) << job.id;
            EXPECT_FALSE(job.rigid) << job.id;
          }
        }
        EXPECT_EQ(counted, result.preemptions);
        preemptions += result.preemptions;
        SimResult again = Simulate(*cluster, trace, **made, options);
        EXPECT_EQ(ToJson(result, {"t", spec, seed}).dump(),
                  ToJson(again, {"t", spec, seed}).dump());
      }
      EXPECT_GT(preemptions, 0) << spec << " " << name;
    }
  }
}

}  // namespace
}  // namespace elastic::sim
