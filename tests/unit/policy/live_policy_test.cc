// elasticd's live adapter (scheduler/policy/live_policy.h) and the resize decision's policy path
// (DecideResizes with a Policy): hand-checked cases of what each policy name does differently
// live, the adapter's conversions (batch host, MIN, nodes not free for growth, no moves, no
// starts or preemptions), and a property test over random Slurm views that no order ever grows
// into a planned, reserved, busy or promised node, nor shrinks below MIN or the batch host.
#include "scheduler/policy/live_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "scheduler/policy/node_types.h"
#include "scheduler/policy/policy.h"
#include "scheduler/policy/resize_decision.h"
#include "tests/unit/policy/test_cluster.h"

namespace elastic::policy {
namespace {

constexpr std::int64_t kNow = 1'000'000;

std::unique_ptr<Policy> Make(std::string_view name) {
  auto made = MakePolicy(name, LivePolicyOptions(LiveOptions{}));
  EXPECT_TRUE(made) << made.error;
  return made ? std::move(*made) : nullptr;
}

using Nodes = std::vector<std::string>;

// A partition of nodes n1..n<count> (8 CPUs each); jobs are added with Job(), the rest is free.
class LivePolicyTest : public ::testing::Test {
 protected:
  LiveJob& Job(std::uint32_t id, std::vector<std::string> nodes, int min, int max, int ests = 8) {
    LiveJob job;
    job.job_id = id;
    std::sort(nodes.begin(), nodes.end());
    names_[id] = std::move(nodes);  // numbered when the partition's nodes are set
    job.min_nodes = min;
    job.max_nodes = max;
    job.ests = ests;
    job.start_time = kNow - 3600;
    partition_.jobs.push_back(job);
    return partition_.jobs.back();
  }

  // The partition's nodes, held ones first; each job's nodes (and batch host: its first name)
  // become their indices.
  void SetNodes(const std::vector<LiveNode>& held, const std::vector<LiveNode>& free) {
    partition_.now = kNow;
    partition_.nodes = held;
    partition_.nodes.insert(partition_.nodes.end(), free.begin(), free.end());
    partition_.free.assign(held.size(), false);
    partition_.free.resize(partition_.nodes.size(), true);
    for (LiveJob& job : partition_.jobs) {
      job.nodes.clear();
      for (const std::string& name : names_[job.job_id]) job.nodes.push_back(IndexOf(name));
      std::sort(job.nodes.begin(), job.nodes.end());
      job.batch_host = IndexOf(names_[job.job_id].front());
    }
  }

  int IndexOf(const std::string& name) const {
    for (std::size_t k = 0; k < partition_.nodes.size(); ++k) {
      if (partition_.nodes[k].name == name) return static_cast<int>(k);
    }
    ADD_FAILURE() << name << " is not in the partition";
    return -1;
  }

  // A change's target by name, sorted.
  Nodes Names(const LiveChange& change) const {
    Nodes names;
    for (int k : change.target) names.push_back(partition_.nodes[k].name);
    std::sort(names.begin(), names.end());
    return names;
  }

  // The nodes of n1..n<count> no job holds are free for growth.
  std::vector<LiveChange> Decide(std::string_view policy, int count) {
    std::set<std::string> taken;
    for (const LiveJob& job : partition_.jobs) {
      taken.insert(names_[job.job_id].begin(), names_[job.job_id].end());
    }
    std::vector<LiveNode> held, free;
    for (int i = 1; i <= count; ++i) {
      const std::string name = "n" + std::to_string(i);
      (taken.contains(name) ? held : free).push_back({name, 8, devices_});
    }
    SetNodes(held, free);
    return DecideLive(*Make(policy), partition_, LiveOptions{});
  }

  static const LiveChange* For(const std::vector<LiveChange>& changes, std::uint32_t id) {
    for (const LiveChange& c : changes) {
      if (c.job_id == id) return &c;
    }
    return nullptr;
  }

