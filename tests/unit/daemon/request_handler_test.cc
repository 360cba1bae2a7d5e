// Tests for request decoding and dispatch: malformed input, auth failures, per-user visibility.
#include "scheduler/daemon/request_handler.h"

#include <gtest/gtest.h>

#include "scheduler/daemon/protocol.h"

namespace elastic::daemon {
namespace {

nlohmann::json Call(DaemonState& state, uid_t uid, const std::string& payload) {
  Authenticated who;
  who.uid = uid;
  who.gid = uid;
  who.payload = payload;
  return nlohmann::json::parse(HandleRequest(who, state, 1'000));
}

DaemonState StateWithTwoUsers() {
  DaemonState state;
  state.version = "9.9";
  state.policy = "elastic";
  state.started_unix = 900;
  state.jobs.push_back({.job_id = 11, .uid = 1001, .nodes = 2, .min_nodes = 1, .max_nodes = 4});
  state.jobs.push_back({.job_id = 12, .uid = 1002, .nodes = 3, .min_nodes = 2, .max_nodes = 3});
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
      {R"({"op":"shutdown"})", "unknown op \"shutdown\": expected status"},
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

}  // namespace
}  // namespace elastic::daemon
