// The request handler against bad input: malformed requests, refused credentials, a uid in the
// payload, words and numbers outside their vocabulary or ranges, over-long or unprintable
// details; a refused request changes nothing.
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

// Identity is munged's alone: a "uid" field in the payload changes nothing, whatever it names.
TEST(RequestHandler, AUidFieldInThePayloadIsIgnored) {
  DaemonState state = StateWithTwoUsers();
  auto status = Call(state, 1002, R"({"op":"status","uid":0})");
  ASSERT_EQ(status["jobs"].size(), 1u);  // root would see both
  EXPECT_EQ(status["jobs"][0]["job_id"], 12);
  auto resize = Call(state, 1001, R"({"op":"resize","job_id":11,"nodes":1,"uid":0})");
  EXPECT_EQ(resize["error"], "resize is an admin command (root or SlurmUser)");
  auto poll = Call(state, 1002, R"({"op":"poll","job_id":11,"generation":1,"uid":1001})");
  EXPECT_EQ(poll["error"], "job 11 belongs to another user");
  EXPECT_EQ(Call(state, 1002, R"({"op":"deregister","job_id":11,"uid":1001})")["error"],
            "job 11 belongs to another user");
  DaemonState fresh;
  auto other = Call(fresh, 1002, R"({"op":"register","job_id":11,"uid":1001})", SlurmJob11);
  EXPECT_EQ(other["error"], "job 11 belongs to another user");
  EXPECT_TRUE(fresh.jobs.empty());
  // The owner registering with a uid field naming someone else: the record is still theirs.
  ASSERT_TRUE(
      Call(fresh, 1001, R"({"op":"register","job_id":11,"ests":8,"uid":1002})", SlurmJob11)["ok"]);
  ASSERT_EQ(fresh.jobs.size(), 1u);
  EXPECT_EQ(fresh.jobs[0].uid, 1001u);
}

// plan, class and state are words of [a-z0-9-], 1 to 32 characters: nothing else can reach
// AdminComment, the log or another user's `elasticd status` through them.
TEST(RequestHandler, WordsAreOneTo32CharactersOfTheVocabulary) {
  const std::string longest(32, 'a'), too_long(33, 'a');
  for (const char* key : {"plan", "class"}) {
    for (const nlohmann::json& bad :
         {nlohmann::json(too_long), nlohmann::json(""), nlohmann::json("Dp"),
          nlohmann::json("a b"), nlohmann::json("a,plan=x"), nlohmann::json(7)}) {
      DaemonState state;
      nlohmann::json request = {{"op", "register"}, {"job_id", 11}, {"ests", 8}, {key, bad}};
      auto reply = Call(state, 1001, request.dump(), SlurmJob11);
      EXPECT_FALSE(reply["ok"]) << request.dump();
      EXPECT_NE(reply["error"].get<std::string>().find(std::string("\"") + key + "\" must be"),
                std::string::npos) << reply.dump();
    }
    DaemonState state;
    nlohmann::json request = {{"op", "register"}, {"job_id", 11}, {"ests", 8}, {key, longest}};
    EXPECT_TRUE(Call(state, 1001, request.dump(), SlurmJob11)["ok"]) << key;
  }
  DaemonState state = StateWithTwoUsers();
  for (const nlohmann::json& bad : {nlohmann::json(too_long), nlohmann::json(""),
                                    nlohmann::json("Running"), nlohmann::json("run\nning"),
                                    nlohmann::json(true)}) {
    nlohmann::json poll = {{"op", "poll"}, {"job_id", 11}, {"generation", 1}, {"state", bad}};
    auto reply = Call(state, 1001, poll.dump());
    EXPECT_EQ(reply["error"], bad.is_string()
                                  ? "\"state\" must be a short word of a-z, 0-9 and -"
                                  : "\"state\" must be a string") << poll.dump();
    EXPECT_EQ(state.jobs[0].supervisor_state, "running");
  }
  nlohmann::json poll = {{"op", "poll"}, {"job_id", 11}, {"generation", 1}, {"state", longest}};
  ASSERT_TRUE(Call(state, 1001, poll.dump())["ok"]);
  EXPECT_EQ(state.jobs[0].supervisor_state, longest);
}

