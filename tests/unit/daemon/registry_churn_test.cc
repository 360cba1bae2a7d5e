// What a user can cause with their own jobs' register/deregister churn (docs/security.md U32):
// every one marks the registry for saving (elasticd saves it, fsynced, before answering), and
// 100 decisions about their job push every other job's decisions out of the shared history.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "scheduler/daemon/request_handler.h"
#include "tests/unit/daemon/request_handler_fixture.h"

namespace elastic::daemon {
namespace {

std::optional<policy::SlurmJob> RunningJob(std::uint32_t id) {
  return test::RunningSlurmJob(id, id < 20 ? 1001 : 1002);  // job 11: uid 1001; job 21: uid 1002
}

nlohmann::json Call(DaemonState& state, uid_t uid, const std::string& payload) {
  return test::Call(state, uid, payload, RunningJob);
}

TEST(RegistryChurn, EachRegisterAndDeregisterDirtiesTheRegistryAndPushesOthersOutOfTheHistory) {
  DaemonState state;
  ASSERT_TRUE(Call(state, 1001, R"({"op":"register","job_id":11,"ests":1})")["ok"]);
  ASSERT_EQ(Call(state, 1001, R"({"op":"status"})")["decisions"].size(), 1u);

  const std::size_t churn = DaemonState::kMaxRecentDecisions / 2;
  for (std::size_t i = 0; i < churn; ++i) {
    state.dirty = false;
    ASSERT_TRUE(Call(state, 1002, R"({"op":"register","job_id":21,"ests":1})")["ok"]);
    EXPECT_TRUE(state.dirty) << "register " << i << " would not be saved";
    state.dirty = false;
    ASSERT_TRUE(Call(state, 1002, R"({"op":"deregister","job_id":21})")["ok"]);
    EXPECT_TRUE(state.dirty) << "deregister " << i << " would not be saved";
  }
  EXPECT_EQ(state.recent.size(), DaemonState::kMaxRecentDecisions);
  for (const Decision& d : state.recent) EXPECT_EQ(d.job_id, 21u);
  // uid 1001's job is still registered, but its decisions are gone from what it can see.
  nlohmann::json status = Call(state, 1001, R"({"op":"status"})");
  EXPECT_EQ(status["jobs"].size(), 1u);
  EXPECT_TRUE(status["decisions"].empty()) << status.dump();
}

}  // namespace
}  // namespace elastic::daemon
