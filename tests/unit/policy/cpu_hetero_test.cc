// CPUs and host memory as scheduled dimensions, and heterogeneity-aware EST placement: the model's
// CPU and offload terms and the policies' choices, on small cases checked by hand.
#include <gtest/gtest.h>

#include "scheduler/policy/placement.h"
#include "scheduler/policy/rubick_policy.h"
#include "tests/unit/policy/cluster_builder.h"

namespace elastic::policy {
namespace {

// ---- model ------------------------------------------------------------------------------------

// cpu_need 4 threads per capability-1 device: 2 threads feed half a device, 8 feed an a100.
TEST(CpuModel, CpusBoundTheFedCapability) {
  model::JobProfile profile{1, 0.0};
  profile.cpu_need = 4.0;
  model::Shape v100{{{1.0, 1}}, 1};
  v100.cpus_per_device = 2;
  EXPECT_DOUBLE_EQ(model::Speedup(profile, v100), 0.5);
  v100.cpus_per_device = 4;
  EXPECT_DOUBLE_EQ(model::Speedup(profile, v100), 1.0);
  v100.cpus_per_device = 16;  // more than it needs: no faster
  EXPECT_DOUBLE_EQ(model::Speedup(profile, v100), 1.0);
  model::Shape a100{{{2.0, 1}}, 1};
  a100.cpus_per_device = 4;
  EXPECT_DOUBLE_EQ(model::Speedup(profile, a100), 1.0);  // a fast device starved of input
  a100.cpus_per_device = 8;
  EXPECT_DOUBLE_EQ(model::Speedup(profile, a100), 2.0);
  profile.cpu_need = 0.0;  // not CPU-bound
  a100.cpus_per_device = 1;
  EXPECT_DOUBLE_EQ(model::Speedup(profile, a100), 2.0);
}

// EasyScale Eq. 1 through PlanEsts: faster devices host more ESTs. maxP 16 on 4 a100 (C=2) and 4
// v100 (C=1): f = 1.5 gives A = (3, 1), 12 + 4 = 16 ESTs, rate 16 / 1.5 = 10.67, against 8 for
// the a100s alone (A = 4, f = 2) and 8 if the slowest device bounded all eight (A = 2, f = 2).
TEST(EstPlacement, FasterDevicesHostMoreEsts) {
  model::EstPlan plan = model::PlanEsts({{{2.0, 4}, {1.0, 4}}, 2}, 16);
  ASSERT_EQ(plan.ests_per_device.size(), 2u);
  EXPECT_EQ(plan.ests_per_device[0], 3);
  EXPECT_EQ(plan.ests_per_device[1], 1);
  EXPECT_DOUBLE_EQ(plan.f_overload, 1.5);
  EXPECT_DOUBLE_EQ(plan.compute_rate, 16.0 / 1.5);
  EXPECT_DOUBLE_EQ(model::EasyScaleComputeRate({{{2.0, 4}}, 1}, 16), 8.0);
}

// ZeRO-Offload keeps 2 of 16 state bytes on the device and needs the host memory the estimator
// gives; its optimizer step shrinks with more CPU threads (Rubick §4.2's T_opt).
TEST(OffloadPlan, NeedsHostMemoryAndGetsFasterWithCpus) {
  EXPECT_DOUBLE_EQ(model::PlanMemory(model::Plan::kOffload, 1.6, 1), 0.8 * 2 / 16 + 0.8);
  model::JobProfile profile{1, 0.0};
  profile.memory_need = 1.6;  // nothing else fits one device: dp 1.6, gc and zero-dp+gc 1.2
  profile.offload_host_mb = 1000;
  model::Shape shape{{{1.0, 1}}, 1};
  shape.host_mb = 999;
  EXPECT_DOUBLE_EQ(model::Speedup(profile, shape), 0.0);
  shape.host_mb = 1000;
  shape.cpus_per_device = 2;
  double two = model::Speedup(profile, shape);
  EXPECT_DOUBLE_EQ(two, 1.0 / (1.0 + model::kOffloadOptimizerCost * 0.8 / 2));
  shape.cpus_per_device = 8;
  EXPECT_GT(model::Speedup(profile, shape), two);
  EXPECT_EQ(model::BestPlan(profile, shape), model::Plan::kOffload);
}

// ---- policies ---------------------------------------------------------------------------------

JobState CpuJob(const std::string& id, int devices, double cpu_need, double submit) {
  JobState job;
  job.id = id;
  job.elastic = true;
  job.min_devices = job.requested_devices = job.max_devices = devices;
  job.submit_time_s = submit;
  job.profile = {devices, 0.0};
  job.profile.cpu_need = cpu_need;
  job.cpus_per_device = 4;
  job.min_cpus_per_device = 1;
  job.max_cpus_per_device = 16;
  job.expected_runtime_s = 1000;
  return job;
}

const Decision* Find(const PolicyOutput& out, const std::string& id) {
  for (const Decision& decision : out.decisions) {
    if (decision.job_id == id) return &decision;
  }
  return nullptr;
}

// One node, 4 devices, 16 CPUs (4 per device). "thrifty" needs 1 CPU per device, "hungry" 6:
// rubick gives each what feeds it (2 x 1 + 2 x 6 = 14 <= 16), where a fixed 4 per device would
// run hungry at 4/6 of its speed.
TEST(RubickCpus, GivesEachJobTheCpusThatFeedIt) {
  ClusterState cluster;
  AddNodes(cluster, 1, 4, "gpu", 1.0);
  cluster.nodes[0].cpus = cluster.nodes[0].free_cpus = 16;
  std::vector<JobState> jobs{CpuJob("thrifty", 2, 1.0, 0), CpuJob("hungry", 2, 6.0, 1)};
  PolicyOutput out = RubickPolicy({}).Decide(cluster, jobs, 10);
  const Decision* thrifty = Find(out, "thrifty");
  const Decision* hungry = Find(out, "hungry");
  ASSERT_NE(thrifty, nullptr);
  ASSERT_NE(hungry, nullptr);
  EXPECT_EQ(thrifty->cpus_per_device, 1);
  EXPECT_EQ(hungry->cpus_per_device, 6);
  EXPECT_EQ(DeviceCount(hungry->allocation), 2);
}

// Same node with only 8 CPUs: hungry cannot have 6 per device next to thrifty; it starts with
// the node type's even share (2 per device: 8 CPUs / 4 devices) or fewer instead of waiting, and
// no node's CPUs are over-allocated.
TEST(RubickCpus, ShrinksCpusToFitInsteadOfWaiting) {
  ClusterState cluster;
  AddNodes(cluster, 1, 4, "gpu", 1.0);
  cluster.nodes[0].cpus = cluster.nodes[0].free_cpus = 8;
  std::vector<JobState> jobs{CpuJob("thrifty", 2, 1.0, 0), CpuJob("hungry", 2, 6.0, 1)};
  PolicyOutput out = RubickPolicy({}).Decide(cluster, jobs, 10);
  const Decision* thrifty = Find(out, "thrifty");
  const Decision* hungry = Find(out, "hungry");
  ASSERT_NE(thrifty, nullptr);
  ASSERT_NE(hungry, nullptr);
  int used = DeviceCount(thrifty->allocation) * thrifty->cpus_per_device +
             DeviceCount(hungry->allocation) * hungry->cpus_per_device;
  EXPECT_LE(used, 8);
  EXPECT_EQ(hungry->cpus_per_device, 2);
}

// Policies that do not schedule CPUs leave the job's fixed count alone (decision says "unchanged").
TEST(FixedCpus, BackfillAndEasyScaleKeepTheirCpusPerDevice) {
  for (const char* name : {"backfill", "easyscale"}) {
    ClusterState cluster;
    AddNodes(cluster, 1, 4, "gpu", 1.0);
    JobState job = CpuJob("a", 2, 6.0, 0);
    job.max_cpus_per_device = job.min_cpus_per_device = job.cpus_per_device;
    PolicyOutput out = (*MakePolicy(name))->Decide(cluster, {job}, 10);
    ASSERT_EQ(out.decisions.size(), 1u) << name;
    EXPECT_LT(out.decisions[0].cpus_per_device, 0) << name;
    EXPECT_FALSE((*MakePolicy(name))->SchedulesCpus()) << name;
  }
  EXPECT_TRUE((*MakePolicy("rubick"))->SchedulesCpus());
  EXPECT_TRUE((*MakePolicy("elastic"))->SchedulesCpus());
  EXPECT_FALSE((*MakePolicy("rubick-e"))->SchedulesCpus());
}

// A job holding all 4 a100s (C=2) of a mixed cluster, with 4 v100s free. elastic grows it onto
// the v100s, priced by Eq. 1 (16 ESTs: 3 per a100, 1 per v100, rate 10.67 vs 8 alone); rubick
// keeps each job on one device type.
TEST(ElasticHetero, GrowsOntoASlowerTypeWhenEquation1SaysItPays) {
  ClusterState cluster;
  AddNodes(cluster, 1, 4, "a100", 2.0);
  AddNodes(cluster, 1, 4, "v100", 1.0);
  JobState job;
  job.id = "a";
  job.elastic = true;
  job.min_devices = 1;
  job.requested_devices = 4;
  job.max_devices = 16;
  job.profile = {16, 0.0};
  job.allocation = {{0, 4}};
  cluster.nodes[0].free_devices = 0;
  job.started_s = job.last_resize_s = 0;
  job.expected_end_s = 1e6;
  job.remaining_work = 1e6;
  PolicyOutput out = ElasticPolicy({}).Decide(cluster, {job}, 100000);
  const Decision* grown = Find(out, "a");
  ASSERT_NE(grown, nullptr);
  EXPECT_EQ(grown->allocation, (Allocation{{0, 4}, {1, 4}}));
  EXPECT_NEAR(model::Speedup(job.profile, ShapeOf(cluster, grown->allocation)), 16.0 / 1.5,
              1e-9);
  EXPECT_EQ(Find(RubickPolicy({}).Decide(cluster, {job}, 100000), "a"), nullptr);
}

// Shortest work first: one free device, two pending 1-device jobs; elastic starts the one with
// less work although it was submitted later, rubick the earlier one.
TEST(ElasticRanking, ShortestWorkStartsFirst) {
  ClusterState cluster;
  AddNodes(cluster, 1, 1, "gpu", 1.0);
  JobState longer = CpuJob("long", 1, 0.0, 0);
  longer.expected_runtime_s = 100000;
  JobState shorter = CpuJob("short", 1, 0.0, 1);
  shorter.expected_runtime_s = 100;
  PolicyOutput elastic = ElasticPolicy({}).Decide(cluster, {longer, shorter}, 10);
  EXPECT_NE(Find(elastic, "short"), nullptr);
  EXPECT_EQ(Find(elastic, "long"), nullptr);
  PolicyOutput rubick = RubickPolicy({}).Decide(cluster, {longer, shorter}, 10);
  EXPECT_NE(Find(rubick, "long"), nullptr);
  PolicyOptions off;
  off.elastic_shortest_work_first = false;
  EXPECT_NE(Find(ElasticPolicy(off).Decide(cluster, {longer, shorter}, 10), "long"), nullptr);
}

// The bucketed PickDevices respects CPU limits: a node with free devices but no CPUs is skipped.
TEST(PickDevicesCpus, SkipsNodesWithoutCpus) {
  ClusterState cluster;
  AddNodes(cluster, 2, 4, "gpu", 1.0);
  cluster.nodes[0].free_cpus = 3;  // 4 devices free but CPUs for only one at 3 per device
  FreeLedger ledger(cluster);
  JobState job;
  job.cpus_per_device = 3;
  EXPECT_EQ(PickDevices(cluster, ledger, job, "gpu", 2), (Allocation{{1, 2}}));
  EXPECT_EQ(PickDevices(cluster, ledger, job, "gpu", 5), (Allocation{{0, 1}, {1, 4}}));
  EXPECT_FALSE(PickDevices(cluster, ledger, job, "gpu", 6));
}

}  // namespace
}  // namespace elastic::policy