// Every number a user sends is held to its range before it is used; just inside is accepted.
TEST(RequestHandler, NumbersOutsideTheirRangesAreRefused) {
  const std::string job_id_error = "request needs \"job_id\", a positive job id";
  auto range = [](const std::string& key, const std::string& lo, const std::string& hi) {
    return std::string("\"") + key + "\" must be an integer in [" + lo + ", " + hi + "]";
  };
  const std::string max52 = std::to_string(1LL << 52), over52 = std::to_string((1LL << 52) + 1);
  const std::vector<std::pair<std::string, std::string>> refused = {
      {R"({"op":"poll","job_id":0,"generation":1})", job_id_error},
      {R"({"op":"poll","job_id":-11,"generation":1})", job_id_error},
      {R"({"op":"poll","job_id":11.0,"generation":1})", job_id_error},
      {R"({"op":"poll","job_id":"11","generation":1})", job_id_error},
      {R"({"op":"poll","job_id":4294967281,"generation":1})", job_id_error},  // 0xfffffff1
      {R"({"op":"deregister","job_id":4294967307})", job_id_error},  // 2^32 + 11
      {R"({"op":"deregister"})", job_id_error},
      {R"({"op":"register","job_id":11})", range("ests", "1", "1048576")},
      {R"({"op":"register","job_id":11,"ests":0})", range("ests", "1", "1048576")},
      {R"({"op":"register","job_id":11,"ests":1048577})", range("ests", "1", "1048576")},
      {R"({"op":"register","job_id":11,"ests":-8})", range("ests", "1", "1048576")},
      {R"({"op":"register","job_id":11,"ests":8.5})", range("ests", "1", "1048576")},
      {R"({"op":"register","job_id":11,"ests":"8"})", range("ests", "1", "1048576")},
      // Unsigned values past INT64_MAX must not wrap into the range.
      {R"({"op":"register","job_id":11,"ests":18446744073709551615})",
       range("ests", "1", "1048576")},
      {R"({"op":"register","job_id":11,"ests":8,"generation":0})", range("generation", "1", max52)},
      {R"({"op":"register","job_id":11,"ests":8,"generation":)" + over52 + "}",
       range("generation", "1", max52)},
      {R"({"op":"poll","job_id":11})", range("generation", "1", max52)},
      {R"({"op":"poll","job_id":11,"generation":0})", range("generation", "1", max52)},
      {R"({"op":"poll","job_id":11,"generation":)" + over52 + "}",
       range("generation", "1", max52)},
      {R"({"op":"poll","job_id":11,"generation":1,"seen_order":-1})",
       range("seen_order", "0", max52)},
      {R"({"op":"poll","job_id":11,"generation":1,"seen_order":)" + over52 + "}",
       range("seen_order", "0", max52)},
      {R"({"op":"poll","job_id":11,"generation":1,"seen_order":18446744073709551615})",
       range("seen_order", "0", max52)},
      {R"({"op":"poll","job_id":11,"generation":1,"pause_generation":-1})",
       range("pause_generation", "0", max52)},
      {R"({"op":"poll","job_id":11,"generation":1,"pause_generation":)" + over52 + "}",
       range("pause_generation", "0", max52)},
      {R"({"op":"resize","job_id":11,"nodes":0})", range("nodes", "1", "4")},
  };
  for (const auto& [payload, expected] : refused) {
    DaemonState state = StateWithTwoUsers();
    const std::string before = RegistryToJson(state).dump();
    auto reply = Call(state, 0, payload, SlurmJob11);
    EXPECT_FALSE(reply["ok"]) << payload;
    EXPECT_EQ(reply.value("error", ""), expected) << payload;
    EXPECT_EQ(RegistryToJson(state).dump(), before) << payload;  // a refusal changes nothing
  }
  const std::vector<std::string> accepted = {
      R"({"op":"register","job_id":11,"ests":1,"generation":1})",
      R"({"op":"register","job_id":11,"ests":1048576,"generation":)" + max52 + "}",
      R"({"op":"poll","job_id":11,"generation":)" + max52 + R"(,"seen_order":)" + max52 +
          R"(,"pause_generation":)" + max52 + "}",
      R"({"op":"poll","job_id":11,"generation":1,"seen_order":0,"pause_generation":0})",
  };
  for (const std::string& payload : accepted) {
    DaemonState state = StateWithTwoUsers();
    EXPECT_TRUE(Call(state, 1001, payload, SlurmJob11)["ok"]) << payload;
  }
  // The largest job id passes the range check (and is then simply not registered).
  DaemonState state;
  EXPECT_EQ(Call(state, 0, R"({"op":"poll","job_id":4294967280,"generation":1})")["error"],
            "job 4294967280 is not registered");
}

