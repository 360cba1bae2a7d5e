// Step 0 of elasticd's decision (nice_lift.h): a waiting elastic job gets job_submit.lua's nice
// taken back once it has waited its bound; nobody else is touched, and DecideResizes carries it.
#include "scheduler/policy/nice_lift.h"

#include <gtest/gtest.h>

#include "scheduler/policy/resize_decision.h"
#include "tests/unit/policy/test_cluster.h"

namespace elastic::policy {
namespace {

constexpr std::int64_t kNow = 1'000'000;
constexpr std::int64_t kNice = 1'000'000;  // job_submit.lua's ELASTIC_NICE

// A pending elastic job submitted `waited` seconds ago with a 100 s time limit, niced by the site
// on top of its owner's `own_nice`.
SlurmJob Waiting(std::uint32_t id, std::int64_t waited, std::int64_t own_nice = 0) {
  SlurmJob job = PendingIn(id, 1, "Priority");
  job.elastic = true;
  job.submit_time = kNow - waited;
  job.time_limit_s = 100;
  job.nice = own_nice + kNice;
  return job;
}

std::vector<std::uint32_t> Lifted(const std::vector<NiceLift>& lifts) {
  std::vector<std::uint32_t> ids;
  for (const NiceLift& lift : lifts) ids.push_back(lift.job_id);
  return ids;
}

TEST(NiceLift, AWaitingElasticJobIsLiftedOnceItHasWaitedItsBound) {
  SlurmView view = TestCluster(2, kNow);
  view.jobs = {Waiting(1, 599), Waiting(2, 600), Waiting(3, 5000, 7)};
  const std::vector<NiceLift> lifts = ChooseNiceLifts(view, {kNice, 6.0});
  ASSERT_EQ(Lifted(lifts), (std::vector<std::uint32_t>{2, 3}));
  EXPECT_EQ(lifts[0].nice, 0);
  EXPECT_EQ(lifts[1].nice, 7);  // the owner's own nice stays
  EXPECT_NE(lifts[0].reason.find("waited 600 s, at least 600 s (6 x its time limit of 100 s)"),
            std::string::npos)
      << lifts[0].reason;
  EXPECT_EQ(Lifted(ChooseNiceLifts(view, {kNice, 2.5})), (std::vector<std::uint32_t>{1, 2, 3}));
}

TEST(NiceLift, OnlyNicedForegroundElasticJobsThatWaitForNodesAndHaveATimeLimit) {
  SlurmView view = TestCluster(2, kNow);
  view.jobs = {Waiting(1, 5000), Waiting(2, 5000), Waiting(3, 5000), Waiting(4, 5000),
               Waiting(5, 5000), Waiting(6, 5000), Waiting(7, 5000), Waiting(8, 5000)};
  view.jobs[1].elastic = false;                    // rigid
  view.jobs[2].sla_class = SlaClass::kBackground;  // its partition orders it
  view.jobs[3].reason = "Dependency";              // waits for something else
  view.jobs[4].nice = 0;                           // its owner took the nice back
  view.jobs[5].nice = 2 * kNice + 5;               // asked for a larger nice itself
  view.jobs[6].time_limit_s = 0;                   // no time limit
  view.jobs[7] = RunningOn(8, {"n1"}, view);       // running
  view.jobs[7].elastic = true;
  view.jobs[7].nice = kNice;
  EXPECT_EQ(Lifted(ChooseNiceLifts(view, {kNice, 6.0})), (std::vector<std::uint32_t>{1}));
}

TEST(NiceLift, OffWithZero) {
  SlurmView view = TestCluster(2, kNow);
  view.jobs = {Waiting(1, 5000)};
  EXPECT_TRUE(ChooseNiceLifts(view, {kNice, 0.0}).empty());
  EXPECT_TRUE(ChooseNiceLifts(view, {0, 6.0}).empty());  // job_submit.lua without the nice
}

TEST(NiceLift, DecideResizesCarriesTheLifts) {
  SlurmView view = TestCluster(2, kNow);
  view.jobs = {Waiting(4, 5000)};
  ResizeDecisionOptions options;
  EXPECT_EQ(Lifted(DecideResizes(view, {}, options).nice_lifts), (std::vector<std::uint32_t>{4}));
  options.nice_lift.after_time_limits = 0;
  EXPECT_TRUE(DecideResizes(view, {}, options).nice_lifts.empty());
}

}  // namespace
}  // namespace elastic::policy