  LivePartition partition_;
  std::map<std::uint32_t, Nodes> names_;  // each job's nodes by name
  int devices_ = 1;  // per node of n1..n<count> in Decide (1 = CPU nodes)
};

// The input the policies see: one device per node, held nodes busy, free nodes free; a job held
// by the interval or the penalty rule is rigid at its size; no time limit reads as a year.
TEST_F(LivePolicyTest, ToPolicyInputShowsNodesAsDevices) {
  Job(7, {"n1", "n2"}, 1, 4, 8).end_time = kNow + 600;
  Job(9, {"n3"}, 1, 4, 8).may_resize = false;
  SetNodes({{"n1", 8}, {"n2", 8}, {"n3", 16}}, {{"n4", 8}});
  const PolicyInput input = ToPolicyInput(partition_, LiveOptions{});
  ASSERT_EQ(input.cluster.nodes.size(), 4u);
  EXPECT_EQ(input.cluster.nodes[2].cpus, 16);
  EXPECT_EQ(input.cluster.nodes[0].free_devices, 0);
  EXPECT_EQ(input.cluster.nodes[3].free_devices, 1);
  ASSERT_EQ(input.jobs.size(), 2u);
  EXPECT_EQ(input.jobs[0].id, "7");
  EXPECT_TRUE(input.jobs[0].elastic);
  EXPECT_EQ(input.jobs[0].allocation, (Allocation{{0, 1}, {1, 1}}));
  EXPECT_EQ(input.jobs[0].max_devices, 4);
  EXPECT_DOUBLE_EQ(input.jobs[0].expected_end_s, kNow + 600.0);
  EXPECT_EQ(input.jobs[0].profile.ests, 8);
  EXPECT_FALSE(input.jobs[1].elastic);
  EXPECT_EQ(input.jobs[1].min_devices, 1);
  EXPECT_EQ(input.jobs[1].max_devices, 1);
  EXPECT_EQ(input.jobs[1].expected_end_s, kNever);
  EXPECT_DOUBLE_EQ(input.jobs[1].remaining_work, 365.0 * 86400.0);
  const PolicyOptions options = LivePolicyOptions(LiveOptions{});
  EXPECT_FALSE(options.preempt_best_effort);
  EXPECT_EQ(options.reference_devices_per_node, 1);
}

// A job whose node list breaks LiveJob's contract (a repeat, an index past the partition): each
// node counts once, an unknown one as one device, as a node the cluster did not show always did.
TEST_F(LivePolicyTest, ToPolicyInputCountsRepeatedAndUnknownNodesOnce) {
  SetNodes({{"n1", 8, 2}}, {{"n2", 8, 2}});
  LiveJob job;
  job.job_id = 5;
  job.nodes = {0, 0, 9};
  job.max_nodes = 4;
  partition_.jobs.push_back(job);
  const PolicyInput input = ToPolicyInput(partition_, LiveOptions{});
  ASSERT_EQ(input.jobs.size(), 1u);
  EXPECT_EQ(input.jobs[0].allocation, (Allocation{{0, 2}}));
  EXPECT_EQ(input.jobs[0].requested_devices, 3);
}

// All three resizing policies grow a lone job up to its E = 4 ESTs and no further, though MAX is
// 8 and 5 nodes are free (Eq. 1: 5+ workers run no faster than 4).
TEST_F(LivePolicyTest, EveryResizingPolicyGrowsUpToTheEstsOnly) {
  for (const char* name : {"easyscale", "rubick", "elastic"}) {
    partition_.jobs.clear();
    Job(1, {"n1"}, 1, 8, /*ests=*/4);
    const std::vector<LiveChange> changes = Decide(name, 6);
    ASSERT_EQ(changes.size(), 1u) << name;
    EXPECT_EQ(Names(changes[0]), (Nodes{"n1", "n2", "n3", "n4"})) << name;
    EXPECT_EQ(changes[0].reason.rfind(std::string(name) + ":", 0), 0u) << changes[0].reason;
  }
}

// GPU nodes: each node shows its devices, a job holds every device of its nodes, its MIN/MAX
// scale by its devices per node, and its per-node speed curve reads per device (linear within a
// node). A job on two 2-GPU nodes holds 4 devices.
TEST_F(LivePolicyTest, ToPolicyInputShowsEachNodesDevices) {
  Job(7, {"n1", "n2"}, 1, 4, 8).speed_curve = {100, 180};
  SetNodes({{"n1", 8, 2}, {"n2", 8, 2}}, {{"n3", 8, 2}, {"n4", 8, 0}});  // 0: read as 1 device
  const PolicyInput input = ToPolicyInput(partition_, LiveOptions{});
  ASSERT_EQ(input.cluster.nodes.size(), 4u);
  EXPECT_EQ(input.cluster.nodes[0].devices, 2);
  EXPECT_EQ(input.cluster.nodes[0].free_devices, 0);
  EXPECT_EQ(input.cluster.nodes[2].free_devices, 2);
  EXPECT_EQ(input.cluster.nodes[3].free_devices, 1);
  ASSERT_EQ(input.jobs.size(), 1u);
  EXPECT_EQ(input.jobs[0].allocation, (Allocation{{0, 2}, {1, 2}}));
  EXPECT_EQ(DeviceCount(input.jobs[0].allocation), 4);
  EXPECT_EQ(input.jobs[0].requested_devices, 4);
  EXPECT_EQ(input.jobs[0].min_devices, 2);
  EXPECT_EQ(input.jobs[0].max_devices, 8);
  EXPECT_EQ(input.jobs[0].profile.measured_speedup, (std::vector<double>{1.0, 2.0, 2.8, 3.6}));
  // One device per node: the curve over its first point, as before devices were counted.
  EXPECT_EQ(DeviceSpeedups({100, 180}, 1), (std::vector<double>{1.0, 1.8}));
  EXPECT_TRUE(DeviceSpeedups({0, 180}, 2).empty());
}

// With 2 GPUs per node a 4-EST job's 4 workers fit on 2 nodes: every resizing policy grows it
// to 2 nodes where, on CPU nodes, it grows to 4 (EveryResizingPolicyGrowsUpToTheEstsOnly).
TEST_F(LivePolicyTest, TwoGpusPerNodeHalveTheNodesAJobGrowsTo) {
  devices_ = 2;
  for (const char* name : {"easyscale", "rubick", "elastic"}) {
    partition_.jobs.clear();
    Job(1, {"n1"}, 1, 8, /*ests=*/4);
    const std::vector<LiveChange> changes = Decide(name, 6);
    ASSERT_EQ(changes.size(), 1u) << name;
    EXPECT_EQ(Names(changes[0]), (Nodes{"n1", "n2"})) << name;
  }
}

// easyscale grows a running job only when the time saved beats the resize cost (EasyScale's
// intra-job planner): a job 2 s from its time limit does not grow (saves < 2 s, costs 3 s).
// rubick and elastic grow by slope alone.
TEST_F(LivePolicyTest, EasyscaleDoesNotGrowAJobAboutToEndRubickAndElasticDo) {
  for (const char* name : {"easyscale", "rubick", "elastic"}) {
    partition_.jobs.clear();
    Job(1, {"n1"}, 1, 8).end_time = kNow + 2;
    const std::vector<LiveChange> changes = Decide(name, 3);
    EXPECT_EQ(changes.empty(), std::string(name) == "easyscale") << name;
  }
}

// Job 1 on 5 nodes with E = 8 runs as fast as on 4 (ceil(8/5) = ceil(8/4) = 2 ESTs per worker):
// its last node has ~zero slope, job 2's second node ~+0.9. rubick and elastic shrink job 1
// for job 2 (Algorithm 1 case 1, lowest slope above MIN), keeping its batch host; job 2's growth
// needs that node released first, so live it waits for a later cycle. easyscale never shrinks.
// (Neither has a time limit, so elastic ranks them by slope alone, like rubick.)
TEST_F(LivePolicyTest, RubickAndElasticShrinkTheLowestSlopeEasyscaleNever) {
  for (const char* name : {"easyscale", "rubick", "elastic"}) {
    partition_.jobs.clear();
    Job(1, {"n1", "n2", "n3", "n4", "n5"}, 2, 8);
    Job(2, {"n6"}, 1, 8);
    const std::vector<LiveChange> changes = Decide(name, 6);
    if (std::string(name) == "easyscale") {
      EXPECT_TRUE(changes.empty());
      continue;
    }
    const LiveChange* shrink = For(changes, 1);
    ASSERT_NE(shrink, nullptr) << name;
    EXPECT_EQ(Names(*shrink), (Nodes{"n1", "n2", "n3", "n4"})) << name;
    EXPECT_EQ(For(changes, 2), nullptr) << name;  // nothing free now
  }
}

// Rubick §5.2: a job whose supervisor reports its sensitivity curve is ranked by that curve. Job 1
// gains nothing past one node (flat), job 2 nearly linearly: job 2 grows to its MAX and job 1
// stays, where the speedup model (the same for both) grows both and job 2 less.
TEST_F(LivePolicyTest, TheSupervisorsSensitivityCurveReplacesTheSpeedupModel) {
  for (const char* name : {"rubick", "elastic"}) {
    for (bool curves : {false, true}) {
      partition_.jobs.clear();
      Job(1, {"n1"}, 1, 4);
      Job(2, {"n2"}, 1, 3);
      if (curves) {
        partition_.jobs[0].speed_curve = {500, 500, 500, 500};
        partition_.jobs[1].speed_curve = {500, 990, 1470};
      }
      const std::vector<LiveChange> changes = Decide(name, 6);
      const LiveChange* two = For(changes, 2);
      ASSERT_NE(two, nullptr) << name << " curves " << curves;
      const LiveChange* one = For(changes, 1);
      if (curves) {
        EXPECT_EQ(two->target.size(), 3u) << name;
        EXPECT_EQ(one, nullptr) << name << ": a flat curve gains nothing from more nodes";
      } else {
        ASSERT_NE(one, nullptr) << name;
        EXPECT_GT(one->target.size(), 1u) << name;
      }
    }
  }
}

// Same speed curves, one free node. rubick ranks by slope (equal) then submit time: job 2,
// started earlier, grows. elastic ranks slopes by remaining work (shortest first): job 1,
// 10 minutes from its limit against job 2's 10 hours, grows.
TEST_F(LivePolicyTest, ElasticGrowsTheShortestRemainingWorkRubickTheEarliest) {
  for (const char* name : {"rubick", "elastic"}) {
    partition_.jobs.clear();
    LiveJob& a = Job(1, {"n1"}, 1, 8);
    a.end_time = kNow + 600;
    LiveJob& b = Job(2, {"n2"}, 1, 8);
    b.start_time = kNow - 7200;
    b.end_time = kNow + 36000;
    const std::vector<LiveChange> changes = Decide(name, 3);
    ASSERT_EQ(changes.size(), 1u) << name;
    const bool elastic = std::string(name) == "elastic";
    EXPECT_EQ(changes[0].job_id, elastic ? 1u : 2u) << name;
    EXPECT_EQ(Names(changes[0]), elastic ? (Nodes{"n1", "n3"}) : (Nodes{"n2", "n3"})) << name;
  }
}

// backfill never resizes; a job held by the interval or penalty rule is never moved by any.
TEST_F(LivePolicyTest, BackfillAndHeldJobsAreNeverResized) {
  Job(1, {"n1"}, 1, 8);
  EXPECT_TRUE(Decide("backfill", 4).empty());
  EXPECT_FALSE(Make("backfill")->WantsElasticJobs());
  for (const char* name : {"easyscale", "rubick", "elastic"}) {
    partition_.jobs.clear();
    Job(1, {"n1"}, 1, 8).may_resize = false;
    Job(2, {"n2", "n3", "n4", "n5", "n6"}, 1, 8).may_resize = false;
    EXPECT_TRUE(Decide(name, 8).empty()) << name;
  }
}

// ToLiveChanges on hand-made decisions: the batch host stays (another node goes), MIN holds, a
// grow takes only nodes free for growth, equal-size moves, starts and preemptions are dropped.
TEST_F(LivePolicyTest, ConversionKeepsBatchHostMinAndFreeNodesOnly) {
  Job(1, {"n1", "n2", "n3"}, 2, 8);
  Job(2, {"n4"}, 1, 8);
  SetNodes({{"n1", 8}, {"n2", 8}, {"n3", 8}, {"n4", 8}}, {{"n5", 8}, {"n6", 8}});
  auto decide = [&](Decision d) {
    PolicyOutput out;
    out.decisions.push_back(std::move(d));
    return ToLiveChanges(partition_, out, "rubick");
  };
  // Drops the batch host n1 (node 0): n3 (last name of the rest) is released instead.
  auto changes = decide({DecisionKind::kResize, "1", {{1, 1}, {2, 1}}, "rubick: x"});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(Names(changes[0]), (Nodes{"n1", "n2"}));
  EXPECT_EQ(changes[0].reason, "rubick: x");
  // To 1 node, below MIN 2: clamped to 2.
  changes = decide({DecisionKind::kResize, "1", {{2, 1}}, "y"});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(Names(changes[0]), (Nodes{"n1", "n3"}));
  EXPECT_EQ(changes[0].reason, "rubick: y");
  // Job 2 grows onto n3 (job 1's) and n5 (free): only n5 now.
  changes = decide({DecisionKind::kResize, "2", {{2, 1}, {3, 1}, {4, 1}}, "rubick: z"});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(Names(changes[0]), (Nodes{"n4", "n5"}));
  EXPECT_NE(changes[0].reason.find("1 more once the nodes"), std::string::npos);
  // Job 2 moved n4 -> n5 (same size), a start and a preemption: nothing.
  EXPECT_TRUE(decide({DecisionKind::kResize, "2", {{4, 1}}, ""}).empty());
  EXPECT_TRUE(decide({DecisionKind::kStart, "2", {{3, 1}, {4, 1}}, ""}).empty());
  EXPECT_TRUE(decide({DecisionKind::kPreempt, "2", {}, ""}).empty());
  EXPECT_TRUE(decide({DecisionKind::kResize, "99", {{5, 1}}, ""}).empty());
  // A job id that is not a number of the partition's jobs, and nodes outside the partition, are
  // ignored: job 2 grows onto n5 only.
  EXPECT_TRUE(decide({DecisionKind::kResize, "2x", {{3, 1}, {4, 1}}, ""}).empty());
  changes = decide({DecisionKind::kResize, "2", {{3, 1}, {4, 1}, {40, 1}, {-1, 1}}, "w"});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(Names(changes[0]), (Nodes{"n4", "n5"}));
}

// DecideResizes with a Policy: step 1 is the same for every policy (job 1 shrinks for the waiting
// job, preferring its planned nodes), and no policy grows into the claimed, planned or reserved
// nodes.
class DecisionWithPolicy : public ::testing::TestWithParam<const char*> {};

TEST_P(DecisionWithPolicy, StepOneIsTheSameAndGrowthAvoidsPlannedAndReservedNodes) {
  const auto policy = Make(GetParam());
  {  // job 1 on n1-n4 (min 1), n5 n6 idle; job 2 waits for 4 nodes planned on n3-n6.
    SlurmView view = TestCluster(6, kNow);
    view.jobs.push_back(RunningOn(1, {"n1", "n2", "n3", "n4"}, view));
    SlurmJob waiting;
    waiting.job_id = 2;
    waiting.partition = "main";
    waiting.state = SlurmJobState::kPending;
    waiting.reason = "Resources";
    waiting.min_nodes = 4;
    waiting.sched_nodes = {"n3", "n4", "n5", "n6"};
    view.jobs.push_back(waiting);
    const ResizeDecision decision = DecideResizes(view, {Registered(1, 1, 8)}, {}, *policy);
    ASSERT_EQ(decision.proposals.size(), 1u) << GetParam();
    EXPECT_EQ(decision.proposals[0].kind, ResizeKind::kShrink);
    EXPECT_EQ(decision.proposals[0].target_nodes, (Nodes{"n1", "n2"}));
    EXPECT_EQ(decision.proposals[0].changed_nodes, (Nodes{"n3", "n4"}));
  }
  {  // job 1 on n1; n2 planned for a pending job, n3 reserved in 10 minutes: grows onto n4-n6.
    SlurmView view = TestCluster(6, kNow);
    view.jobs.push_back(RunningOn(1, {"n1"}, view));
    SlurmJob pending;
    pending.job_id = 2;
    pending.partition = "main";
    pending.state = SlurmJobState::kPending;
    pending.reason = "Dependency";
    pending.min_nodes = 1;
    pending.sched_nodes = {"n2"};
    view.jobs.push_back(pending);
    SlurmReservation r;
    r.name = "maint";
    r.start_time = kNow + 600;
    r.end_time = kNow + 7200;
    r.nodes = {"n3"};
    view.reservations.push_back(r);
    const ResizeDecision decision = DecideResizes(view, {Registered(1, 1, 8)}, {}, *policy);
    ASSERT_EQ(decision.proposals.size(), 1u) << GetParam();
    EXPECT_EQ(decision.proposals[0].kind, ResizeKind::kGrow);
    EXPECT_EQ(decision.proposals[0].target_nodes, (Nodes{"n1", "n4", "n5", "n6"})) << GetParam();
  }
}

// The resize decision reads the view's devices per node on both paths: with 2-GPU nodes a
// 4-EST job grows onto one more node (4 devices), with CPU nodes onto all four.
TEST_P(DecisionWithPolicy, GpuNodesCountTheirDevices) {
  const auto policy = Make(GetParam());
  for (int devices : {1, 2}) {
    SlurmView view = TestCluster(4, kNow, 4, devices);
    view.jobs.push_back(RunningOn(1, {"n1"}, view));
    const ResizeDecision by_policy = DecideResizes(view, {Registered(1, 1, 8, 4)}, {}, *policy);
    const ResizeDecision greedy = DecideResizes(view, {Registered(1, 1, 8, 4)}, {});
    const Nodes want = devices == 1 ? Nodes{"n1", "n2", "n3", "n4"} : Nodes{"n1", "n2"};
    ASSERT_EQ(by_policy.proposals.size(), 1u) << GetParam() << " " << devices;
    EXPECT_EQ(by_policy.proposals[0].target_nodes, want) << GetParam() << " " << devices;
    ASSERT_EQ(greedy.proposals.size(), 1u) << devices;
    EXPECT_EQ(greedy.proposals[0].target_nodes, want) << devices;
  }
}

// Node types live (node_types.h): the gres GPU type, else a feature [node_types] names. Under
// rubick and elastic a job on an a100 node grows onto the free a100 node, never onto the free
// v100 one (one type per job live); easyscale may mix types (EasyScale's heterogeneous
// placement), and does here.
TEST_P(DecisionWithPolicy, NodeTypesFromGresOrFeaturesKeepAJobOnItsType) {
  const auto policy = Make(GetParam());
  SlurmView view = TestCluster(4, kNow, 4, 2);
  view.nodes[0].gpu_type = view.nodes[2].gpu_type = "a100";
  view.nodes[1].features = view.nodes[3].features = {"ib", "v100"};
  view.jobs.push_back(RunningOn(1, {"n1"}, view));
  view.jobs.push_back(RunningOn(2, {"n2"}, view));
  ResizeDecisionOptions options;
  options.node_types = {{"a100", 2.0}, {"v100", 1.0}};
  const ResizeDecision decision =
      DecideResizes(view, {Registered(1, 1, 4, 8), Registered(2, 1, 4, 8)}, options, *policy);
  std::map<std::uint32_t, Nodes> targets;
  for (const ResizeProposal& p : decision.proposals) targets[p.job_id] = p.target_nodes;
  if (std::string(GetParam()) == "easyscale") {
    EXPECT_EQ(targets[2], (Nodes{"n2", "n3", "n4"}));  // v100 + a100 + v100
  } else {
    EXPECT_EQ(targets[1], (Nodes{"n1", "n3"})) << GetParam();
    EXPECT_EQ(targets[2], (Nodes{"n2", "n4"})) << GetParam();
  }

  EXPECT_EQ(NodeTypeOf(view.nodes[0], options.node_types).capability, 2.0);
  EXPECT_EQ(NodeTypeOf(view.nodes[1], options.node_types).name, "v100");
  EXPECT_EQ(NodeTypeOf(view.nodes[1], {}).name, kUntypedNode);  // a feature no table names
  EXPECT_EQ(NodeTypeOf(view.nodes[0], {}).capability, 1.0);     // a type no table names
}

// Random views: no grow order takes a node that is not idle, is planned for a pending job,
// reserved within the horizon, promised to an in-flight grow or taken by another order; no
// order leaves a job below MIN or without its batch host; every order is a pure grow (target a
// superset) or pure shrink (a subset); a busy job gets no order.
TEST_P(DecisionWithPolicy, PropertyNoGrowthIntoPlannedOrReservedNodesNoShrinkBelowMin) {
  const auto policy = Make(GetParam());
  std::mt19937 rng(20261121);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int orders = 0, grows = 0, shrinks = 0;
  for (int round = 0; round < 300; ++round) {
    SlurmView view;
    view.now = kNow;
    const int node_count = uniform(4, 24);
    for (int i = 0; i < node_count; ++i) {
      SlurmNode node;
      node.name = (i < 10 ? "n0" : "n") + std::to_string(i);
      node.partitions = {uniform(0, 4) == 0 ? "debug" : "main"};
      if (uniform(0, 6) == 0) node.partitions.push_back("main");
      node.cpus = 8 * uniform(1, 4);
      node.available = uniform(0, 9) != 0;
      view.nodes.push_back(node);
    }
    std::vector<std::string> free_names;
    for (const SlurmNode& n : view.nodes) free_names.push_back(n.name);
    std::shuffle(free_names.begin(), free_names.end(), rng);
    std::vector<ElasticJob> jobs;
    std::map<std::uint32_t, SlurmJob> running;
    std::uint32_t id = 100;
    std::size_t next = 0;
    while (next < free_names.size() && uniform(0, 3) != 0) {
      const int size = std::min<int>(uniform(1, 5), static_cast<int>(free_names.size() - next));
      std::vector<std::string> nodes(free_names.begin() + static_cast<long>(next),
                                     free_names.begin() + static_cast<long>(next + size));
      next += size;
      std::sort(nodes.begin(), nodes.end());
      SlurmJob job = RunningOn(++id, nodes, view);
      job.batch_host = nodes[static_cast<std::size_t>(uniform(0, size - 1))];
      job.partition = uniform(0, 4) == 0 ? "debug" : "main";
      job.start_time = kNow - uniform(10, 20000);
      job.end_time = uniform(0, 2) == 0 ? 0 : kNow + uniform(1, 40000);
      view.jobs.push_back(job);
      if (uniform(0, 4) == 0) continue;  // not an elastic job
      ElasticJob e;
      e.job_id = job.job_id;
      e.min_nodes = uniform(1, size);
      e.max_nodes = size + uniform(0, 6);
      e.ests = 1 << uniform(0, 4);
      e.last_resize = uniform(0, 1) == 0 ? 0 : kNow - uniform(0, 300);
      e.resizes = uniform(0, 4);
      if (uniform(0, 7) == 0) {
        e.busy = true;
        if (next < free_names.size() && uniform(0, 1) == 0) e.adding = {free_names[next++]};
      }
      running[job.job_id] = job;
      jobs.push_back(e);
    }
    std::set<std::string> forbidden;  // for growth
    for (int p = uniform(0, 3); p > 0; --p) {
      SlurmJob pending;
      pending.job_id = ++id;
      pending.partition = uniform(0, 4) == 0 ? "debug" : "main";
      pending.state = SlurmJobState::kPending;
      pending.reason =
          uniform(0, 2) == 0 ? "Dependency" : (uniform(0, 1) ? "Resources" : "Priority");
      pending.priority = static_cast<std::uint32_t>(uniform(0, 1000));
      pending.min_nodes = uniform(1, 6);
      for (const SlurmNode& n : view.nodes) {
        if (uniform(0, 3) == 0) pending.sched_nodes.push_back(n.name);
      }
      forbidden.insert(pending.sched_nodes.begin(), pending.sched_nodes.end());
      view.jobs.push_back(pending);
    }
    if (uniform(0, 1) == 0) {
      SlurmReservation r;
      r.name = "r";
      r.start_time = kNow + uniform(-100, 7200);
      r.end_time = r.start_time + 3600;
      for (const SlurmNode& n : view.nodes) {
        if (uniform(0, 3) == 0) r.nodes.push_back(n.name);
      }
      if (r.start_time <= kNow + 3600) forbidden.insert(r.nodes.begin(), r.nodes.end());
      view.reservations.push_back(r);
    }
    std::sort(view.jobs.begin(), view.jobs.end(),
              [](const SlurmJob& a, const SlurmJob& b) { return a.job_id < b.job_id; });
    std::set<std::string> idle;
    for (const SlurmNode& n : view.nodes) {
      if (n.idle()) idle.insert(n.name);
    }
    for (const ElasticJob& e : jobs) forbidden.insert(e.adding.begin(), e.adding.end());

    const ResizeDecision decision = DecideResizes(view, jobs, {}, *policy);
    std::set<std::string> taken;
    for (const ResizeProposal& order : decision.proposals) {
      ++orders;
      const auto job = std::find_if(jobs.begin(), jobs.end(),
                                    [&](const ElasticJob& e) { return e.job_id == order.job_id; });
      ASSERT_NE(job, jobs.end());
      EXPECT_FALSE(job->busy);
      const SlurmJob& slurm = running.at(order.job_id);
      const std::set<std::string> before(slurm.nodes.begin(), slurm.nodes.end());
      const std::set<std::string> after(order.target_nodes.begin(), order.target_nodes.end());
      EXPECT_EQ(after.size(), order.target_nodes.size());
      EXPECT_TRUE(after.contains(slurm.batch_host)) << "job " << order.job_id;
      EXPECT_GE(order.to_nodes, std::min(job->min_nodes, order.from_nodes));
      EXPECT_EQ(order.to_nodes, static_cast<int>(after.size()));
      if (order.kind == ResizeKind::kGrow) {
        ++grows;
        EXPECT_LE(order.to_nodes, job->max_nodes);
        EXPECT_TRUE(std::includes(after.begin(), after.end(), before.begin(), before.end()));
        for (const std::string& n : order.changed_nodes) {
          EXPECT_TRUE(idle.contains(n)) << GetParam() << " grew " << order.job_id << " into " << n;
          EXPECT_FALSE(forbidden.contains(n)) << GetParam() << " grew into planned/reserved " << n;
          EXPECT_TRUE(taken.insert(n).second) << n << " given twice";
        }
      } else {
        ++shrinks;
        EXPECT_TRUE(std::includes(before.begin(), before.end(), after.begin(), after.end()));
        EXPECT_GE(order.to_nodes, job->min_nodes);
      }
    }
  }
  // The random views do exercise both kinds (not a vacuous pass).
  EXPECT_GT(grows, 20) << GetParam();
  EXPECT_GT(shrinks, 5) << GetParam();
  EXPECT_GT(orders, grows);
}

INSTANTIATE_TEST_SUITE_P(Policies, DecisionWithPolicy,
                         ::testing::Values("easyscale", "rubick", "elastic"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace elastic::policy
