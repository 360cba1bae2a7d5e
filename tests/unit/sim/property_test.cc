// Property tests over seeded random traces: safety, completion, determinism, policy guarantees.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "scheduler/sim/cluster_spec.h"
#include "scheduler/sim/report.h"
#include "scheduler/sim/simulator.h"
#include "tests/unit/sim/random_trace.h"

namespace elastic::sim {
namespace {

struct Case {
  const char* policy;
  const char* cluster;
};

class RandomTraces : public ::testing::TestWithParam<Case> {};

TEST_P(RandomTraces, SafeCompleteAndDeterministic) {
  auto cluster = ParseClusterSpec(GetParam().cluster);
  ASSERT_EQ(cluster.error, "");
  auto made = policy::MakePolicy(GetParam().policy);
  ASSERT_TRUE(made);
  for (std::uint64_t seed = 1; seed <= 15; ++seed) {
    std::vector<TraceJob> trace = RandomTrace(seed, 80);
    SimOptions options;
    options.seed = seed;
    options.rigid_fraction = 0.3;  // rubick/elastic: a mix of rigid and elastic jobs
    // Odd seeds: replica memory up to 1.5 device memories, so plans (and plan-fixed minimums)
    // matter; even seeds: plain DP.
    options.memory_need_max = seed % 2 == 1 ? 1.5 : 0.0;
    // The simulator validates every decision (no over-allocation, sizes within [min,max]) and
    // re-checks per-node accounting after every event; any violation aborts with an error.
    SimResult first = Simulate(*cluster, trace, **made, options);
    ASSERT_EQ(first.error, "") << "seed " << seed;
    EXPECT_LE(first.max_used_devices, first.total_devices);
    for (const JobRecord& job : first.jobs) {
      EXPECT_GE(job.start_s, job.submit_s) << job.id;
      EXPECT_GT(job.end_s, job.start_s) << job.id;  // every job finished
      EXPECT_GE(job.peak_devices, job.min_devices) << job.id;
      EXPECT_LE(job.peak_devices, job.max_devices) << job.id;
    }
    SimResult second = Simulate(*cluster, trace, **made, options);
    EXPECT_EQ(ToJson(first, {"t", GetParam().cluster, seed}).dump(),
              ToJson(second, {"t", GetParam().cluster, seed}).dump());
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, RandomTraces,
                         ::testing::Values(Case{"backfill", "3x4,1x8:a100"},
                                           Case{"easyscale", "3x4,1x8:a100"},
                                           Case{"backfill", "2x8"}, Case{"easyscale", "2x8"},
                                           Case{"rubick", "3x4,1x8:a100"},
                                           Case{"elastic", "3x4,1x8:a100"},
                                           Case{"rubick", "2x8"}, Case{"elastic", "2x8"},
                                           Case{"rubick-e", "2x8"}, Case{"rubick-r", "2x8"},
                                           Case{"rubick-n", "3x4,1x8:a100"}),
                         [](const auto& info) {
                           std::string name = info.param.policy;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name + "_" + std::to_string(info.index);
                         });

// EASY guarantee: with run-time estimates that are upper bounds (no communication term, devices
// at least as fast as the reference), no backfilled job delays the head: every job starts no
// later than the earliest reservation it was given.
TEST(BackfillProperty, HeadReservationNeverDelayed) {
  auto cluster = ParseClusterSpec("3x4,1x8:a100");
  auto made = policy::MakePolicy("backfill");
  SimOptions options;
  options.min_comm_ratio = options.max_comm_ratio = 0.0;
  int reserved = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    SimResult result = Simulate(*cluster, RandomTrace(seed, 80), **made, options);
    ASSERT_EQ(result.error, "");
    for (const JobRecord& job : result.jobs) {
      if (job.first_reservation_s == policy::kNever) continue;
      ++reserved;
      EXPECT_LE(job.start_s, job.first_reservation_s + 1e-6) << "seed " << seed << " " << job.id;
    }
  }
  EXPECT_GT(reserved, 100);  // the traces are busy enough to exercise reservations
}

// Backfill-awareness: under `elastic`, elastic jobs' starts, growth and shrinks never make a rigid
// job start after the first reservation it was given (the simulator's run times are exact, and
// the policy checks every action against the devices held at the reservation).
TEST(ElasticProperty, RigidJobsNeverStartAfterTheirReservation) {
  for (const char* spec : {"3x4,1x8:a100", "2x8"}) {
    auto cluster = ParseClusterSpec(spec);
    auto made = policy::MakePolicy("elastic");
    int reserved = 0;
    for (std::uint64_t seed = 1; seed <= 30; ++seed) {
      SimOptions options;
      options.seed = seed;
      options.rigid_fraction = 0.5;
      SimResult result = Simulate(*cluster, RandomTrace(seed, 80), **made, options);
      ASSERT_EQ(result.error, "");
      for (const JobRecord& job : result.jobs) {
        if (job.first_reservation_s == policy::kNever) continue;
        EXPECT_TRUE(job.rigid) << job.id;
        ++reserved;
        EXPECT_LE(job.start_s, job.first_reservation_s + 1e-6)
            << spec << " seed " << seed << " " << job.id;
      }
    }
    EXPECT_GT(reserved, 20) << spec;  // busy enough to exercise reservations
  }
}

// SLA: with quota for every guaranteed job, rubick and elastic never run a guaranteed job on fewer
// devices than requested (capability-1 devices on 8-device nodes: minRes = requested).
TEST(RubickProperty, GuaranteedJobsNeverBelowTheirSla) {
  auto cluster = ParseClusterSpec("2x8");
  for (const char* name : {"rubick", "elastic"}) {
    auto made = policy::MakePolicy(name);
    for (std::uint64_t seed = 1; seed <= 15; ++seed) {
      SimOptions options;
      options.seed = seed;
      options.quota_fraction = 100.0;
      SimResult result = Simulate(*cluster, RandomTrace(seed, 80), **made, options);
      ASSERT_EQ(result.error, "");
      int guaranteed = 0;
      for (const Segment& segment : result.timeline) {
        const JobRecord& job = result.jobs[segment.job];
        if (!job.guaranteed || segment.to_s <= segment.from_s) continue;
        ++guaranteed;
        EXPECT_GE(segment.devices, job.requested_devices) << name << " seed " << seed << job.id;
      }
      EXPECT_GT(guaranteed, 10);
    }
  }
}

TEST(Simulator, UnplaceableRigidJobIsAnError) {
  auto cluster = ParseClusterSpec("1x4");
  auto made = policy::MakePolicy("backfill");
  std::vector<TraceJob> trace{{"big", 0, 8, 10, ""}};
  SimResult result = Simulate(*cluster, trace, **made);
  EXPECT_EQ(result.error,
            "elastic-sim: job big needs 8 devices of one type but the largest device type in "
            "the cluster has 4");
}

}  // namespace
}  // namespace elastic::sim
