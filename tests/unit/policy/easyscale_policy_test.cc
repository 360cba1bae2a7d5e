// EasyScale policy in isolation: greedy order, ties, bounds, heterogeneity, resize throttling.
#include "scheduler/policy/easyscale_policy.h"

#include <gtest/gtest.h>

#include "scheduler/policy/placement.h"
#include "tests/unit/policy/cluster_builder.h"

namespace elastic::policy {
namespace {

JobState Elastic(const std::string& id, int min, int max, double submit, double comm = 0.0) {
  JobState job;
  job.id = id;
  job.elastic = true;
  job.min_devices = min;
  job.max_devices = job.requested_devices = max;
  job.submit_time_s = submit;
  job.profile = {max, comm};
  return job;
}

TEST(EasyScale, PendingJobsStartBeforeRunningJobsGrowAndTiesGoToMoreDevices) {
  ClusterState cluster;
  AddNodes(cluster, 1, 4, "gpu", 1.0);
  // Linear speedup (comm 0): every +d proposal of x is worth 1.0 per device, so it takes all 4.
  std::vector<JobState> jobs{Elastic("x", 1, 4, 0), Elastic("y", 1, 4, 1)};
  PolicyOutput out = EasyScalePolicy({}).Decide(cluster, jobs, 2);
  ASSERT_EQ(out.decisions.size(), 1u);
  EXPECT_EQ(out.decisions[0].job_id, "x");
  EXPECT_EQ(DeviceCount(out.decisions[0].allocation), 4);
  // With communication cost, a second device is worth less than starting y.
  jobs = {Elastic("x", 1, 4, 0, 0.05), Elastic("y", 1, 4, 1, 0.05)};
  out = EasyScalePolicy({}).Decide(cluster, jobs, 2);
  ASSERT_EQ(out.decisions.size(), 2u);
  EXPECT_EQ(DeviceCount(out.decisions[0].allocation) + DeviceCount(out.decisions[1].allocation),
            4);
  for (const Decision& decision : out.decisions) {
    EXPECT_EQ(decision.kind, DecisionKind::kStart);
    EXPECT_GE(DeviceCount(decision.allocation), 1);
    EXPECT_NE(decision.reason.find("easyscale: "), std::string::npos);
  }
}

TEST(EasyScale, RespectsMinAndMax) {
  ClusterState cluster;
  AddNodes(cluster, 2, 8, "gpu", 1.0);
  std::vector<JobState> jobs{Elastic("small", 1, 2, 0, 0.0), Elastic("gang", 6, 8, 1, 0.01)};
  PolicyOutput out = EasyScalePolicy({}).Decide(cluster, jobs, 2);
  ASSERT_EQ(out.decisions.size(), 2u);
  for (const Decision& decision : out.decisions) {
    const JobState& job = decision.job_id == "small" ? jobs[0] : jobs[1];
    EXPECT_GE(DeviceCount(decision.allocation), job.min_devices) << decision.job_id;
    EXPECT_LE(DeviceCount(decision.allocation), job.max_devices) << decision.job_id;
  }
}

TEST(EasyScale, PlacesNewJobsCompactly) {
  ClusterState cluster;
  AddNodes(cluster, 2, 8, "gpu", 1.0);
  cluster.nodes[0].free_devices = 3;  // something else holds 5 devices of node 0
  std::vector<JobState> jobs{Elastic("j", 1, 8, 0, 0.02)};
  PolicyOutput out = EasyScalePolicy({}).Decide(cluster, jobs, 1);
  ASSERT_EQ(out.decisions.size(), 1u);
  EXPECT_EQ(out.decisions[0].allocation, (Allocation{{1, 8}}));  // one node, not 3 + 5
}

TEST(EasyScale, UsesFasterDevicesAndMixesTypesPerEquation1) {
  ClusterState cluster;
  AddNodes(cluster, 1, 2, "v100", 1.0);
  AddNodes(cluster, 1, 2, "a100", 2.0);
  std::vector<JobState> jobs{Elastic("j", 1, 4, 0, 0.0)};
  PolicyOutput out = EasyScalePolicy({}).Decide(cluster, jobs, 1);
  ASSERT_EQ(out.decisions.size(), 1u);
  // The a100 pair is proposed first (2.0 per device); then the v100s add work under Eq. 1.
  const Allocation& allocation = out.decisions[0].allocation;
  ASSERT_FALSE(allocation.empty());
  EXPECT_EQ(allocation.back(), (Slice{1, 2}));
}

TEST(EasyScale, ThrottlesResizesOfRunningJobs) {
  ClusterState cluster;
  AddNodes(cluster, 1, 4, "gpu", 1.0);
  JobState running = Elastic("r", 1, 4, 0, 0.0);
  running.allocation = {{0, 1}};
  cluster.nodes[0].free_devices = 3;
  running.last_resize_s = 100;
  running.expected_end_s = 10'000;
  PolicyOptions options;
  options.min_resize_interval_s = 600;
  EXPECT_TRUE(EasyScalePolicy(options).Decide(cluster, {running}, 200).decisions.empty());
  PolicyOutput out = EasyScalePolicy(options).Decide(cluster, {running}, 800);
  ASSERT_EQ(out.decisions.size(), 1u);
  EXPECT_EQ(out.decisions[0].kind, DecisionKind::kResize);
  EXPECT_EQ(DeviceCount(out.decisions[0].allocation), 4);
  // Not worth it when the job is about to end anyway.
  running.expected_end_s = 810;
  EXPECT_TRUE(EasyScalePolicy(options).Decide(cluster, {running}, 800).decisions.empty());
}

}  // namespace
}  // namespace elastic::policy
