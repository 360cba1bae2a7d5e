// Property tests with CPUs and host memory scheduled (SimOptions::cpu_need_max > 0): no node's
// devices, CPUs or memory are ever over-allocated, replays are deterministic, guaranteed jobs keep
// their SLA and rigid jobs are not delayed past their reservation under elastic.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "scheduler/sim/cluster_spec.h"
#include "scheduler/sim/report.h"
#include "scheduler/sim/simulator.h"
#include "tests/unit/sim/random_trace.h"

namespace elastic::sim {
namespace {

// CPU needs of 1-12 threads per device against 4-8 per device on the nodes, 4 GiB of host memory
// per device, and (odd seeds) replica memory up to 1.8 device memories, so ZeRO-Offload's host
// memory is in play.
SimOptions CpuOptions(std::uint64_t seed) {
  SimOptions options;
  options.seed = seed;
  options.rigid_fraction = 0.3;
  options.cpu_need_min = 1.0;
  options.cpu_need_max = 12.0;
  options.memory_mb_per_gpu = 4096;
  options.memory_need_max = seed % 2 == 1 ? 1.8 : 0.0;
  return options;
}

class CpuTraces : public ::testing::TestWithParam<const char*> {};

TEST_P(CpuTraces, NeverOverAllocatesAndIsDeterministic) {
  const char* spec = "3x4:cpus=16:mem=48G,1x8:a100:cpus=64:mem=96G";
  auto cluster = ParseClusterSpec(spec);
  ASSERT_EQ(cluster.error, "");
  auto made = policy::MakePolicy(GetParam());
  ASSERT_TRUE(made);
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    std::vector<TraceJob> trace = RandomTrace(seed, 80);
    // The simulator validates every decision against each node's free devices, CPUs and memory
    // and re-counts all three after every event; any violation aborts the replay with an error.
    SimResult first = Simulate(*cluster, trace, **made, CpuOptions(seed));
    ASSERT_EQ(first.error, "") << "seed " << seed;
    EXPECT_LE(first.max_used_devices, first.total_devices);
    EXPECT_LE(first.max_used_cpus_per_node_share, 1.0);
    EXPECT_GT(first.cpu_utilization, 0.0);
    for (const JobRecord& job : first.jobs) {
      EXPECT_GT(job.end_s, job.start_s) << job.id;  // every job finished
      EXPECT_GE(job.peak_devices, job.min_devices) << job.id;
      EXPECT_LE(job.peak_devices, job.max_devices) << job.id;
    }
    SimResult second = Simulate(*cluster, trace, **made, CpuOptions(seed));
    EXPECT_EQ(ToJson(first, {"t", spec, seed}).dump(), ToJson(second, {"t", spec, seed}).dump());
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, CpuTraces,
                         ::testing::Values("backfill", "easyscale", "rubick", "elastic",
                                           "rubick-e", "rubick-r", "rubick-n"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// CPU-aware policies use the CPUs: on a CPU-bound workload they hold more of them per device-second
// than the fixed share would need, and finish sooner than backfill with the fixed share.
TEST(CpuProperty, SchedulingCpusBeatsAFixedShare) {
  auto cluster = ParseClusterSpec("2x8:cpus=48");
  SimOptions options = CpuOptions(3);
  options.memory_need_max = 0.0;
  options.rigid_fraction = 0.0;
  double backfill = 0.0, rubick = 0.0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    options.seed = seed;
    std::vector<TraceJob> trace = RandomTrace(seed, 60);
    backfill += Simulate(*cluster, trace, **policy::MakePolicy("backfill"), options).avg_jct_s;
    rubick += Simulate(*cluster, trace, **policy::MakePolicy("rubick"), options).avg_jct_s;
  }
  EXPECT_LT(rubick, backfill);
}

// SLA with CPUs scheduled: with quota for every guaranteed job, guaranteed jobs never run on
// fewer devices than requested.
TEST(CpuProperty, GuaranteedJobsNeverBelowTheirSla) {
  auto cluster = ParseClusterSpec("2x8:cpus=96");
  for (const char* name : {"rubick", "elastic"}) {
    auto made = policy::MakePolicy(name);
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      SimOptions options = CpuOptions(seed);
      options.memory_need_max = 0.0;
      options.rigid_fraction = 0.0;
      options.quota_fraction = 100.0;
      SimResult result = Simulate(*cluster, RandomTrace(seed, 80), **made, options);
      ASSERT_EQ(result.error, "");
      for (const Segment& segment : result.timeline) {
        const JobRecord& job = result.jobs[segment.job];
        if (!job.guaranteed || segment.to_s <= segment.from_s) continue;
        EXPECT_GE(segment.devices, job.requested_devices) << name << " seed " << seed << job.id;
      }
    }
  }
}

// Backfill-awareness with CPUs scheduled: rigid jobs still never start after their first
// reservation under elastic (nodes with CPUs for every device at the largest need, so devices
// alone decide when the head fits).
TEST(CpuProperty, RigidJobsNeverStartAfterTheirReservation) {
  auto cluster = ParseClusterSpec("2x8:cpus=192,3x4:a100:cpus=192");
  auto made = policy::MakePolicy("elastic");
  int reserved = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SimOptions options = CpuOptions(seed);
    options.rigid_fraction = 0.5;
    SimResult result = Simulate(*cluster, RandomTrace(seed, 80), **made, options);
    ASSERT_EQ(result.error, "");
    for (const JobRecord& job : result.jobs) {
      if (job.first_reservation_s == policy::kNever) continue;
      ++reserved;
      EXPECT_LE(job.start_s, job.first_reservation_s + 1e-6) << "seed " << seed << " " << job.id;
    }
  }
  EXPECT_GT(reserved, 10);
}

// The same where CPUs and host memory bind before devices do: 3-6 CPUs and 6-8 GiB per device
// against needs of 1-12 threads and 4 GiB (plus ZeRO-Offload's states on odd seeds), so a
// reservation that counted devices alone would be broken by CPU-hungry growth. The head's
// reservation keeps each of its devices' CPUs and memory free on the same node
// (reservation.h), and every action is checked against it in all three dimensions.
TEST(CpuProperty, RigidJobsKeepTheirReservationWhenCpusAndMemoryBind) {
  const char* spec = "2x8:cpus=24:mem=48G,3x4:a100:cpus=24:mem=32G";
  auto cluster = ParseClusterSpec(spec);
  ASSERT_EQ(cluster.error, "");
  auto made = policy::MakePolicy("elastic");
  int reserved = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SimOptions options = CpuOptions(seed);
    options.rigid_fraction = 0.5;
    SimResult result = Simulate(*cluster, RandomTrace(seed, 80), **made, options);
    ASSERT_EQ(result.error, "") << "seed " << seed;
    for (const JobRecord& job : result.jobs) {
      if (job.first_reservation_s == policy::kNever) continue;
      ++reserved;
      EXPECT_LE(job.start_s, job.first_reservation_s + 1e-6) << "seed " << seed << " " << job.id;
    }
  }
  EXPECT_GT(reserved, 10);
}

}  // namespace
}  // namespace elastic::sim
