// Rubick and elastic policies in isolation: hand-checked shrink, penalty, SLA and reservation cases.
#include "scheduler/policy/rubick_policy.h"

#include <gtest/gtest.h>

#include "scheduler/policy/placement.h"
#include "tests/unit/policy/cluster_builder.h"

namespace elastic::policy {
namespace {

JobState Job(const std::string& id, int requested, int max, double submit, double comm) {
  JobState job;
  job.id = id;
  job.elastic = true;
  job.min_devices = 1;
  job.requested_devices = requested;
  job.max_devices = max;
  job.submit_time_s = submit;
  job.profile = {max, comm};
  job.expected_runtime_s = 10000;
  return job;
}

// Puts `job` on node `node` with `devices`, started at `started`.
void Place(ClusterState& cluster, JobState& job, int node, int devices, double started) {
  job.allocation = {{node, devices}};
  cluster.nodes[node].free_devices -= devices;
  job.started_s = job.last_resize_s = started;
  job.expected_end_s = started + 1e6;
  job.remaining_work = 1e6;
}

const Decision* Find(const PolicyOutput& out, const std::string& id) {
  for (const Decision& decision : out.decisions) {
    if (decision.job_id == id) return &decision;
  }
  return nullptr;
}

// One full 4-device node: a (communication-heavy, flat curve) and b (linear) hold 2 each.
// Pending c's first device is worth 1.0; a's second device only 1/(1+0.1*... ) - so a shrinks.
struct ShrinkCase {
  ClusterState cluster;
  std::vector<JobState> jobs;
  explicit ShrinkCase(double started) {
    AddNodes(cluster, 1, 4, "gpu", 1.0);
    jobs = {Job("a", 2, 4, 0, 0.05), Job("b", 2, 4, 1, 0.0), Job("c", 1, 4, 2, 0.0)};
    Place(cluster, jobs[0], 0, 2, started);
    Place(cluster, jobs[1], 0, 2, started);
  }
};

TEST(Rubick, ShrinksTheLowestSlopeJobToStartAnother) {
  ShrinkCase c(0.0);
  PolicyOutput out = RubickPolicy({}).Decide(c.cluster, c.jobs, 10000);
  // a's last device adds 1/(0.5+0.05) - 1/(1) = 0.818; b's adds 1.0; c's first adds 1.0.
  const Decision* a = Find(out, "a");
  const Decision* cc = Find(out, "c");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(cc, nullptr);
  EXPECT_EQ(Find(out, "b"), nullptr);
  EXPECT_EQ(a->kind, DecisionKind::kResize);
  EXPECT_EQ(DeviceCount(a->allocation), 1);
  EXPECT_EQ(cc->kind, DecisionKind::kStart);
  EXPECT_EQ(DeviceCount(cc->allocation), 1);
  EXPECT_NE(a->reason.find("shrunk for c"), std::string::npos) << a->reason;
}

TEST(Rubick, ReconfigurationPenaltyBlocksAResize) {
  // T = 999 s since start, N = 1, delta = 30 s: (999 - 30)/999 = 0.96997 < 0.97: no shrink.
  ShrinkCase young(10000 - 999);
  EXPECT_TRUE(RubickPolicy({}).Decide(young.cluster, young.jobs, 10000).decisions.empty());
  // T = 1000 s: (1000 - 30)/1000 = 0.97, allowed.
  ShrinkCase old(10000 - 1000);
  EXPECT_EQ(RubickPolicy({}).Decide(old.cluster, old.jobs, 10000).decisions.size(), 2u);
  // A second resize needs twice the history: N = 2 at T = 1999 s is blocked.
  ShrinkCase again(10000 - 1999);
  again.jobs[0].resizes = again.jobs[1].resizes = 1;
  EXPECT_TRUE(RubickPolicy({}).Decide(again.cluster, again.jobs, 10000).decisions.empty());
}

TEST(Rubick, MinResUsesFewerFasterDevices) {
  JobState job = Job("g", 4, 16, 0, 0.02);
  // Owed: 4 reference GPUs on one node, t = 1/4 + 0.02*2*3/4 = 0.28. Two a100 (capability 2):
  // t = 1/4 + 0.02*2*1/2 = 0.27, faster; one a100 computes at 2 only.
  EXPECT_EQ(MinResDevices(job, 2.0, 8, {}, {}), 2);
  EXPECT_EQ(MinResDevices(job, 1.0, 8, {}, {}), 4);
  job.elastic = false;
  EXPECT_EQ(MinResDevices(job, 2.0, 8, {}, {}), 4);
}

TEST(Rubick, GuaranteedJobGetsItsRequestedPerformance) {
  ClusterState cluster;
  AddNodes(cluster, 1, 8, "a100", 2.0);
  cluster.tenant_quota["t"] = 8;
  std::vector<JobState> jobs{Job("be", 8, 16, 0, 0.0), Job("g", 4, 16, 9000, 0.02)};  // not starving
  Place(cluster, jobs[0], 0, 8, 0.0);
  jobs[1].sla_class = SlaClass::kGuaranteed;
  jobs[1].tenant = "t";
  PolicyOutput out = RubickPolicy({}).Decide(cluster, jobs, 10000);
  const Decision* g = Find(out, "g");
  const Decision* be = Find(out, "be");
  ASSERT_NE(g, nullptr);
  ASSERT_NE(be, nullptr);
  // The best-effort job has the higher slope (linear), but g is below its minimum (case 2).
  EXPECT_EQ(DeviceCount(be->allocation), 6);
  ASSERT_GE(DeviceCount(g->allocation), 2);
  double owed = model::CompactSpeedup(jobs[1].profile, 4, 8);
  EXPECT_GE(model::Speedup(jobs[1].profile, ShapeOf(cluster, g->allocation)), owed);
  // Without quota it is best-effort: the linear job keeps its devices.
  cluster.tenant_quota.clear();
  // (g's first a100 is worth 2.0; be's 8th device 16 - 10.67 = 5.33 with 16 ESTs.)
  EXPECT_TRUE(RubickPolicy({}).Decide(cluster, jobs, 10000).decisions.empty());
  // Queued past the starvation threshold it may reclaim whatever the slopes.
  jobs[1].submit_time_s = 0;
  PolicyOutput late = RubickPolicy({}).Decide(cluster, jobs, 10000);
  const Decision* starving = Find(late, "g");
  ASSERT_NE(starving, nullptr);
  EXPECT_NE(starving->reason.find("starving"), std::string::npos);
}

// Two pending guaranteed jobs of one tenant whose quota holds one claim: early (submitted first,
// 10x the work) and short. rubick admits in queue order (early); elastic least work first (short),
// unless early has waited past its starvation threshold (elastic: as long as it would run).
TEST(Elastic, GuaranteedJobsClaimTheQuotaByRemainingWork) {
  ClusterState cluster;
  AddNodes(cluster, 1, 4, "gpu", 1.0);
  cluster.tenant_quota["t"] = 4;
  std::vector<JobState> jobs{Job("early", 4, 4, 0, 0.0), Job("short", 4, 4, 1, 0.0)};
  jobs[0].expected_runtime_s = 100000;
  for (JobState& job : jobs) {
    job.sla_class = SlaClass::kGuaranteed;
    job.tenant = "t";
    job.min_devices = 4;
  }
  auto admitted = [&](const Policy& policy, double now) {
    PolicyOutput out = policy.Decide(cluster, jobs, now);
    return out.decisions.size() == 1 ? out.decisions[0].job_id : std::string("?");
  };
  EXPECT_EQ(admitted(RubickPolicy({}), 1000), "early");
  EXPECT_EQ(admitted(ElasticPolicy({}), 1000), "short");
  EXPECT_EQ(admitted(ElasticPolicy({}), 100000), "early");  // starving: queue order first
}

// One free device. short (12 ESTs, comm 0.1) runs on 3 of a node's 4 with little work left: its
// 4th device adds 2.50 - 2.14 = 0.36. long waits with 1000x the work; its first device adds 1.0.
// Smith's rule (slope / work) gave the device to short's flat growth. elastic's heSRPT weights
// (jobs with at least this much work left, to the power 1/2: short sqrt(2), long 1) start long,
// as rubick's slopes do; neither grows short.
TEST(Elastic, ALongJobsFirstDeviceOutranksAShortJobsFlatGrowth) {
  ClusterState cluster;
  AddNodes(cluster, 1, 4, "gpu", 1.0);
  std::vector<JobState> jobs{Job("short", 3, 4, 0, 0.1), Job("long", 1, 4, 9000, 0.0)};
  jobs[0].profile.ests = 12;
  Place(cluster, jobs[0], 0, 3, 0.0);
  jobs[0].remaining_work = 1000;
  jobs[1].expected_runtime_s = 1e6;
  const RubickPolicy rubick({});
  const ElasticPolicy elastic({});
  for (const Policy* policy : std::vector<const Policy*>{&rubick, &elastic}) {
    const PolicyOutput out = policy->Decide(cluster, jobs, 10000);
    const Decision* started = Find(out, "long");
    ASSERT_NE(started, nullptr) << policy->Name();
    EXPECT_EQ(started->kind, DecisionKind::kStart) << policy->Name();
    const Decision* short_job = Find(out, "short");
    EXPECT_TRUE(!short_job || DeviceCount(short_job->allocation) < 3) << policy->Name();
  }
}

// Two 4-GPU nodes. g (comm 0.01) runs on 2 of node 0's; rigid jobs hold node 0's other 2 and 2
// of node 1's. g is ranked by its compact growth to 4 (0.91 speed per device added), but the 2
// free devices are on node 1, where 4 devices over two nodes add only 0.63 per device (the
// inter-node all-reduce): elastic leaves it at 2 (kGrowthPlacementFloor 0.9); without the floor,
// as rubick does, it spreads. With node 0's other 2 devices free instead, it grows there.
TEST(Elastic, AGrowthGrantedOnlyWherePlacedAsWellAsItWasRanked) {
  auto grown = [](bool floor, int free_node) {
    ClusterState cluster;
    AddNodes(cluster, 2, 4, "gpu", 1.0);
    JobState g = Job("g", 2, 4, 0, 0.01);
    Place(cluster, g, 0, 2, 0.0);
    std::vector<JobState> jobs{g};
    auto rigid_on = [&](int node) {  // 2 devices
      JobState rigid = Job("r" + std::to_string(jobs.size()), 2, 2, 0, 0.0);
      rigid.elastic = false;
      rigid.min_devices = 2;
      Place(cluster, rigid, node, 2, 0.0);
      jobs.push_back(rigid);
    };
    rigid_on(1);                      // node 1 is half held either way
    if (free_node != 0) rigid_on(0);  // the other half of node 0
    if (free_node != 1) rigid_on(1);  // the other half of node 1
    PolicyOptions options;
    options.elastic_compact_growth = floor;
    const Decision* d = Find(ElasticPolicy(options).Decide(cluster, jobs, 10000), "g");
    return d ? d->allocation : jobs[0].allocation;
  };
  EXPECT_EQ(grown(true, 1), (Allocation{{0, 2}}));
  EXPECT_EQ(grown(false, 1), (Allocation{{0, 2}, {1, 2}}));
  EXPECT_EQ(grown(true, 0), (Allocation{{0, 4}}));
}

TEST(Elastic, GrowthNeverUsesDevicesTheRigidHeadNeeds) {
  ClusterState cluster;
  AddNodes(cluster, 1, 8, "gpu", 1.0);
  JobState rigid = Job("r", 4, 4, 0, 0.0);
  rigid.elastic = false;
  rigid.min_devices = 4;
  Place(cluster, rigid, 0, 4, 0.0);
  rigid.expected_end_s = 1000;  // frees its 4 devices at t=1000
  JobState head = Job("h", 8, 8, 1, 0.0);
  head.elastic = false;
  head.min_devices = 8;
  JobState longer = Job("long", 1, 4, 2, 0.0);  // 10,000 s: would hold devices past t=1000
  JobState shorter = Job("short", 1, 1, 3, 0.0);
  shorter.expected_runtime_s = 500;  // ends at 600 < 1000: backfills
  std::vector<JobState> jobs{rigid, head, longer, shorter};
  PolicyOutput out = ElasticPolicy({}).Decide(cluster, jobs, 100);
  ASSERT_EQ(out.reservations.size(), 1u);
  EXPECT_EQ(out.reservations[0].job_id, "h");
  EXPECT_EQ(out.reservations[0].start_s, 1000);
  EXPECT_EQ(Find(out, "long"), nullptr);
  const Decision* s = Find(out, "short");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(DeviceCount(s->allocation), 1);
  // rubick has no such rule: the long job starts and grows into the head's devices.
  PolicyOutput rubick = RubickPolicy({}).Decide(cluster, jobs, 100);
  EXPECT_NE(Find(rubick, "long"), nullptr);
}

TEST(Elastic, Deterministic) {
  ShrinkCase c(0.0);
  PolicyOutput first = ElasticPolicy({}).Decide(c.cluster, c.jobs, 10000);
  PolicyOutput second = ElasticPolicy({}).Decide(c.cluster, c.jobs, 10000);
  ASSERT_EQ(first.decisions.size(), second.decisions.size());
  for (size_t i = 0; i < first.decisions.size(); ++i) {
    EXPECT_EQ(first.decisions[i].job_id, second.decisions[i].job_id);
    EXPECT_EQ(first.decisions[i].allocation, second.decisions[i].allocation);
  }
}

// Rubick §7.3's break-down variants: what each keeps of resources (elastic jobs) and plans.
TEST(RubickVariants, NamesAndWhatEachDisables) {
  struct Row {
    const char* name;
    bool resources;
    bool plans;
  };
  for (const Row& row : {Row{"rubick", true, true}, Row{"rubick-e", false, true},
                         Row{"rubick-r", true, false}, Row{"rubick-n", false, false},
                         Row{"elastic", true, true}}) {
    auto made = MakePolicy(row.name);
    ASSERT_TRUE(made) << row.name;
    EXPECT_EQ((*made)->Name(), row.name);
    EXPECT_EQ((*made)->WantsElasticJobs(), row.resources) << row.name;
    EXPECT_EQ((*made)->GrowsBeyondRequest(), row.resources) << row.name;
    EXPECT_EQ((*made)->ReconfiguresPlans(), row.plans) << row.name;
  }
}

// A job spread 2+2 over two 4-device nodes (communication-heavy) while a whole node is free:
// Rubick re-places it on one node (the inter-node term makes it ~2x slower spread), a resize.
TEST(Rubick, ReplacesASpreadJobOnFewerNodes) {
  ClusterState cluster;
  AddNodes(cluster, 3, 4, "gpu", 1.0);
  JobState a = Job("a", 4, 4, 0, 0.05);
  a.allocation = {{0, 2}, {1, 2}};
  cluster.nodes[0].free_devices -= 2;
  cluster.nodes[1].free_devices -= 2;
  a.started_s = a.last_resize_s = 0;
  a.expected_end_s = 1e6;
  a.remaining_work = 1e6;
  PolicyOutput out = RubickPolicy({}).Decide(cluster, {a}, 10000);
  const Decision* moved = Find(out, "a");
  ASSERT_NE(moved, nullptr);
  EXPECT_EQ(moved->kind, DecisionKind::kResize);
  EXPECT_EQ(moved->allocation, (Allocation{{0, 4}}));  // best fit, first node
  EXPECT_NE(moved->reason.find("re-placed"), std::string::npos) << moved->reason;
}

}  // namespace
}  // namespace elastic::policy
