// Tests for request decoding and dispatch: malformed input, auth failures, per-user visibility,
// the supervisor's register/poll (ownership checked against Slurm's record), orders and their
// outcome, and the admin-only resize.
#include "scheduler/daemon/request_handler.h"

#include <gtest/gtest.h>

#include "scheduler/daemon/order_builder.h"
#include "scheduler/daemon/protocol.h"

namespace elastic::daemon {
namespace {

nlohmann::json Call(DaemonState& state, uid_t uid, const std::string& payload,
                    const JobLookup& lookup = {}) {
  Authenticated who;
  who.uid = uid;
  who.gid = uid;
  who.payload = payload;
  return nlohmann::json::parse(HandleRequest(who, state, 1'000, lookup));
}

JobRecord Job(std::uint32_t id, uid_t uid, std::vector<std::string> nodes, int min, int max) {
  JobRecord job;
  job.job_id = id;
  job.uid = uid;
  job.nodes = std::move(nodes);
  job.min_nodes = min;
  job.max_nodes = max;
  job.bounds_known = true;
  return job;
}

// Slurm's view: job 11 of uid 1001 running on n1 with the job_submit.lua bounds record.
std::optional<policy::SlurmJob> SlurmJob11(std::uint32_t id) {
  if (id != 11) return std::nullopt;
  policy::SlurmJob job;
  job.job_id = 11;
  job.uid = 1001;
  job.state = policy::SlurmJobState::kRunning;
  job.nodes = {"n1"};
  job.batch_host = "n1";
  job.partition = "main";
  job.admin_comment = "elastic:nodes=0/1-4";
  return job;
}

DaemonState StateWithTwoUsers() {
  DaemonState state;
  state.version = "9.9";
  state.policy = "elastic";
  state.started_unix = 900;
  state.jobs.push_back(Job(11, 1001, {"n1", "n2"}, 1, 4));
  state.jobs.push_back(Job(12, 1002, {"n3", "n4", "n5"}, 2, 3));
  state.recent.push_back({.unix_time = 950, .job_id = 11, .action = "grow", .reason = "idle"});
  state.recent.push_back({.unix_time = 960, .job_id = 12, .action = "shrink", .reason = "p"});
  return state;
}

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

TEST(RequestHandler, MalformedRequestsAreRejected) {
  DaemonState state;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "request is not valid JSON"},
      {"{", "request is not valid JSON"},
      {"[1,2]", "request must be a JSON object"},
      {R"({"cmd":"status"})", "request has no \"op\" string"},
      {R"({"op":7})", "request has no \"op\" string"},
      {R"({"op":"shutdown"})", "unknown op \"shutdown\": expected status, register"},
      {std::string(kMaxPayloadBytes + 1, ' '), "request too large"},
      {"\xff\xfe", "request is not valid JSON"},
  };
  for (const auto& [payload, expected] : cases) {
    auto reply = Call(state, 0, payload);
    EXPECT_FALSE(reply["ok"]) << payload;
    EXPECT_NE(reply["error"].get<std::string>().find(expected), std::string::npos)
        << payload << " -> " << reply.dump();
  }
}

TEST(RequestHandler, RefusedCredentialIsNeverTrusted) {
  DaemonState state = StateWithTwoUsers();
  Authenticated who;
  who.uid = 0;  // whatever a forged credential claims
  who.payload = R"({"op":"status"})";
  who.error = "MUNGE credential refused: Replayed credential";
  auto reply = nlohmann::json::parse(HandleRequest(who, state, 1'000));
  EXPECT_FALSE(reply["ok"]);
  EXPECT_EQ(reply["error"], "MUNGE credential refused: Replayed credential");
  EXPECT_FALSE(reply.contains("jobs"));
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

// A supervisor's note is shown to others (logs, status) and saved in the registry: cut on a
// character boundary and stripped of control characters.
TEST(RequestHandler, PollDetailIsCutOnACharacterBoundaryAndMadePrintable) {
  DaemonState state = StateWithTwoUsers();
  std::string detail(199, 'a');
  detail += "\xc3\xa9";  // "é" straddles byte 200
  nlohmann::json poll = {{"op", "poll"}, {"job_id", 11}, {"generation", 1}, {"detail", detail}};
  ASSERT_TRUE(Call(state, 1001, poll.dump())["ok"]);
  EXPECT_EQ(state.jobs[0].detail, std::string(199, 'a'));
  poll["detail"] = "fine\nFORGED elasticd[1] info: job 12 resized\x1b[2J";
  ASSERT_TRUE(Call(state, 1001, poll.dump())["ok"]);
  EXPECT_EQ(state.jobs[0].detail, "fine?FORGED elasticd[1] info: job 12 resized?[2J");
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

// Regression (tests/fuzz/corpus/request_handler_fuzzer/regression_poll_pause_string): a
// pause_s that is not a number threw out of HandleRequest and ended elasticd.
TEST(RequestHandler, PollWithABadPauseIsRefusedAndChangesNothing) {
  DaemonState state = StateWithTwoUsers();
  for (const char* pause : {R"("1.5")", "true", "null", "[]", "-1"}) {
    auto reply = Call(state, 1001, std::string(R"({"op":"poll","job_id":11,"generation":1,)") +
                                       R"("state":"resizing","pause_s":)" + pause + "}");
    EXPECT_FALSE(reply["ok"]) << pause;
    EXPECT_EQ(reply["error"], "\"pause_s\" must be a number of seconds >= 0") << pause;
  }
  EXPECT_EQ(state.jobs[0].supervisor_state, "running");  // the refused polls changed nothing
  EXPECT_TRUE(Call(state, 1001, R"({"op":"poll","job_id":11,"generation":1,"pause_s":2})")["ok"]);
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

}  // namespace
}  // namespace elastic::daemon
