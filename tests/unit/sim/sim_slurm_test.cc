// The simulated Slurm of --live (sim_slurm.h): sub-node jobs share nodes on the best fit, jobs of
// a node or more take idle nodes only, the blocked head's planned nodes are kept, a node range
// takes idle unplanned nodes up to MAX, elastic jobs wait behind the others under the site's
// nice. Each case is checked by hand.
#include "scheduler/sim/sim_slurm.h"

#include <gtest/gtest.h>

#include <map>

#include "scheduler/sim/cluster_spec.h"

namespace elastic::sim {
namespace {

using policy::Allocation;
using policy::DecisionKind;
using policy::JobState;

JobState Pending(const std::string& id, int devices, double runtime_s, double submit_s) {
  JobState job;
  job.id = id;
  job.requested_devices = job.min_devices = job.max_devices = devices;
  job.expected_runtime_s = runtime_s;
  job.submit_time_s = submit_s;
  return job;
}

JobState Running(const std::string& id, Allocation allocation, double end_s) {
  JobState job = Pending(id, 0, 0.0, 0.0);
  for (const policy::Slice& slice : allocation) job.requested_devices += slice.devices;
  job.min_devices = job.max_devices = job.requested_devices;
  job.allocation = allocation;
  job.expected_end_s = end_s;
  job.started_s = 0.0;
  return job;
}

// Node of each started job's allocation, by job id ("" if it did not start).
std::map<std::string, Allocation> Starts(SimSlurm& slurm) {
  std::map<std::string, Allocation> starts;
  for (const policy::Decision& d : slurm.TakeOutput().decisions) {
    if (d.kind == DecisionKind::kStart) starts[d.job_id] = d.allocation;
  }
  return starts;
}

// Three 8-GPU nodes; node 1 has 3 devices used, node 2 has 6. A 2-GPU job best-fits node 2,
// a 4-GPU one node 1 (5 free), an 8-GPU job takes idle node 0, and a 1-GPU job then finds
// node 1 (1 free) best.
TEST(SimSlurm, SubNodeJobsShareTheBestFittingNodeAndWholeNodeJobsTakeIdleNodes) {
  auto cluster = ParseClusterSpec("3x8");
  ASSERT_TRUE(cluster);
  std::vector<JobState> jobs{Running("r1", {{1, 3}}, 5000), Running("r2", {{2, 6}}, 5000),
                             Pending("two", 2, 100, 1),     Pending("four", 4, 100, 2),
                             Pending("eight", 8, 100, 3),   Pending("one", 1, 100, 4)};
  SimSlurm slurm(*cluster, jobs, 8);
  slurm.Starts(0.0);
  EXPECT_EQ(slurm.Used(0), 8);
  EXPECT_EQ(slurm.Used(1), 8);
  EXPECT_EQ(slurm.Used(2), 8);
  auto starts = Starts(slurm);
  ASSERT_EQ(starts.size(), 4u);
  EXPECT_EQ(starts["two"], (Allocation{{2, 2}}));
  EXPECT_EQ(starts["four"], (Allocation{{1, 4}}));
  EXPECT_EQ(starts["eight"], (Allocation{{0, 8}}));
  EXPECT_EQ(starts["one"], (Allocation{{1, 1}}));
}

// Two 8-GPU nodes, a 1-GPU job on node 0 until t=1000 and node 1 idle. A 16-GPU job cannot
// start: it is the head, planned on both nodes from t=1000. A 1-GPU job that would end at 2000
// may not use them; one that ends at 500 may (EASY backfill).
TEST(SimSlurm, AWholeNodeHeadKeepsItsPlannedNodesFromLongBackfill) {
  auto cluster = ParseClusterSpec("2x8");
  ASSERT_TRUE(cluster);
  std::vector<JobState> jobs{Running("r", {{0, 1}}, 1000), Pending("big", 16, 100, 1),
                             Pending("long", 1, 2000, 2), Pending("short", 1, 500, 3)};
  SimSlurm slurm(*cluster, jobs, 8);
  slurm.Starts(0.0);
  EXPECT_EQ(slurm.head_id(), "big");
  EXPECT_TRUE(slurm.Planned(0));
  EXPECT_TRUE(slurm.Planned(1));
  auto starts = Starts(slurm);
  EXPECT_EQ(starts.count("big"), 0u);
  EXPECT_EQ(starts.count("long"), 0u);
  ASSERT_EQ(starts.count("short"), 1u);
  EXPECT_EQ(starts["short"], (Allocation{{0, 1}}));  // best fit: the node in use
}

// Four 2-GPU nodes, node 3 busy until t=1000. A -N 1-3 elastic job (MIN 2 devices, MAX 6)
// starts on node 0 and takes idle nodes 1 and 2. Behind a blocked 4-node head (planned on all
// four nodes from t=1000) it still starts, since it ends by then, but on its MIN only: the
// head's planned nodes are not Slurm's to hand out up to MAX.
TEST(SimSlurm, ANodeRangeTakesIdleUnplannedNodesUpToMax) {
  auto cluster = ParseClusterSpec("4x2");
  ASSERT_TRUE(cluster);
  JobState elastic = Pending("e", 2, 100, 1);
  elastic.elastic = true;
  elastic.max_devices = 6;
  {
    std::vector<JobState> jobs{Running("r", {{3, 2}}, 1000), elastic};
    SimSlurm slurm(*cluster, jobs, 2);
    slurm.Starts(0.0);
    EXPECT_EQ(Starts(slurm)["e"], (Allocation{{0, 2}, {1, 2}, {2, 2}}));
  }
  std::vector<JobState> jobs{Running("r", {{3, 2}}, 1000), Pending("head", 8, 100, 0), elastic};
  SimSlurm slurm(*cluster, jobs, 2);
  slurm.Starts(0.0);
  EXPECT_EQ(slurm.head_id(), "head");
  EXPECT_EQ(Starts(slurm)["e"], (Allocation{{0, 2}}));
}

// One idle 2-GPU node. An elastic job submitted first and a rigid one submitted after it both
// want it. With job_submit.lua's nice the rigid job starts and the elastic one is the head;
// without it Slurm's FIFO order starts the elastic job. A background elastic job is not niced.
TEST(SimSlurm, ElasticJobsWaitBehindTheOthersUnderTheSitesNice) {
  auto cluster = ParseClusterSpec("1x2");
  ASSERT_TRUE(cluster);
  JobState elastic = Pending("e", 2, 100, 1);
  elastic.elastic = true;
  const std::vector<JobState> jobs{elastic, Pending("rigid", 2, 100, 2)};
  SimSlurm niced(*cluster, jobs, 2);
  EXPECT_EQ(niced.Queue(), (std::vector<size_t>{1, 0}));
  niced.Starts(0.0);
  EXPECT_EQ(Starts(niced).count("rigid"), 1u);
  EXPECT_EQ(niced.head_id(), "e");

  SimSlurm fifo(*cluster, jobs, 2, SlurmSite{.elastic_jobs_yield = false});
  EXPECT_EQ(fifo.Queue(), (std::vector<size_t>{0, 1}));
  fifo.Starts(0.0);
  EXPECT_EQ(Starts(fifo).count("e"), 1u);
  EXPECT_EQ(fifo.head_id(), "rigid");

  std::vector<JobState> background = jobs;
  background[0].sla_class = SlaClass::kBackground;
  EXPECT_EQ(SimSlurm(*cluster, background, 2).Queue(), (std::vector<size_t>{0, 1}));
}

}  // namespace
}  // namespace elastic::sim
