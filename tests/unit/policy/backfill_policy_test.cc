// Backfill policy in isolation: queue order, reservation, backfill rules, factory errors.
#include "scheduler/policy/backfill_policy.h"

#include <gtest/gtest.h>

#include "scheduler/policy/placement.h"

namespace elastic::policy {
namespace {

ClusterState Cluster(int nodes, int devices, const std::string& type = "gpu") {
  ClusterState cluster;
  for (int i = 0; i < nodes; ++i) {
    cluster.nodes.push_back({type + std::to_string(i), type, 1.0, devices, devices, 64, 64,
                             1 << 20, 1 << 20});
  }
  return cluster;
}

JobState Rigid(const std::string& id, int devices, double submit, double runtime) {
  JobState job;
  job.id = id;
  job.min_devices = job.max_devices = job.requested_devices = devices;
  job.submit_time_s = submit;
  job.expected_runtime_s = runtime;
  job.profile.ests = devices;
  return job;
}

void Hold(ClusterState& cluster, JobState& job, Allocation allocation, double end) {
  for (const Slice& slice : allocation) cluster.nodes[slice.node].free_devices -= slice.devices;
  job.allocation = std::move(allocation);
  job.expected_end_s = end;
}

TEST(MakePolicy, UnknownNameListsChoices) {
  auto made = MakePolicy("fifo");
  EXPECT_FALSE(made);
  EXPECT_EQ(made.error,
            "elastic policy: unknown policy \"fifo\": expected one of backfill, easyscale, "
            "rubick, elastic, rubick-e, rubick-r, rubick-n");
  EXPECT_EQ((*MakePolicy("backfill"))->Name(), "backfill");
  EXPECT_TRUE((*MakePolicy("easyscale"))->WantsElasticJobs());
}

TEST(Backfill, StartsInQueueOrderWithBestFit) {
  ClusterState cluster = Cluster(2, 4);
  JobState running = Rigid("r", 3, 0, 100);
  Hold(cluster, running, {{0, 3}}, 100);
  std::vector<JobState> jobs{running, Rigid("b", 1, 2, 10), Rigid("a", 2, 1, 10)};
  PolicyOutput out = BackfillPolicy({}).Decide(cluster, jobs, 5);
  ASSERT_EQ(out.decisions.size(), 2u);
  EXPECT_EQ(out.decisions[0].job_id, "a");  // earlier submit first
  EXPECT_EQ(out.decisions[0].allocation, (Allocation{{1, 2}}));
  EXPECT_EQ(out.decisions[1].job_id, "b");
  EXPECT_EQ(out.decisions[1].allocation, (Allocation{{0, 1}}));  // best fit: the fuller node
  EXPECT_TRUE(out.reservations.empty());
}

TEST(Backfill, ProtectsHeadReservation) {
  ClusterState cluster = Cluster(2, 4);
  JobState long_job = Rigid("long", 4, 0, 1000);
  JobState short_job = Rigid("short", 2, 0, 100);
  Hold(cluster, long_job, {{0, 4}}, 1000);
  Hold(cluster, short_job, {{1, 2}}, 100);
  // head needs 6: free 2 now, 4 at t=100 -> reserved at 1000 (needs long's node too).
  std::vector<JobState> jobs{long_job, short_job, Rigid("head", 6, 1, 50),
                             Rigid("fits_gap", 2, 2, 900), Rigid("too_long", 2, 3, 2000)};
  PolicyOutput out = BackfillPolicy({}).Decide(cluster, jobs, 10);
  ASSERT_EQ(out.reservations.size(), 1u);
  EXPECT_EQ(out.reservations[0].job_id, "head");
  EXPECT_DOUBLE_EQ(out.reservations[0].start_s, 1000.0);
  // fits_gap ends at 910 <= 1000: backfilled onto the 2 free devices. too_long (ends 2010) could
  // only use the 2 devices the head leaves over at t=1000, but nothing is free any more.
  ASSERT_EQ(out.decisions.size(), 1u);
  EXPECT_EQ(out.decisions[0].job_id, "fits_gap");
}

TEST(Backfill, UsesExtraDevicesAtReservation) {
  ClusterState cluster = Cluster(3, 4);
  JobState running = Rigid("r", 8, 0, 500);
  Hold(cluster, running, {{0, 4}, {1, 4}}, 500);
  // head needs 10: free 4 now, 12 at 500 -> reserved at 500 with 2 extra.
  std::vector<JobState> jobs{running, Rigid("head", 10, 1, 50), Rigid("long2", 2, 2, 5000),
                             Rigid("long1", 1, 3, 5000)};
  PolicyOutput out = BackfillPolicy({}).Decide(cluster, jobs, 10);
  ASSERT_EQ(out.reservations.size(), 1u);
  EXPECT_DOUBLE_EQ(out.reservations[0].start_s, 500.0);
  ASSERT_EQ(out.decisions.size(), 1u);
  EXPECT_EQ(out.decisions[0].job_id, "long2");  // takes the 2 extra; long1 would then delay head
}

}  // namespace
}  // namespace elastic::policy
