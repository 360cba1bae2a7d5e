// Golden traces replayed end to end; every number below was worked out by hand.
#include <gtest/gtest.h>

#include "scheduler/sim/cluster_spec.h"
#include "scheduler/sim/simulator.h"
#include "scheduler/sim/trace.h"

namespace elastic::sim {
namespace {

std::string TracePath(const char* name) {
  return std::string(ELASTIC_SOURCE_DIR) + "/tests/data/traces/" + name;
}

const JobRecord& Job(const SimResult& result, const std::string& id) {
  for (const JobRecord& job : result.jobs) {
    if (job.id == id) return job;
  }
  ADD_FAILURE() << "no job " << id;
  return result.jobs.front();
}

// With comm_ratio 0 a job's speed is its EasyScale compute rate, so run times are exact.
SimOptions ExactOptions() {
  SimOptions options;
  options.min_comm_ratio = options.max_comm_ratio = 0.0;
  options.reference_devices_per_node = 4;
  return options;
}

// Cluster 2x4. a(4 GPUs,100 s) and b(4,50) start at 0 on one node each. c(8,100) arrives at 10
// and cannot fit: it is the head, reserved for t=100 (a's end) with no extra devices. d(2,30)
// and e(2,200) arrive at 20 with nothing free. At 50 b ends: d would end at 80 <= 100, so it is
// backfilled onto b's node; e would end at 250 > 100 and is held back. d ends at 80. At 100 a
// ends and c starts (ends 200); e becomes head, reserved for 200, and starts then (ends 400).
// JCT: a 100, b 50, c 190, d 60, e 380 -> avg 156, p99 (nearest rank) 380, makespan 400.
// Device-seconds: 400 + 200 + 800 + 60 + 400 = 1860 of 8 x 400 -> utilization 0.58125.
// Queueing: 0, 0, 90, 30, 180 -> avg 60.
TEST(GoldenTrace, BackfillScheduleMatchesHandComputation) {
  auto trace = LoadTrace(TracePath("golden_backfill.csv"));
  ASSERT_EQ(trace.error, "");
  auto cluster = ParseClusterSpec("2x4");
  ASSERT_EQ(cluster.error, "");
  auto made = policy::MakePolicy("backfill");
  SimResult result = Simulate(*cluster, *trace, **made, ExactOptions());
  ASSERT_EQ(result.error, "");
  struct Expected {
    const char* id;
    double start, end;
  };
  for (Expected e : {Expected{"a", 0, 100}, Expected{"b", 0, 50}, Expected{"c", 100, 200},
                     Expected{"d", 50, 80}, Expected{"e", 200, 400}}) {
    EXPECT_NEAR(Job(result, e.id).start_s, e.start, 1e-6) << e.id;
    EXPECT_NEAR(Job(result, e.id).end_s, e.end, 1e-6) << e.id;
  }
  EXPECT_NEAR(Job(result, "c").first_reservation_s, 100.0, 1e-6);
  EXPECT_NEAR(Job(result, "e").first_reservation_s, 200.0, 1e-6);
  EXPECT_NEAR(result.avg_jct_s, 156.0, 1e-6);
  EXPECT_NEAR(result.p99_jct_s, 380.0, 1e-6);
  EXPECT_NEAR(result.makespan_s, 400.0, 1e-6);
  EXPECT_NEAR(result.gpu_utilization, 0.58125, 1e-9);
  EXPECT_NEAR(result.avg_queue_s, 60.0, 1e-6);
}

// Cluster 1x4, comm 0, resize cost 10 s, resize interval 50 s. p(1 GPU,100 s) starts alone at 0.
// q(4 GPUs,100 s -> work 400, maxP 4) arrives at 10 with 3 free. Proposals (Eq. 1: rate =
// maxP / ceil(maxP / k)): +1 -> rate 1 (1.0/GPU), +2 -> rate 2 (1.0/GPU), +3 -> rate 2 (0.67/GPU,
// EST quantum waste). The tie goes to more GPUs: q starts on 2 and the 3rd GPU would add nothing.
// At 100 p ends (JCT 100); q has done 180, 220 left (110 s at rate 2). Growing to 4 (rate 4)
// saves 110 x (1 - 2/4) = 55 s > 10 s cost, so q resizes: paused until 110, then 220 / 4 = 55 s
// -> ends 165, JCT 155. avg JCT 127.5; device-seconds 100 + 2 x 90 + 4 x 65 = 540 of 4 x 165.
TEST(GoldenTrace, EasyScaleUsesWasteModelAndGrows) {
  auto trace = LoadTrace(TracePath("golden_easyscale.csv"));
  ASSERT_EQ(trace.error, "");
  auto cluster = ParseClusterSpec("1x4");
  policy::PolicyOptions policy_options;
  policy_options.resize_cost_s = 10.0;
  policy_options.min_resize_interval_s = 50.0;
  auto made = policy::MakePolicy("easyscale", policy_options);
  SimOptions options = ExactOptions();
  options.resize_cost_s = 10.0;
  SimResult result = Simulate(*cluster, *trace, **made, options);
  ASSERT_EQ(result.error, "");
  EXPECT_NEAR(Job(result, "p").end_s, 100.0, 1e-6);
  EXPECT_NEAR(Job(result, "q").start_s, 10.0, 1e-6);
  EXPECT_NEAR(Job(result, "q").end_s, 165.0, 1e-6);
  EXPECT_EQ(Job(result, "q").resizes, 1);
  EXPECT_EQ(Job(result, "q").peak_devices, 4);
  ASSERT_EQ(result.timeline.size(), 3u);
  EXPECT_EQ(result.timeline[1].devices, 2);  // q's first segment
  EXPECT_NEAR(result.avg_jct_s, 127.5, 1e-6);
  EXPECT_NEAR(result.gpu_utilization, 540.0 / (4 * 165.0), 1e-9);
}

}  // namespace
}  // namespace elastic::sim