// A register refused for a bad argument leaves nothing behind: before the fix a half-made
// record stayed (ests 0, bounds 0-0), and the next cycle wrote "nodes=1/0-0" over the job's
// job_submit.lua record, so the job had lost its bounds for good.
TEST(RequestHandler, ARefusedRegisterChangesNothing) {
  const std::vector<std::string> bad = {
      R"({"op":"register","job_id":11,"ests":0})",
      R"({"op":"register","job_id":11,"ests":8,"plan":"a;b"})",
      R"({"op":"register","job_id":11,"ests":8,"class":"x y"})",
      R"({"op":"register","job_id":11,"ests":8,"generation":0})",
  };
  for (const std::string& payload : bad) {
    DaemonState state;
    ASSERT_FALSE(Call(state, 1001, payload, SlurmJob11)["ok"]) << payload;
    EXPECT_TRUE(state.jobs.empty()) << payload;
    EXPECT_FALSE(state.dirty) << payload;
    EXPECT_TRUE(state.recent.empty()) << payload;
  }
  // A registered job refused a re-register keeps its record as it was.
  DaemonState state;
  ASSERT_TRUE(Call(state, 1001, R"({"op":"register","job_id":11,"ests":8,"plan":"dp"})",
                   SlurmJob11)["ok"]);
  state.dirty = false;
  state.jobs[0].comment_dirty = false;
  const std::string before = RegistryToJson(state).dump();
  for (const std::string& payload : bad) {
    ASSERT_FALSE(Call(state, 1001, payload, SlurmJob11)["ok"]) << payload;
    EXPECT_EQ(RegistryToJson(state).dump(), before) << payload;
    EXPECT_FALSE(state.dirty) << payload;
    EXPECT_FALSE(state.jobs[0].comment_dirty) << payload;
  }
}

TEST(RequestHandler, PollDetailKeepsAtMost200Bytes) {
  DaemonState state = StateWithTwoUsers();
  nlohmann::json poll = {{"op", "poll"}, {"job_id", 11}, {"generation", 1},
                         {"detail", std::string(16'000, 'x')}};
  ASSERT_TRUE(Call(state, 1001, poll.dump())["ok"]);
  EXPECT_EQ(state.jobs[0].detail, std::string(200, 'x'));
  poll["detail"] = std::string(200, 'y');
  ASSERT_TRUE(Call(state, 1001, poll.dump())["ok"]);
  EXPECT_EQ(state.jobs[0].detail, std::string(200, 'y'));
}

TEST(RequestHandler, ABadRunningPlanReportIsRefusedAndChangesNothing) {
  DaemonState state = StateWithTwoUsers();
  for (const char* field : {R"("running_plan":"zero dp")", R"("running_plan":"DP")",
                            R"("running_plan":7)", R"("running_plan":"")",
                            R"("predicted_samples_per_s":-1)",
                            R"("predicted_samples_per_s":"fast")"}) {
    auto reply = Call(state, 1001, std::string(R"({"op":"poll","job_id":11,"generation":1,)") +
                                       R"("state":"resizing",)" + field + "}");
    EXPECT_FALSE(reply["ok"]) << field;
  }
  EXPECT_EQ(state.jobs[0].supervisor_state, "running");
  EXPECT_EQ(state.jobs[0].running_plan, "");
  EXPECT_EQ(state.jobs[0].predicted_samples_per_s, 0.0);
}

}  // namespace
}  // namespace elastic::daemon
