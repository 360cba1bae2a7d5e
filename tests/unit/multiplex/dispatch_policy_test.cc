// PickNext: foreground first, launch pacing, isolation of sensitive pieces, FIFO without
// priorities; and a seeded random drive checking the invariants over many decisions.
#include "agent/multiplex/dispatch_policy.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace elastic::agent::multiplex {
namespace {

JobView Fg(std::uint64_t seq, int outstanding = 0, bool isolated = false) {
  return {.job_class = JobClass::kForeground,
          .has_queued = true,
          .head_seq = seq,
          .head_isolated = isolated,
          .outstanding = outstanding,
          .isolated_outstanding = 0};
}

JobView Bg(std::uint64_t seq, int outstanding = 0) {
  return {.job_class = JobClass::kBackground,
          .has_queued = true,
          .head_seq = seq,
          .head_isolated = false,
          .outstanding = outstanding,
          .isolated_outstanding = 0};
}

JobView Idle(JobView job) {
  job.has_queued = false;
  return job;
}

TEST(DispatchPolicyTest, ReadyForegroundPieceGoesBeforeOlderBackgroundPiece) {
  const std::vector<JobView> jobs = {Bg(1), Fg(7)};
  EXPECT_EQ(PickNext(DispatchOptions{}, jobs), 1u);
}

TEST(DispatchPolicyTest, WithoutPrioritiesOneFifoOverAllJobs) {
  DispatchOptions options;
  options.prioritize_foreground = false;
  const std::vector<JobView> jobs = {Fg(7), Bg(1)};
  EXPECT_EQ(PickNext(options, jobs), 1u);
}

TEST(DispatchPolicyTest, BackgroundRunsWhenNoForegroundPieceIsReady) {
  const std::vector<JobView> jobs = {Idle(Fg(0)), Bg(3)};
  EXPECT_EQ(PickNext(DispatchOptions{}, jobs), 1u);
}

TEST(DispatchPolicyTest, OldestForegroundJobFirst) {
  const std::vector<JobView> jobs = {Fg(9), Bg(1), Fg(4)};
  EXPECT_EQ(PickNext(DispatchOptions{}, jobs), 2u);
}

TEST(DispatchPolicyTest, PacingCapsOutstandingPiecesPerJob) {
  DispatchOptions options;
  options.max_outstanding_foreground = 2;
  options.max_outstanding_background = 1;
  EXPECT_EQ(PickNext(options, std::vector<JobView>{Bg(1, 1)}), std::nullopt);
  EXPECT_EQ(PickNext(options, std::vector<JobView>{Bg(1, 0)}), 0u);
  // A foreground job at its cap lets the background job through.
  EXPECT_EQ(PickNext(options, std::vector<JobView>{Fg(1, 2), Bg(2, 0)}), 1u);
  EXPECT_EQ(PickNext(options, std::vector<JobView>{Fg(1, 1), Bg(2, 0)}), 0u);
}

TEST(DispatchPolicyTest, ZeroMeansUnlimitedOutstanding) {
  DispatchOptions options;
  options.max_outstanding_background = 0;
  EXPECT_EQ(PickNext(options, std::vector<JobView>{Bg(1, 1000)}), 0u);
}

TEST(DispatchPolicyTest, IsolatedForegroundPieceWaitsForBackgroundToDrain) {
  const DispatchOptions options;
  // A background piece is still on the device: neither job may launch.
  EXPECT_EQ(PickNext(options, std::vector<JobView>{Fg(5, 0, true), Bg(1, 1)}), std::nullopt);
  // Drained: the isolated piece goes, not the background one.
  EXPECT_EQ(PickNext(options, std::vector<JobView>{Fg(5, 0, true), Bg(1, 0)}), 0u);
}

TEST(DispatchPolicyTest, NoBackgroundLaunchWhileAnIsolatedPieceRuns) {
  JobView fg = Idle(Fg(0, 1));
  fg.isolated_outstanding = 1;
  EXPECT_EQ(PickNext(DispatchOptions{}, std::vector<JobView>{fg, Bg(3)}), std::nullopt);
  fg.isolated_outstanding = 0;
  EXPECT_EQ(PickNext(DispatchOptions{}, std::vector<JobView>{fg, Bg(3)}), 1u);
}

TEST(DispatchPolicyTest, IsolationOffIgnoresSensitivity) {
  DispatchOptions options;
  options.isolate_sensitive = false;
  EXPECT_EQ(PickNext(options, std::vector<JobView>{Fg(5, 0, true), Bg(1, 1)}), 0u);
  EXPECT_EQ(PickNext(options, std::vector<JobView>{Idle(Fg(5, 0, true)), Bg(1, 0)}), 1u);
}

TEST(DispatchPolicyTest, NothingQueuedNothingPicked) {
  EXPECT_EQ(PickNext(DispatchOptions{}, std::vector<JobView>{}), std::nullopt);
  EXPECT_EQ(PickNext(DispatchOptions{}, std::vector<JobView>{Idle(Fg(0)), Idle(Bg(0))}),
            std::nullopt);
}

// Two foreground and two background jobs; the driver launches whatever PickNext returns and
// finishes random outstanding pieces. Invariants hold at every step.
TEST(DispatchPolicyTest, RandomDriveKeepsPriorityPacingAndIsolation) {
  DispatchOptions options;
  options.max_outstanding_foreground = 2;
  options.max_outstanding_background = 1;
  std::mt19937 rng(42);
  std::vector<JobView> jobs = {Fg(0), Fg(1), Bg(2), Bg(3)};
  std::uint64_t seq = 4;
  std::size_t launches = 0;
  for (int step = 0; step < 20000; ++step) {
    for (JobView& job : jobs) {  // refill queues at random
      if (!job.has_queued && rng() % 3 == 0) {
        job.has_queued = true;
        job.head_seq = seq++;
        job.head_isolated = job.job_class == JobClass::kForeground && rng() % 4 == 0;
      }
    }
    if (const auto pick = PickNext(options, jobs)) {
      JobView& job = jobs[*pick];
      const bool fg = job.job_class == JobClass::kForeground;
      const int background_outstanding = jobs[2].outstanding + jobs[3].outstanding;
      const bool isolated_running = jobs[0].isolated_outstanding + jobs[1].isolated_outstanding > 0;
      if (!fg) {
        // Never a background piece while a foreground one could have gone.
        for (const JobView& other : jobs) {
          if (other.job_class == JobClass::kForeground && other.has_queued &&
              (other.outstanding < 2 || other.head_isolated)) {
            FAIL() << "background picked over a waiting foreground piece at step " << step;
          }
        }
        ASSERT_FALSE(isolated_running) << "step " << step;
      } else if (job.head_isolated) {
        ASSERT_EQ(background_outstanding, 0) << "step " << step;
      }
      ++job.outstanding;
      job.isolated_outstanding += job.head_isolated ? 1 : 0;
      job.has_queued = false;
      ++launches;
      for (const JobView& j : jobs) {
        ASSERT_LE(j.outstanding, j.job_class == JobClass::kForeground ? 2 : 1);
      }
    } else {  // nothing to launch: finish one outstanding piece
      std::vector<std::size_t> busy;
      for (std::size_t i = 0; i < jobs.size(); ++i) {
        if (jobs[i].outstanding > 0) busy.push_back(i);
      }
      if (busy.empty()) continue;
      JobView& job = jobs[busy[rng() % busy.size()]];
      --job.outstanding;
      if (job.isolated_outstanding > 0) --job.isolated_outstanding;
    }
    if (rng() % 2 == 0) {  // and sometimes finish one anyway
      JobView& job = jobs[rng() % jobs.size()];
      if (job.outstanding > 0) {
        --job.outstanding;
        if (job.isolated_outstanding > job.outstanding) job.isolated_outstanding = job.outstanding;
      }
    }
  }
  EXPECT_GT(launches, 5000u);
}

}  // namespace
}  // namespace elastic::agent::multiplex
