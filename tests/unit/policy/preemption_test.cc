// Rubick §5's preemption in rubick and elastic: hand-checked cases of who is shrunk to zero.
#include <gtest/gtest.h>

#include "scheduler/policy/rubick_policy.h"
#include "tests/unit/policy/cluster_builder.h"

namespace elastic::policy {
namespace {

JobState Job(const std::string& id, int min, int requested, double submit, double comm) {
  JobState job;
  job.id = id;
  job.elastic = true;
  job.min_devices = min;
  job.requested_devices = requested;
  job.max_devices = 4;
  job.submit_time_s = submit;
  job.profile = {4, comm};
  job.expected_runtime_s = 10000;
  return job;
}

void Place(ClusterState& cluster, JobState& job, int devices) {
  job.allocation = {{0, devices}};
  cluster.nodes[0].free_devices -= devices;
  job.started_s = job.last_resize_s = 0;
  job.expected_end_s = 1e6;
  job.remaining_work = 1e6;
}

const Decision* Find(const PolicyOutput& out, const std::string& id) {
  for (const Decision& decision : out.decisions) {
    if (decision.job_id == id) return &decision;
  }
  return nullptr;
}

// One full 4-device node: best-effort jobs a (communication-heavy) and b (linear) hold 2 each, both
// at their minimum of 2, so neither can shrink. Guaranteed g (tenant quota 4) arrives for 2.
// minRes(g) = 2 (capability-1 devices on one node are as fast as the reference).
// Preemption slopes = speed per device: a: 1/(1/2 + 0.05*2*(1/2))/2 = 0.909; b: 1.0. a goes.
struct FullNode {
  ClusterState cluster;
  std::vector<JobState> jobs;
  FullNode() {
    AddNodes(cluster, 1, 4, "gpu", 1.0);
    cluster.tenant_quota["t"] = 4;
    jobs = {Job("a", 2, 2, 0, 0.05), Job("b", 2, 2, 1, 0.0), Job("g", 1, 2, 9000, 0.0)};
    Place(cluster, jobs[0], 2);
    Place(cluster, jobs[1], 2);
    jobs[2].sla_class = SlaClass::kGuaranteed;
    jobs[2].tenant = "t";
  }
};

TEST(Preemption, GuaranteedJobPreemptsTheLowestSlopeBestEffortJob) {
  for (const char* name : {"rubick", "elastic"}) {
    FullNode c;
    PolicyOutput out = (*MakePolicy(name))->Decide(c.cluster, c.jobs, 10000);
    const Decision* a = Find(out, "a");
    const Decision* g = Find(out, "g");
    ASSERT_NE(a, nullptr) << name;
    ASSERT_NE(g, nullptr) << name;
    EXPECT_EQ(Find(out, "b"), nullptr) << name;
    EXPECT_EQ(a->kind, DecisionKind::kPreempt) << name;
    EXPECT_TRUE(a->allocation.empty()) << name;
    EXPECT_NE(a->reason.find("preempted for g"), std::string::npos) << a->reason;
    EXPECT_EQ(g->kind, DecisionKind::kStart) << name;
    EXPECT_EQ(DeviceCount(g->allocation), 2) << name;
    EXPECT_NE(g->reason.find("1 preempted"), std::string::npos) << g->reason;
    // The preemption is applied before the start that needs its devices.
    EXPECT_EQ(&out.decisions.front(), a) << name;
  }
}

// The FullNode, with a best-effort job s waiting for 1 device instead of g. a and b would run
// 550,000 and 500,000 s more at their 2 devices (1e6 reference-device-seconds each); s runs
// `s_runtime` s on one device. elastic preempts a job that would run at least twice as long as s
// and a resize, the lowest preemption slope first (a); not when neither would, not with the rule
// off, not while another device type has a free device, and rubick never preempts for a
// best-effort job.
PolicyOutput ShortJobWaits(const char* policy, double s_runtime, bool preempt_longer = true,
                           bool slower_node_free = false) {
  FullNode c;
  if (slower_node_free) AddNodes(c.cluster, 1, 1, "slow", 0.5);
  c.jobs[2] = Job("s", 1, 1, 9000, 0.0);
  c.jobs[2].expected_runtime_s = s_runtime;
  PolicyOptions options;
  options.elastic_preempt_longer = preempt_longer;
  return (*MakePolicy(policy, options))->Decide(c.cluster, c.jobs, 10000);
}

TEST(Preemption, ElasticPreemptsABestEffortJobThatWouldRunFarLongerForAWaitingOne) {
  PolicyOutput out = ShortJobWaits("elastic", 1000);
  const Decision* a = Find(out, "a");
  const Decision* s = Find(out, "s");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(Find(out, "b"), nullptr);
  EXPECT_EQ(a->kind, DecisionKind::kPreempt);
  EXPECT_NE(a->reason.find("preempted for s"), std::string::npos) << a->reason;
  EXPECT_EQ(s->kind, DecisionKind::kStart);
  EXPECT_NE(s->reason.find("1 preempted"), std::string::npos) << s->reason;

  // The bound is 2 x (s's run + the 30 s resize) against a's 550,000 s left (b's 500,000).
  PolicyOutput at_edge = ShortJobWaits("elastic", 274960);  // 549,980 s
  const Decision* edge = Find(at_edge, "a");
  ASSERT_NE(edge, nullptr);
  EXPECT_EQ(edge->kind, DecisionKind::kPreempt);
  EXPECT_EQ(Find(ShortJobWaits("elastic", 274980), "s"), nullptr);  // 550,020 s: neither
  EXPECT_TRUE(ShortJobWaits("elastic", 1000, false).decisions.empty());
  EXPECT_TRUE(ShortJobWaits("rubick", 1000).decisions.empty());

  // A free device of a slower type (node 1) starts s without preempting anyone.
  PolicyOutput slower = ShortJobWaits("elastic", 1000, true, true);
  ASSERT_NE(Find(slower, "s"), nullptr);
  EXPECT_EQ(Find(slower, "s")->allocation, (Allocation{{1, 1}}));
  EXPECT_EQ(Find(slower, "a"), nullptr);
  EXPECT_EQ(Find(slower, "b"), nullptr);
}

// Two 4-device nodes, both full: best-effort a (node 0) and b (node 1), linear, and guaranteed g
// (communication-heavy, tenant quota 4, owed the speed of 4 packed devices). `g_spread`: g already
// runs 2+2 over both nodes (as when it started best-effort over quota and was protected since).
struct TwoFullNodes {
  ClusterState cluster;
  std::vector<JobState> jobs;
  explicit TwoFullNodes(bool g_spread) {
    AddNodes(cluster, 2, 4, "gpu", 1.0);
    cluster.tenant_quota["t"] = 4;
    const int held = g_spread ? 2 : 4;
    jobs = {Job("a", 2, held, 0, 0.0), Job("b", 2, held, 1, 0.0), Job("g", 4, 4, 9000, 0.2)};
    jobs[0].allocation = {{0, held}};
    jobs[1].allocation = {{1, held}};
    if (g_spread) jobs[2].allocation = {{0, 2}, {1, 2}};
    jobs[2].sla_class = SlaClass::kGuaranteed;
    jobs[2].tenant = "t";
    for (JobState& job : jobs) {
      if (job.allocation.empty()) continue;
      job.started_s = job.last_resize_s = 0;
      job.expected_end_s = job.remaining_work = 1e6;
    }
    cluster.nodes[0].free_devices = cluster.nodes[1].free_devices = 0;
  }
};

// Room on one node (rubick_compact.cc): a and b hold their node above their minimum of 2.
// Shrinking by slope alone takes 2 from each node (ties go to the later submission, b first), so
// g would run on two nodes, slower than owed; instead a (the node needing the fewest devices
// taken; ties to the lower node) is shrunk to its floor and then preempted, b is left alone and g
// runs on a's node.
TEST(Preemption, AGuaranteedClaimGetsRoomOnOneNodeRatherThanSpreadOverTwo) {
  for (const char* name : {"rubick", "elastic"}) {
    TwoFullNodes c(false);
    PolicyOutput out = (*MakePolicy(name))->Decide(c.cluster, c.jobs, 10000);
    const Decision* a = Find(out, "a");
    const Decision* g = Find(out, "g");
    ASSERT_NE(a, nullptr) << name;
    ASSERT_NE(g, nullptr) << name;
    EXPECT_EQ(Find(out, "b"), nullptr) << name;
    EXPECT_EQ(a->kind, DecisionKind::kPreempt) << name;
    EXPECT_EQ(g->kind, DecisionKind::kStart) << name;
    EXPECT_EQ(g->allocation, (Allocation{{0, 4}})) << name;
    EXPECT_NE(g->reason.find("room on 1 node(s): 2 reclaimed, 1 preempted"), std::string::npos)
        << g->reason;
  }
}

// g runs spread, slower than owed; a and b hold the other halves at their minimum. g is moved
// onto node 0 (room by preempting a; ties to the lower node), and b grows into the devices g
// left on node 1.
TEST(Preemption, AProtectedJobRunningSpreadIsMovedOntoOneNode) {
  for (const char* name : {"rubick", "elastic"}) {
    TwoFullNodes c(true);
    PolicyOutput out = (*MakePolicy(name))->Decide(c.cluster, c.jobs, 10000);
    const Decision* a = Find(out, "a");
    const Decision* b = Find(out, "b");
    const Decision* g = Find(out, "g");
    ASSERT_NE(a, nullptr) << name;
    ASSERT_NE(b, nullptr) << name;
    ASSERT_NE(g, nullptr) << name;
    EXPECT_EQ(a->kind, DecisionKind::kPreempt) << name;
    EXPECT_EQ(b->kind, DecisionKind::kResize) << name;
    EXPECT_EQ(b->allocation, (Allocation{{1, 4}})) << name;
    EXPECT_EQ(g->kind, DecisionKind::kResize) << name;
    EXPECT_EQ(g->allocation, (Allocation{{0, 4}})) << name;
    EXPECT_NE(g->reason.find("re-placed on fewer nodes for its owed speed"), std::string::npos)
        << g->reason;
  }
}

// Shrinking jobs above their minimum comes first: with a's minimum at 1 and g owed 1 device, a
// gives one back and nobody is preempted.
TEST(Preemption, ShrinkingAboveMinimumComesFirst) {
  FullNode c;
  c.jobs[0].min_devices = 1;
  c.jobs[2].requested_devices = 1;  // minRes 1: a's spare device is enough
  PolicyOutput out = RubickPolicy({}).Decide(c.cluster, c.jobs, 10000);
  const Decision* a = Find(out, "a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->kind, DecisionKind::kResize);
  EXPECT_EQ(DeviceCount(a->allocation), 1);
  ASSERT_NE(Find(out, "g"), nullptr);
  EXPECT_EQ(Find(out, "b"), nullptr);
}

TEST(Preemption, NeverGuaranteedRigidOrForABestEffortJob) {
  {  // g without quota runs best-effort: it waits (not starving yet), nobody is preempted.
    FullNode c;
    c.cluster.tenant_quota.clear();
    EXPECT_TRUE(RubickPolicy({}).Decide(c.cluster, c.jobs, 10000).decisions.empty());
  }
  {  // a and b guaranteed within quota (2 + 2 of 6): g cannot preempt them and waits.
    FullNode c;
    c.cluster.tenant_quota["t"] = 6;
    for (int k : {0, 1}) {
      c.jobs[k].sla_class = SlaClass::kGuaranteed;
      c.jobs[k].tenant = "t";
    }
    EXPECT_TRUE(RubickPolicy({}).Decide(c.cluster, c.jobs, 10000).decisions.empty());
  }
  {  // a rigid: b is preempted instead, although its slope is higher.
    FullNode c;
    c.jobs[0].elastic = false;
    PolicyOutput out = RubickPolicy({}).Decide(c.cluster, c.jobs, 10000);
    ASSERT_NE(Find(out, "b"), nullptr);
    EXPECT_EQ(Find(out, "b")->kind, DecisionKind::kPreempt);
    EXPECT_EQ(Find(out, "a"), nullptr);
  }
  {  // The ablation switch: no preemption, g waits.
    FullNode c;
    PolicyOptions options;
    options.preempt_best_effort = false;
    EXPECT_TRUE(ElasticPolicy(options).Decide(c.cluster, c.jobs, 10000).decisions.empty());
  }
  {  // Rubick §5.3: a and b started 999 s ago, (999 - 30)/999 < 0.97: neither may be touched.
    FullNode c;
    for (int k : {0, 1}) c.jobs[k].started_s = 10000 - 999;
    EXPECT_TRUE(RubickPolicy({}).Decide(c.cluster, c.jobs, 10000).decisions.empty());
  }
}

// A job preempted in this round is not restarted in it (it returns to the queue).
TEST(Preemption, PreemptedJobIsNotRestartedInTheSameRound) {
  FullNode c;
  PolicyOutput out = ElasticPolicy({}).Decide(c.cluster, c.jobs, 10000);
  int decisions_for_a = 0;
  for (const Decision& decision : out.decisions) decisions_for_a += decision.job_id == "a";
  EXPECT_EQ(decisions_for_a, 1);
}

// A full a100 node (capability 2) with a and b at their minimum of 2, and a v100 node
// (capability 1) with `v100_free` of 4 devices free; the rest held by best-effort job v at its
// minimum. Guaranteed g (2 devices, quota 4): minRes 1 on a100 (one device of capability 2 is
// as fast as the two reference devices it is owed), 2 on v100.
struct TwoTypes {
  ClusterState cluster;
  std::vector<JobState> jobs;
  explicit TwoTypes(int v100_free) {
    AddNodes(cluster, 1, 4, "a100", 2.0);
    AddNodes(cluster, 1, 4, "v100", 1.0);
    cluster.tenant_quota["t"] = 4;
    jobs = {Job("a", 2, 2, 0, 0.05), Job("b", 2, 2, 1, 0.0), Job("g", 1, 2, 9000, 0.0)};
    Place(cluster, jobs[0], 2);
    Place(cluster, jobs[1], 2);
    jobs[2].sla_class = SlaClass::kGuaranteed;
    jobs[2].tenant = "t";
    if (v100_free < 4) {
      JobState v = Job("v", 4 - v100_free, 4 - v100_free, 2, 0.0);
      v.allocation = {{1, 4 - v100_free}};
      cluster.nodes[1].free_devices = v100_free;
      v.started_s = v.last_resize_s = 0;
      v.expected_end_s = v.remaining_work = 1e6;
      jobs.push_back(v);
    }
  }
};

// Old rule (rubick, one type per job): the fastest type first, preempting a there although the
// v100 node has the two devices g is owed. elastic tries every type without preemption first:
// g starts on the two free v100 devices and nobody is preempted.
TEST(Preemption, ElasticPreemptsOnlyWhenNoDeviceTypeFitsWithoutIt) {
  {
    TwoTypes c(2);
    PolicyOutput out = RubickPolicy({}).Decide(c.cluster, c.jobs, 10000);
    ASSERT_NE(Find(out, "a"), nullptr);
    EXPECT_EQ(Find(out, "a")->kind, DecisionKind::kPreempt);
    ASSERT_NE(Find(out, "g"), nullptr);
    EXPECT_EQ(Find(out, "g")->allocation.front().node, 0);  // a100 (then grown into a's devices)
  }
  {
    TwoTypes c(2);
    PolicyOutput out = ElasticPolicy({}).Decide(c.cluster, c.jobs, 10000);
    for (const Decision& decision : out.decisions) {
      EXPECT_NE(decision.kind, DecisionKind::kPreempt) << decision.job_id;
    }
    const Decision* g = Find(out, "g");
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->kind, DecisionKind::kStart);
    EXPECT_EQ(g->allocation, (Allocation{{1, 2}}));
  }
  {  // Only one v100 device free: no type fits g without preemption, so a is preempted (a100).
    TwoTypes c(1);
    PolicyOutput out = ElasticPolicy({}).Decide(c.cluster, c.jobs, 10000);
    ASSERT_NE(Find(out, "a"), nullptr);
    EXPECT_EQ(Find(out, "a")->kind, DecisionKind::kPreempt);
    ASSERT_NE(Find(out, "g"), nullptr);
    EXPECT_EQ(Find(out, "g")->allocation.front().node, 0);
  }
}

}  // namespace
}  // namespace elastic::policy
