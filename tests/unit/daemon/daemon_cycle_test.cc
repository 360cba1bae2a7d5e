// RunCycle over Slurm views built by hand: an order nobody carries out expires, a false "done"
// from a supervisor is undone by Slurm's node list, and no user text reaches AdminComment.
#include "scheduler/daemon/daemon_cycle.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "scheduler/daemon/order_builder.h"
#include "scheduler/daemon/request_handler.h"
#include "tests/unit/daemon/cycle_fixture.h"

namespace elastic::daemon {
namespace {

// Job 11 registered on n1, n2 and an admin's shrink order to 1 node issued at t=1000.
DaemonState RegisteredWithAShrinkOrder() {
  DaemonState state;
  const policy::SlurmView view = View(1'000, {"n1", "n2"});
  EXPECT_TRUE(Call(state, 1'000, {{"op", "register"}, {"job_id", 11}, {"ests", 8}}, view)["ok"]);
  RunCycle(state, view, Observe());
  std::string error;
  EXPECT_TRUE(OrderByHand(state, state.jobs.at(0), 1, 1'000, error)) << error;
  return state;
}

TEST(DaemonCycle, OrderTimeoutDefaultIs300Seconds) {
  EXPECT_EQ(CycleOptions().order_timeout_s, 300);
}

// A supervisor that never carries its order out (ignores it, or is gone) does not keep the job
// frozen: after order_timeout_s the order is dropped as failed and the job backs off
// (last_resize = now feeds the decision's min_resize_interval).
TEST(DaemonCycle, AnOrderNotCarriedOutExpiresAfterTheTimeout) {
  DaemonState state = RegisteredWithAShrinkOrder();
  ASSERT_TRUE(state.jobs[0].order.has_value());
  const std::uint64_t generation = state.jobs[0].order->generation;
  RunCycle(state, View(1'300, {"n1", "n2"}), Observe());  // exactly the timeout: still waits
  ASSERT_TRUE(state.jobs[0].order.has_value());
  EXPECT_EQ(state.jobs[0].last_resize_unix, 0);
  state.dirty = false;
  RunCycle(state, View(1'301, {"n1", "n2"}), Observe());
  EXPECT_FALSE(state.jobs[0].order.has_value());
  EXPECT_EQ(state.recent.back().action, "failed");
  EXPECT_EQ(state.recent.back().reason,
            "order generation " + std::to_string(generation) +
                " expired: the supervisor did not carry it out in 300 s");
  EXPECT_EQ(state.jobs[0].last_resize_unix, 1'301);
  EXPECT_EQ(state.jobs[0].nodes, (std::vector<std::string>{"n1", "n2"}));  // nothing changed
  EXPECT_TRUE(state.dirty);
  // A shorter timeout is honoured too.
  DaemonState other = RegisteredWithAShrinkOrder();
  CycleOptions quick = Observe();
  quick.order_timeout_s = 10;
  RunCycle(other, View(1'011, {"n1", "n2"}), quick);
  EXPECT_FALSE(other.jobs[0].order.has_value());
}

// Without job_submit.lua's record in AdminComment elasticd does not know the job's bounds: the
// resize decision leaves it out and an admin can order it to no other size, while the same job
// with the record is grown into the idle nodes.
TEST(DaemonCycle, AJobWithoutTheBoundsRecordKeepsItsSize) {
  for (bool with_record : {true, false}) {
    DaemonState state;
    policy::SlurmView view = View(10'000, {"n1"});
    view.jobs[0].start_time = 10'000 - 3'600;
    if (!with_record) view.jobs[0].admin_comment.clear();
    auto registered = Call(state, 10'000, {{"op", "register"}, {"job_id", 11}, {"ests", 8}}, view);
    ASSERT_TRUE(registered["ok"]) << registered.dump();
    EXPECT_EQ(registered["bounds_known"], with_record);
    RunCycle(state, view, CycleOptions());  // resizing on
    EXPECT_EQ(state.jobs[0].order.has_value(), with_record) << "record: " << with_record;
    if (with_record) continue;
    EXPECT_EQ(state.jobs[0].min_nodes, 1);
    EXPECT_EQ(state.jobs[0].max_nodes, 1);
    auto by_hand =
        Call(state, 10'001, {{"op", "resize"}, {"job_id", 11}, {"nodes", 2}}, view, /*uid=*/0);
    EXPECT_EQ(by_hand.value("error", ""), "\"nodes\" must be an integer in [1, 1]");
    EXPECT_FALSE(state.jobs[0].order.has_value());
  }
}

// [scheduler] policy decides live: easyscale, rubick and elastic grow job 11 (n1, E = 8,
// bounds 1-4) into the three idle nodes through their Policy (the order's reason names it);
// backfill (Slurm alone) issues no order; "" keeps the decision's own greedy rule.
TEST(DaemonCycle, TheConfiguredPolicyDecidesAndBackfillNeverResizes) {
  for (const char* name : {"easyscale", "rubick", "elastic", "backfill", ""}) {
    DaemonState state;
    policy::SlurmView view = View(10'000, {"n1"});
    view.jobs[0].start_time = 10'000 - 3'600;
    ASSERT_TRUE(Call(state, 10'000, {{"op", "register"}, {"job_id", 11}, {"ests", 8}}, view)["ok"]);
    CycleOptions options;
    options.policy = name;
    RunCycle(state, view, options);
    const std::string policy = name;
    ASSERT_EQ(state.jobs[0].order.has_value(), policy != "backfill") << policy;
    if (policy == "backfill") continue;
    EXPECT_EQ(state.jobs[0].order->target_nodes, (std::vector<std::string>{"n1", "n2", "n3", "n4"}))
        << policy;
    if (!policy.empty()) {
      EXPECT_EQ(state.jobs[0].order->reason.rfind(policy + ":", 0), 0u)
          << state.jobs[0].order->reason;
    }
  }
}

// A supervisor reports the shrink done (generation reached) though Slurm still lists both
// nodes: the next cycle takes the node set from Slurm and rewrites AdminComment with it.
TEST(DaemonCycle, AFalseDoneIsCorrectedFromSlurmsNodeListAtTheNextCycle) {
  DaemonState state = RegisteredWithAShrinkOrder();
  const std::uint64_t generation = state.jobs[0].order->generation;
  const policy::SlurmView unchanged = View(1'010, {"n1", "n2"});
  ASSERT_TRUE(Call(state, 1'010,
                   {{"op", "poll"}, {"job_id", 11}, {"generation", generation},
                    {"seen_order", generation}},
                   unchanged)["ok"]);
  ASSERT_EQ(state.jobs[0].nodes, (std::vector<std::string>{"n1"}));  // believed, for now
  CycleResult result = RunCycle(state, unchanged, Observe());
  EXPECT_EQ(state.jobs[0].nodes, (std::vector<std::string>{"n1", "n2"}));
  ASSERT_EQ(result.admin_comments.size(), 1u);
  EXPECT_NE(result.admin_comments[0].second.find(",nodes=2/1-4,"), std::string::npos)
      << result.admin_comments[0].second;
}

// AdminComment is built from integers and vocabulary words only: a supervisor's free text
// (detail) never reaches it, whatever it says.
TEST(DaemonCycle, SupervisorTextNeverReachesAdminComment) {
  DaemonState state;
  const policy::SlurmView view = View(1'000, {"n1"});
  ASSERT_TRUE(Call(state, 1'000,
                   {{"op", "register"}, {"job_id", 11}, {"ests", 8}, {"plan", "dp"},
                    {"class", "gold"}, {"generation", 3}},
                   view)["ok"]);
  ASSERT_TRUE(Call(state, 1'001,
                   {{"op", "poll"}, {"job_id", 11}, {"generation", 3}, {"state", "resizing"},
                    {"detail", "x,nodes=1/1-64,plan=evil"}},
                   view)["ok"]);
  ASSERT_EQ(state.jobs[0].detail, "x,nodes=1/1-64,plan=evil");
  CycleResult result = RunCycle(state, View(1'002, {"n1"}), Observe());
  ASSERT_EQ(result.admin_comments.size(), 1u);
  EXPECT_EQ(result.admin_comments[0],
            std::make_pair(std::uint32_t{11},
                           std::string("elastic:est=8,nodes=1/1-4,plan=dp,gen=3,class=gold,"
                                       "last=0")));
}

// Devices per node reach AdminComment: a job on two 2-GPU nodes shows ",devices=4" at the end,
// rewritten only when the count changes; on CPU nodes the text has no devices= field.
TEST(DaemonCycle, AdminCommentCountsTheJobsDevicesOnGpuNodes) {
  DaemonState state;
  const policy::SlurmView gpus = View(1'000, {"n1", "n2"}, 2);
  ASSERT_TRUE(Call(state, 1'000,
                   {{"op", "register"}, {"job_id", 11}, {"ests", 8}, {"plan", "dp"}}, gpus)["ok"]);
  CycleResult result = RunCycle(state, gpus, Observe());
  EXPECT_EQ(state.jobs[0].devices, 4);
  ASSERT_EQ(result.admin_comments.size(), 1u);
  EXPECT_EQ(result.admin_comments[0].second,
            "elastic:est=8,nodes=2/1-4,plan=dp,gen=1,class=best-effort,last=0,devices=4");
  EXPECT_TRUE(RunCycle(state, View(1'001, {"n1", "n2"}, 2), Observe()).admin_comments.empty());
  // The same nodes now read as 4-GPU nodes (a gres change): rewritten with 8.
  result = RunCycle(state, View(1'002, {"n1", "n2"}, 4), Observe());
  ASSERT_EQ(result.admin_comments.size(), 1u);
  EXPECT_EQ(result.admin_comments[0].second.substr(result.admin_comments[0].second.rfind(',')),
            ",devices=8");
  // CPU nodes: the field goes, and the text is the one-device text exactly.
  result = RunCycle(state, View(1'003, {"n1", "n2"}), Observe());
  EXPECT_EQ(state.jobs[0].devices, 2);
  ASSERT_EQ(result.admin_comments.size(), 1u);
  EXPECT_EQ(result.admin_comments[0].second,
            "elastic:est=8,nodes=2/1-4,plan=dp,gen=1,class=best-effort,last=0");
}

}  // namespace
}  // namespace elastic::daemon

namespace elastic::daemon {
namespace {

// Job 11 (best-effort, bounds 1-4) registered and running on all four nodes, and job 12
// (guaranteed, -N 4, account "physics") waiting for them.
struct GuaranteedArrives {
  DaemonState state;
  policy::SlurmView view = View(10'000, {"n1", "n2", "n3", "n4"});

  GuaranteedArrives() {
    view.jobs[0].start_time = 10'000 - 3'600;
    view.jobs[0].account = "physics";
    EXPECT_TRUE(Call(state, 10'000, {{"op", "register"}, {"job_id", 11}, {"ests", 8}}, view)["ok"]);
    policy::SlurmJob waiting = PendingJob(12, 4, "Resources");
    waiting.account = "physics";
    waiting.sla_class = SlaClass::kGuaranteed;
    waiting.admin_comment = "elastic:nodes=0/4-4,class=guaranteed";
    waiting.elastic = true;  // the record slurm_records reads
    view.jobs.push_back(waiting);
  }
};

// Shrinking job 11 frees 3 of the 4 nodes job 12 needs: the cycle preempts job 11 (the daemon
// requeues what CycleResult::preemptions lists), logs it and issues it no order; with
// preemption off, or job 12 over its account's quota, nothing is preempted.
TEST(DaemonCycle, AGuaranteedJobWithinQuotaPreemptsTheBestEffortJob) {
  GuaranteedArrives cluster;
  CycleOptions options;
  options.policy = "elastic";
  CycleResult result = RunCycle(cluster.state, cluster.view, options);
  ASSERT_EQ(result.preemptions.size(), 1u);
  EXPECT_EQ(result.preemptions[0].job_id, 11u);
  EXPECT_EQ(cluster.state.recent.back().action, "preempt");
  EXPECT_NE(cluster.state.recent.back().reason.find("4 nodes, requeued: guaranteed job 12"),
            std::string::npos)
      << cluster.state.recent.back().reason;
  EXPECT_FALSE(cluster.state.jobs[0].order.has_value());

  for (bool quota_too_small : {false, true}) {
    GuaranteedArrives again;
    CycleOptions held = options;
    if (quota_too_small) {
      held.decision.quotas = std::map<std::string, int>{{"physics", 3}};
    } else {
      held.decision.preempt_best_effort = false;
    }
    EXPECT_TRUE(RunCycle(again.state, again.view, held).preemptions.empty()) << quota_too_small;
  }
}

// The class that counts is job_submit.lua's record, not the register request's; a guaranteed
// job's AdminComment says whether it is within its account's quota, rewritten when that changes.
TEST(DaemonCycle, AGuaranteedJobsClassComesFromTheRecordAndItsQuotaReachesAdminComment) {
  DaemonState state;
  policy::SlurmView view = View(1'000, {"n1", "n2"});
  view.jobs[0].admin_comment = "elastic:nodes=0/1-4,class=guaranteed";
  view.jobs[0].elastic = true;  // the record slurm_records reads
  view.jobs[0].sla_class = SlaClass::kGuaranteed;
  view.jobs[0].account = "physics";
  ASSERT_TRUE(Call(state, 1'000,
                   {{"op", "register"}, {"job_id", 11}, {"ests", 8}, {"class", "best-effort"}},
                   view)["ok"]);
  EXPECT_EQ(state.jobs[0].sla_class, "guaranteed");
  CycleOptions options = Observe();
  CycleResult result = RunCycle(state, view, options);
  ASSERT_EQ(result.admin_comments.size(), 1u);
  EXPECT_EQ(result.admin_comments[0].second,
            "elastic:est=8,nodes=2/1-4,plan=auto,gen=1,class=guaranteed,last=0,quota=within");
  options.decision.quotas = std::map<std::string, int>{{"physics", 1}};  // MIN 1 node fits
  EXPECT_TRUE(RunCycle(state, view, options).admin_comments.empty());
  options.decision.quotas = std::map<std::string, int>{{"bio", 8}};
  result = RunCycle(state, view, options);
  ASSERT_EQ(result.admin_comments.size(), 1u);
  EXPECT_NE(result.admin_comments[0].second.find(",quota=over"), std::string::npos);
}

}  // namespace
}  // namespace elastic::daemon
