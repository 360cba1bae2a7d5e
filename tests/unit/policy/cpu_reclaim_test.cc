// CPUs reclaimed from running jobs (Rubick Algorithm 1 per resource type): hand-checked cases.
#include <gtest/gtest.h>

#include "scheduler/policy/rubick_policy.h"
#include "tests/unit/policy/cluster_builder.h"

namespace elastic::policy {
namespace {

const Decision* Find(const PolicyOutput& out, const std::string& id) {
  for (const Decision& decision : out.decisions) {
    if (decision.job_id == id) return &decision;
  }
  return nullptr;
}

// One node: 4 devices, 16 CPUs. "a" (elastic at exactly 2 devices, linear, input pipeline needs
// 8 CPU threads per device) runs on 2 devices with 8 CPUs each since t=0: every CPU is taken.
// "b" (rigid, 2 devices, not CPU-bound, fixed `b_cpus` CPUs per device) waits.
// a's speed with c CPUs per device is 2 x min(1, c/8), so each CPU per device it gives back
// costs 2/8 over the 2 CPUs freed: a CPU slope of 0.125. b's slope is 1 per device; per CPU it
// needs, 1/b_cpus.
struct CpuBound {
  ClusterState cluster;
  std::vector<JobState> jobs;
  explicit CpuBound(int b_devices, int b_cpus) {
    AddNodes(cluster, 1, 4, "gpu", 1.0);
    cluster.nodes[0].cpus = 16;
    cluster.nodes[0].free_devices = 2;
    cluster.nodes[0].free_cpus = 0;
    JobState a;
    a.id = "a";
    a.elastic = true;
    a.min_devices = a.requested_devices = a.max_devices = 2;
    a.profile = {2, 0.0};
    a.profile.cpu_need = 8.0;
    a.cpus_per_device = 8;
    a.min_cpus_per_device = 1;
    a.max_cpus_per_device = 8;
    a.allocation = {{0, 2}};
    a.started_s = a.last_resize_s = 0;
    a.expected_end_s = 1e6;
    a.remaining_work = 1e6;
    JobState b;
    b.id = "b";
    b.elastic = false;
    b.min_devices = b.requested_devices = b.max_devices = b_devices;
    b.profile = {b_devices, 0.0};
    b.cpus_per_device = b_cpus;
    b.submit_time_s = 9000;
    b.expected_runtime_s = 1000;
    jobs = {a, b};
  }
};

// b with 2 CPUs per device gains 1/2 per CPU > a's 0.125: a gives one CPU per device at a time
// until b's 4 CPUs are free (8 -> 7 -> 6), and no further.
TEST(CpuReclaim, CheaperCpusGoToTheJobThatGainsMore) {
  for (const char* name : {"rubick", "elastic"}) {
    CpuBound c(2, 2);
    PolicyOutput out = (*MakePolicy(name))->Decide(c.cluster, c.jobs, 10000);
    const Decision* a = Find(out, "a");
    const Decision* b = Find(out, "b");
    ASSERT_NE(a, nullptr) << name;
    ASSERT_NE(b, nullptr) << name;
    EXPECT_EQ(a->kind, DecisionKind::kResize) << name;
    EXPECT_EQ(a->allocation, (Allocation{{0, 2}})) << name;  // devices untouched
    EXPECT_EQ(a->cpus_per_device, 6) << name;
    EXPECT_NE(a->reason.find("CPUs shrunk for b"), std::string::npos) << a->reason;
    EXPECT_EQ(b->kind, DecisionKind::kStart) << name;
    EXPECT_EQ(b->allocation, (Allocation{{0, 2}})) << name;
    EXPECT_NE(b->reason.find("2 CPU steps taken"), std::string::npos) << b->reason;
    EXPECT_EQ(&out.decisions.front(), a) << name;  // a gives back before b takes
  }
}

// b with 8 CPUs for its one device gains 1/8 per CPU, no more than a loses: as best-effort it
// waits (case 1). Guaranteed within quota it may take them whatever the slopes (case 2): a goes
// to 4 CPUs per device (four steps of 2 CPUs free the 8 that b needs).
TEST(CpuReclaim, EqualSlopesWaitButAGuaranteedJobTakesWhatItNeeds) {
  CpuBound c(1, 8);
  EXPECT_TRUE(RubickPolicy({}).Decide(c.cluster, c.jobs, 10000).decisions.empty());
  c.jobs[1].sla_class = SlaClass::kGuaranteed;
  c.jobs[1].tenant = "t";
  c.cluster.tenant_quota["t"] = 1;
  PolicyOutput out = RubickPolicy({}).Decide(c.cluster, c.jobs, 10000);
  const Decision* a = Find(out, "a");
  const Decision* b = Find(out, "b");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->cpus_per_device, 4);
  EXPECT_EQ(DeviceCount(b->allocation), 1);
  EXPECT_EQ(b->cpus_per_device, 8);
}

// Never below a job's minimum CPUs per device: with a's minimum at 6, b (8 CPUs) cannot fit even
// as a guaranteed job, and nothing changes (the steps taken are undone).
TEST(CpuReclaim, NeverBelowTheMinimumAndAllOrNothing) {
  CpuBound c(1, 8);
  c.jobs[0].min_cpus_per_device = 6;
  c.jobs[1].sla_class = SlaClass::kGuaranteed;
  c.jobs[1].tenant = "t";
  c.cluster.tenant_quota["t"] = 1;
  EXPECT_TRUE(RubickPolicy({}).Decide(c.cluster, c.jobs, 10000).decisions.empty());
}

// Rubick §5.3 holds for CPU changes too: a started 999 s ago may not be reconfigured.
TEST(CpuReclaim, PenaltyRuleProtectsAYoungJob) {
  CpuBound c(2, 2);
  c.jobs[0].started_s = 10000 - 999;
  EXPECT_TRUE(RubickPolicy({}).Decide(c.cluster, c.jobs, 10000).decisions.empty());
}

}  // namespace
}  // namespace elastic::policy
