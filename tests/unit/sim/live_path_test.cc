// elastic-sim --live (live_path.h): a hand-checked preemption and nice lift through elasticd's own
// decision, and properties over random traces (valid decisions only, whole nodes, every job done).
#include "scheduler/sim/live_path.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "scheduler/sim/cluster_spec.h"
#include "scheduler/sim/simulator.h"
#include "tests/unit/sim/random_trace.h"

namespace elastic::sim {
namespace {

SimResult Replay(const std::string& spec, const std::vector<TraceJob>& trace,
                 const std::string& policy, SimOptions options, bool preempt = true,
                 double nice_lift_after = 6.0) {
  auto cluster = ParseClusterSpec(spec);
  options.whole_node_devices = UniformNodeDevices(*cluster);
  policy::ResizeDecisionOptions decision;
  decision.resize_cost_s = options.resize_cost_s;
  decision.preempt_best_effort = preempt;
  decision.nice_lift.after_time_limits = nice_lift_after;
  auto made = LivePathPolicy::Make(policy, decision);
  EXPECT_TRUE(made) << made.error;
  return Simulate(*cluster, trace, **made, options);
}

// Four one-device nodes. Best-effort b (-N 1-4) starts at t=0 on all four (Slurm gives a node
// range as many nodes as are free). Guaranteed g (-N 4-4: min = its request) arrives at 2,000:
// shrinking b to its MIN frees 3 of 4 nodes, so elasticd preempts b; Slurm starts g at once
// and b again when g ends (about 3,100: g's work was recorded on one node, here it spans 4). Without preemption g waits until b is done.
TEST(LivePathReplay, AGuaranteedJobPreemptsTheBestEffortOneThroughElasticdsDecision) {
  SimOptions options;
  options.quota_fraction = 1.0;
  options.elastic_min_fraction = 1.0;  // min = request: b is -N 1-4, g -N 4-4
  const std::string b = IdOfClass("b", false, options);
  const std::string g = IdOfClass("g", true, options);
  const std::vector<TraceJob> trace{{b, 0, 1, 8000, ""}, {g, 2000, 4, 1000, ""}};
  for (const char* name : {"rubick", "elastic"}) {
    SimResult result = Replay("4x1", trace, name, options);
    ASSERT_EQ(result.error, "") << name;
    EXPECT_EQ(result.policy, std::string(name) + "-live");
    EXPECT_EQ(result.jobs[0].start_s, 0.0) << name;
    EXPECT_EQ(result.jobs[0].peak_devices, 4) << name;
    EXPECT_EQ(result.jobs[0].preemptions, 1) << name;
    EXPECT_NEAR(result.jobs[1].start_s, 2000.0, 1e-6) << name;
    // 1,000 s of work recorded on one 8-GPU node, here on 4 nodes: a little slower.
    EXPECT_GT(result.jobs[1].end_s, 3000.0) << name;
    EXPECT_LT(result.jobs[1].end_s, 3200.0) << name;
    EXPECT_GT(result.jobs[0].end_s, result.jobs[1].end_s) << name;
  }
  SimResult waits = Replay("4x1", trace, "elastic", options, /*preempt=*/false);
  ASSERT_EQ(waits.error, "");
  EXPECT_EQ(waits.preemptions, 0);
  EXPECT_NEAR(waits.jobs[1].start_s, waits.jobs[0].end_s, 1e-6);
}

// Two 2-GPU nodes kept full by 1-GPU rigid jobs of 1,000 s, two arriving every 500 s (t = 0 on
// n0, t = 500 on n1, ...). A whole-node elastic job e of 300 s arrives at 600, niced behind them
// by job_submit.lua: each node that empties goes to the two rigid jobs arriving then, so e
// waits until the stream ends. With nice_lift_after = 2 elasticd takes the nice back once e has
// waited 600 s; at 1,500, when n1 empties, e is older than the two new rigid jobs and starts.
TEST(LivePathReplay, AWaitingElasticJobsNiceIsLiftedAfterItsBound) {
  SimOptions options;
  std::vector<TraceJob> trace;
  for (int k = 0; k < 20; ++k) {
    for (int i = 0; i < 2; ++i) {
      trace.push_back({"r" + std::to_string(2 * k + i), 500 * k, 1, 1000, ""});
    }
  }
  trace.push_back({"e", 600, 2, 300, ""});
  std::sort(trace.begin(), trace.end(),
            [](const TraceJob& a, const TraceJob& b) { return a.submit_time_s < b.submit_time_s; });
  const auto start_of_e = [&](double lift_after) {
    SimResult result = Replay("2x2", trace, "elastic", options, /*preempt=*/false, lift_after);
    EXPECT_EQ(result.error, "");
    for (const JobRecord& job : result.jobs) {
      if (job.id == "e") return job.start_s;
    }
    ADD_FAILURE() << "no job e";
    return -1.0;
  };
  EXPECT_NEAR(start_of_e(2.0), 1500.0, 1e-6);
  EXPECT_GE(start_of_e(0.0), 9500.0);             // never lifted: after the last rigid jobs arrive
  EXPECT_GE(start_of_e(6.0), 600.0 + 6 * 300.0);  // not before its bound
}

// Random traces on 2-GPU nodes: the simulator accepts every decision (no node over-committed,
// sizes in bounds), every job ends, every job of a node or more only ever held whole nodes, and
// every 1-GPU job ran rigid at its request, sharing a node.
TEST(LivePathReplay, RandomTracesRunToTheEndOnWholeNodes) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const std::vector<TraceJob> trace = RandomTrace(seed, 60);
    for (const char* name : {"easyscale", "rubick", "elastic"}) {
      SimResult result = Replay("6x2", trace, name, SimOptions{});
      ASSERT_EQ(result.error, "") << name << " seed " << seed;
      int shared = 0;
      for (const JobRecord& job : result.jobs) {
        EXPECT_GE(job.end_s, job.start_s) << job.id;
        if (job.requested_devices == 1) {
          EXPECT_TRUE(job.rigid) << name << " " << job.id;
          EXPECT_EQ(job.peak_devices, 1) << name << " " << job.id;
          EXPECT_EQ(job.resizes, 0) << name << " " << job.id;
          ++shared;
          continue;
        }
        EXPECT_EQ(job.peak_devices % 2, 0) << name << " " << job.id;
        EXPECT_EQ(job.min_devices % 2, 0) << job.id;
      }
      EXPECT_GT(shared, 0) << "seed " << seed;
    }
  }
}

TEST(LivePathReplay, OnlyPoliciesThatResizeAndClustersOfOneNodeSize) {
  EXPECT_FALSE(LivePathPolicy::Make("backfill", {}));
  EXPECT_FALSE(LivePathPolicy::Make("fifo", {}));
  EXPECT_EQ(UniformNodeDevices(*ParseClusterSpec("4x8")), 8);
  EXPECT_EQ(UniformNodeDevices(*ParseClusterSpec("4x8,2x4:v100")), 0);
}

}  // namespace
}  // namespace elastic::sim
