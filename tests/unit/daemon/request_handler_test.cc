// Tests for request dispatch: status and per-user visibility, the supervisor's register/poll
// (ownership checked against Slurm's record), orders and their outcome, the running plan and
// sensitivity curve a poll carries, and the admin-only resize (bad input:
// request_handler_validation_test.cc).
#include "scheduler/daemon/request_handler.h"

#include <gtest/gtest.h>

#include "scheduler/daemon/admin_comment.h"
#include "scheduler/daemon/order_builder.h"
#include "protocol/protocol.h"
#include "scheduler/daemon/registry_store.h"
#include "tests/unit/daemon/request_handler_fixture.h"

namespace elastic::daemon {
namespace {

using namespace test;  // NOLINT(google-build-using-namespace): the shared set-up

TEST(RequestHandler, StatusReportsDaemon) {
  DaemonState state = StateWithTwoUsers();
  auto reply = Call(state, 0, R"({"op":"status"})");
  EXPECT_TRUE(reply["ok"]);
  EXPECT_EQ(reply["version"], "9.9");
  EXPECT_EQ(reply["policy"], "elastic");
  EXPECT_EQ(reply["uptime_s"], 100);
  EXPECT_EQ(reply["jobs"].size(), 2u);  // root sees everyone
  EXPECT_EQ(reply["decisions"].size(), 2u);
}

TEST(RequestHandler, UsersSeeOnlyTheirOwnJobs) {
  DaemonState state = StateWithTwoUsers();
  auto reply = Call(state, 1001, R"({"op":"status"})");
  ASSERT_EQ(reply["jobs"].size(), 1u);
  EXPECT_EQ(reply["jobs"][0]["job_id"], 11);
  ASSERT_EQ(reply["decisions"].size(), 1u);
  EXPECT_EQ(reply["decisions"][0]["action"], "grow");
  EXPECT_TRUE(Call(state, 4242, R"({"op":"status"})")["jobs"].empty());
}

TEST(RequestHandler, SlurmUserIsAdmin) {
  DaemonState state = StateWithTwoUsers();
  state.admin_uids.insert(64030);
  EXPECT_EQ(Call(state, 64030, R"({"op":"status"})")["jobs"].size(), 2u);
}

TEST(RequestHandler, RegisterChecksOwnershipWithSlurmAndReadsBounds) {
  DaemonState state;
  auto other = Call(state, 1002, R"({"op":"register","job_id":11,"ests":8})", SlurmJob11);
  EXPECT_FALSE(other["ok"]);
  EXPECT_EQ(other["error"], "job 11 belongs to another user");
  EXPECT_FALSE(Call(state, 1001, R"({"op":"register","job_id":99,"ests":8})", SlurmJob11)["ok"]);
  EXPECT_FALSE(Call(state, 1001, R"({"op":"register","job_id":11,"plan":"a;b"})", SlurmJob11)["ok"]);
  auto reply = Call(state, 1001, R"({"op":"register","job_id":11,"ests":8})", SlurmJob11);
  ASSERT_TRUE(reply["ok"]) << reply.dump();
  EXPECT_EQ(reply["min_nodes"], 1);
  EXPECT_EQ(reply["max_nodes"], 4);
  ASSERT_EQ(state.jobs.size(), 1u);
  EXPECT_TRUE(state.dirty);
  EXPECT_EQ(state.jobs[0].nodes, (std::vector<std::string>{"n1"}));
}

TEST(RequestHandler, AJobWithAnAdministratorsCommentCannotBeRegistered) {
  DaemonState state;
  auto noted = [](std::uint32_t id) {
    auto job = SlurmJob11(id);
    if (job) job->admin_comment = "ticket 4711: do not touch";
    return job;
  };
  auto reply = Call(state, 1001, R"({"op":"register","job_id":11,"ests":8})", noted);
  EXPECT_FALSE(reply["ok"]);
  EXPECT_NE(reply["error"].get<std::string>().find("job 11 is not an elastic job"),
            std::string::npos) << reply.dump();
  EXPECT_TRUE(state.jobs.empty());
}

TEST(RequestHandler, PollHandsOutTheOrderAndLearnsItsOutcome) {
  DaemonState state = StateWithTwoUsers();
  std::string error;
  ASSERT_TRUE(OrderByHand(state, state.jobs[0], 1, 1'000, error)) << error;
  const std::uint64_t generation = state.jobs[0].order->generation;
  EXPECT_FALSE(Call(state, 1002, R"({"op":"poll","job_id":11,"generation":1})")["ok"]);
  auto reply = Call(state, 1001, R"({"op":"poll","job_id":11,"generation":1,"seen_order":0})");
  ASSERT_TRUE(reply["ok"]) << reply.dump();
  EXPECT_EQ(reply["order"]["kind"], "shrink");
  EXPECT_EQ(reply["order"]["target_nodes"], nlohmann::json::array({"n1"}));
  // Seen and in progress: no new order, still in flight.
  std::string busy = R"({"op":"poll","job_id":11,"generation":1,"state":"resizing","seen_order":)" +
                     std::to_string(generation) + "}";
  EXPECT_TRUE(Call(state, 1001, busy)["order"].is_null());
  EXPECT_TRUE(state.jobs[0].order.has_value());
  // Relaunched: the order is done; the pause comes with a later poll, once, for its generation.
  const std::string g = std::to_string(generation);
  Call(state, 1001, R"({"op":"poll","job_id":11,"state":"running","generation":)" + g +
                        R"(,"seen_order":)" + g + "}");
  EXPECT_FALSE(state.jobs[0].order.has_value());
  EXPECT_EQ(state.jobs[0].nodes, (std::vector<std::string>{"n1"}));
  EXPECT_EQ(state.jobs[0].resizes, 1);
  EXPECT_EQ(state.recent.back().action, "resized");
  const std::string paused = R"({"op":"poll","job_id":11,"state":"running","pause_s":1.5,)"
                             R"("pause_generation":)" + g + R"(,"generation":)" + g +
                             R"(,"seen_order":)" + g + "}";
  Call(state, 1001, paused);
  EXPECT_DOUBLE_EQ(state.jobs[0].last_pause_s, 1.5);
  EXPECT_EQ(state.recent.back().action, "pause");
  const std::size_t decisions = state.recent.size();
  Call(state, 1001, paused);  // the same report again: recorded once
  EXPECT_EQ(state.recent.size(), decisions);
}

TEST(RequestHandler, ASupervisorBackToRunningWithoutTheGenerationFailedTheOrder) {
  DaemonState state = StateWithTwoUsers();
  std::string error;
  ASSERT_TRUE(OrderByHand(state, state.jobs[0], 1, 1'000, error)) << error;
  const std::string g = std::to_string(state.jobs[0].order->generation);
  Call(state, 1001, R"({"op":"poll","job_id":11,"generation":1,"state":"running","seen_order":)" + g +
                        R"(,"detail":"running: resize to 1 failed"})");
  EXPECT_FALSE(state.jobs[0].order.has_value());
  EXPECT_EQ(state.recent.back().action, "failed");
  // The next order counts up past the failed one, so the supervisor cannot mistake it.
  ASSERT_TRUE(OrderByHand(state, state.jobs[0], 1, 1'001, error)) << error;
  EXPECT_GT(state.jobs[0].order->generation, std::stoull(g));
}

TEST(RequestHandler, ResizeIsForAdminsOnlyAndWithinBounds) {
  DaemonState state = StateWithTwoUsers();
  auto refused = Call(state, 1001, R"({"op":"resize","job_id":11,"nodes":1})");
  EXPECT_FALSE(refused["ok"]);
  EXPECT_EQ(refused["error"], "resize is an admin command (root or SlurmUser)");
  EXPECT_FALSE(Call(state, 0, R"({"op":"resize","job_id":11,"nodes":5})")["ok"]);  // max 4
  EXPECT_FALSE(Call(state, 0, R"({"op":"resize","job_id":11,"nodes":3})")["ok"]);  // no idle view
  auto reply = Call(state, 0, R"({"op":"resize","job_id":11,"nodes":1})");
  ASSERT_TRUE(reply["ok"]) << reply.dump();
  EXPECT_EQ(reply["order"]["kind"], "shrink");
}

TEST(RequestHandler, DeregisterRemovesOnlyOwnJob) {
  DaemonState state = StateWithTwoUsers();
  EXPECT_FALSE(Call(state, 1001, R"({"op":"deregister","job_id":12})")["ok"]);
  EXPECT_TRUE(Call(state, 1001, R"({"op":"deregister","job_id":11})")["ok"]);
  ASSERT_EQ(state.jobs.size(), 1u);
  EXPECT_EQ(state.jobs[0].job_id, 12u);
}

TEST(RequestHandler, RegisterOfAJobThatIsNotRunningIsRefused) {
  for (auto slurm_state : {policy::SlurmJobState::kPending, policy::SlurmJobState::kOther}) {
    DaemonState state;
    auto lookup = [slurm_state](std::uint32_t id) {
      auto job = SlurmJob11(id);
      if (job) job->state = slurm_state;
      return job;
    };
    auto reply = Call(state, 1001, R"({"op":"register","job_id":11,"ests":8})", lookup);
    EXPECT_FALSE(reply["ok"]);
    EXPECT_EQ(reply["error"], "job 11 is not running");
    EXPECT_TRUE(state.jobs.empty());
    EXPECT_FALSE(state.dirty);
  }
}

// The supervisor re-chooses the plan on every launch and reports it with its polls: AdminComment
// and status show the plan that runs, not the one the job asked for.
TEST(RequestHandler, PollReportsTheRunningPlanForAdminComment) {
  DaemonState state = StateWithTwoUsers();
  JobRecord& job = state.jobs[0];
  job.plan = "auto";
  job.generation = 3;
  job.comment_dirty = false;
  EXPECT_NE(FormatAdminComment(job).find(",plan=auto,"), std::string::npos);
  auto reply = Call(state, 1001, R"({"op":"poll","job_id":11,"generation":3,)"
                                 R"("running_plan":"zero-dp","predicted_samples_per_s":1234.5})");
  ASSERT_TRUE(reply["ok"]) << reply.dump();
  EXPECT_EQ(job.running_plan, "zero-dp");
  EXPECT_DOUBLE_EQ(job.predicted_samples_per_s, 1234.5);
  EXPECT_TRUE(job.comment_dirty);  // rewritten at the next cycle
  EXPECT_EQ(FormatAdminComment(job).substr(0, 50),
            "elastic:est=0,nodes=2/1-4,plan=zero-dp,gen=3,class");
  auto status = Call(state, 1001, R"({"op":"status"})");
  EXPECT_EQ(status["jobs"][0]["plan"], "auto");
  EXPECT_EQ(status["jobs"][0]["running_plan"], "zero-dp");
  EXPECT_EQ(status["jobs"][0]["predicted_samples_per_s"], 1234.5);
  // A poll without the fields (an older supervisor) keeps what was reported; the same plan
  // again does not dirty the comment.
  job.comment_dirty = false;
  ASSERT_TRUE(Call(state, 1001, R"({"op":"poll","job_id":11,"generation":3})")["ok"]);
  ASSERT_TRUE(Call(state, 1001, R"({"op":"poll","job_id":11,"generation":3,)"
                                R"("running_plan":"zero-dp"})")["ok"]);
  EXPECT_EQ(job.running_plan, "zero-dp");
  EXPECT_DOUBLE_EQ(job.predicted_samples_per_s, 1234.5);
  EXPECT_FALSE(job.comment_dirty);
  ASSERT_TRUE(Call(state, 1001, R"({"op":"poll","job_id":11,"generation":3,)"
                                R"("running_plan":"dp","predicted_samples_per_s":0})")["ok"]);
  EXPECT_NE(FormatAdminComment(job).find(",plan=dp,"), std::string::npos);
  EXPECT_TRUE(job.comment_dirty);
}

// The supervisor's sensitivity curve (Rubick §5.2) rides on its polls into the resize
// decision's input.
TEST(RequestHandler, PollCarriesTheSensitivityCurveAndRefusesABadOne) {
  DaemonState state = StateWithTwoUsers();
  const std::string poll = R"({"op":"poll","job_id":11,"generation":1,)";
  ASSERT_TRUE(Call(state, 1001, poll + R"("speed_curve":[500,990,1470.5]})")["ok"]);
  EXPECT_EQ(state.jobs[0].speed_curve, (std::vector<double>{500, 990, 1470.5}));
  EXPECT_EQ(Call(state, 1001, R"({"op":"status"})")["jobs"][0]["speed_curve"][2], 1470.5);
  ASSERT_TRUE(Call(state, 1001, poll + R"("state":"running"})")["ok"]);  // absent: kept
  EXPECT_EQ(state.jobs[0].speed_curve.size(), 3u);
  for (const char* bad : {R"([500, 400])", R"([-1])", R"("fast")", R"([1, "2"])", R"({"1": 2})"}) {
    auto reply = Call(state, 1001, poll + R"("state":"resizing","speed_curve":)" + bad + "}");
    EXPECT_FALSE(reply["ok"]) << bad;
    EXPECT_NE(reply.dump().find("non-decreasing samples/s"), std::string::npos) << reply.dump();
  }
  std::string long_curve = "[";
  for (int i = 0; i <= 1024; ++i) long_curve += (i ? "," : "") + std::to_string(i);
  EXPECT_FALSE(Call(state, 1001, poll + R"("speed_curve":)" + long_curve + "]}")["ok"]);
  EXPECT_EQ(state.jobs[0].speed_curve.size(), 3u);
  EXPECT_EQ(state.jobs[0].supervisor_state, "running");  // a refused poll changed nothing
}

}  // namespace
}  // namespace elastic::daemon
