// MultiplexEngine on the CPU backend with real LibTorch work. Pieces record start/end ticks of
// one global counter, and the checks are on that order and on counts, never on timings.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <torch/torch.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "agent/multiplex/cpu_executor.h"
#include "agent/multiplex/engine.h"

namespace elastic::agent::multiplex {
namespace {

struct Interval {
  JobClass job_class;
  std::string op;
  bool must_be_alone;  // hinted, or still learning its solo baseline
  std::uint64_t start;
  std::uint64_t end;
};

class EventLog {
 public:
  // `work` wrapped so that its start and end land in the log.
  Piece Timed(JobClass job_class, std::string op, bool must_be_alone, bool hint,
              std::function<void()> work) {
    return Piece{.op = op,
                 .run =
                     [this, job_class, op, must_be_alone, work = std::move(work)] {
                       const std::uint64_t start = tick_++;
                       work();
                       const std::uint64_t end = tick_++;
                       std::lock_guard lock(mutex_);
                       intervals_.push_back({job_class, op, must_be_alone, start, end});
                     },
                 .isolate = hint};
  }
  std::vector<Interval> intervals() const {
    std::lock_guard lock(mutex_);
    return intervals_;
  }

 private:
  std::atomic<std::uint64_t> tick_{0};
  mutable std::mutex mutex_;
  std::vector<Interval> intervals_;
};

class CpuEngineTest : public ::testing::Test {
 protected:
  void SetUp() override { torch::set_num_threads(1); }
  const SteadyClock clock_;
};

Piece Task(std::string op, std::function<void()> run) {
  Piece piece;
  piece.op = std::move(op);
  piece.run = std::move(run);
  return piece;
}

// Small real work: a few 64x64 matmuls into `out`.
void MatmulWork(torch::Tensor& out, const torch::Tensor& a, int repeats) {
  for (int i = 0; i < repeats; ++i) out = torch::tanh(torch::matmul(a, out));
}

TEST_F(CpuEngineTest, PiecesThatMustRunAloneNeverOverlapBackgroundPieces) {
  MultiplexOptions options;
  options.feedback.min_samples = 2;
  auto engine = std::make_unique<MultiplexEngine>(std::make_unique<CpuExecutor>(), options, clock_);
  const JobId fg = engine->AddJob(JobClass::kForeground, "fg");
  const JobId bg = engine->AddJob(JobClass::kBackground, "bg");
  EventLog log;
  constexpr int kBackgroundPieces = 150;
  constexpr int kIterations = 15;
  const torch::Tensor a = torch::randn({64, 64}) / 8;

  torch::Tensor bg_state = torch::randn({64, 64});
  std::thread background([&] {
    for (int i = 0; i < kBackgroundPieces; ++i) {
      engine->Submit(bg, log.Timed(JobClass::kBackground, "bg.mm", false, false,
                                   [&] { MatmulWork(bg_state, a, 4); }));
    }
    engine->Synchronize(bg);
  });
  torch::Tensor fg_state = torch::randn({64, 64});
  const torch::Tensor fg_initial = fg_state.clone();
  const std::vector<std::string> ops = {"fwd", "bwd", "allreduce"};
  for (int it = 0; it < kIterations; ++it) {
    for (const std::string& op : ops) {
      const bool hint = op == "allreduce";
      const bool learning = it < 2;  // min_samples solo runs of each operator
      engine->Submit(fg, log.Timed(JobClass::kForeground, op, hint || learning, hint,
                                   [&] { MatmulWork(fg_state, a, 2); }));
    }
    engine->Synchronize(fg);
  }
  background.join();
  const JobStats fg_stats = engine->stats(fg);
  const JobStats bg_stats = engine->stats(bg);
  engine.reset();

  // All work done, in order, with the right result.
  torch::Tensor expected = fg_initial.clone();
  MatmulWork(expected, a, 2 * static_cast<int>(ops.size()) * kIterations);
  EXPECT_TRUE(torch::equal(fg_state, expected));
  EXPECT_EQ(fg_stats.completed, ops.size() * kIterations);
  EXPECT_EQ(bg_stats.completed, static_cast<std::uint64_t>(kBackgroundPieces));
  EXPECT_GE(fg_stats.isolated, static_cast<std::uint64_t>(kIterations + 2 * 2));

  const std::vector<Interval> events = log.intervals();
  std::vector<const Interval*> alone;
  std::vector<const Interval*> background_events;
  for (const Interval& e : events) {
    if (e.job_class == JobClass::kBackground) background_events.push_back(&e);
    if (e.job_class == JobClass::kForeground && e.must_be_alone) alone.push_back(&e);
  }
  ASSERT_EQ(alone.size(), static_cast<std::size_t>(kIterations + 2 * 2));
  for (const Interval* f : alone) {
    for (const Interval* b : background_events) {
      ASSERT_FALSE(b->start < f->end && f->start < b->end)
          << "background piece [" << b->start << "," << b->end << ") overlaps " << f->op << " ["
          << f->start << "," << f->end << ")";
    }
  }
  // Pieces of one job never overlap each other (one stream runs them in order).
  for (JobClass job_class : {JobClass::kForeground, JobClass::kBackground}) {
    std::uint64_t last_end = 0;
    for (const Interval& e : events) {
      if (e.job_class != job_class) continue;
      EXPECT_GE(e.start, last_end);
      last_end = e.end;
    }
  }
}

TEST_F(CpuEngineTest, ThrowingPieceReachesSynchronizeAndTheJobGoesOn) {
  MultiplexEngine engine(std::make_unique<CpuExecutor>(), MultiplexOptions{}, clock_);
  const JobId fg = engine.AddJob(JobClass::kForeground, "fg");
  std::atomic<int> ran{0};
  engine.Submit(
      fg, Task("bad", [] {
        torch::matmul(torch::ones({2, 3}), torch::ones({2, 3}));  // shape mismatch: c10::Error
      }));
  engine.Submit(fg, Task("good", [&] { ++ran; }));
  EXPECT_THROW(engine.Synchronize(fg), std::exception);
  EXPECT_EQ(ran.load(), 1);
  engine.Submit(fg, Task("good", [&] { ++ran; }));
  EXPECT_NO_THROW(engine.Synchronize(fg));
  EXPECT_EQ(ran.load(), 2);
}

TEST_F(CpuEngineTest, LowPriorityStreamsAreDemotedAndStreamsPinned) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  int device_cpu = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE && device_cpu < 0; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) device_cpu = cpu;
  }
  CpuExecutorOptions executor_options;
  executor_options.cpus = {device_cpu};
  auto executor = std::make_unique<CpuExecutor>(executor_options);
  CpuExecutor* cpu_executor = executor.get();
  MultiplexEngine engine(std::move(executor), MultiplexOptions{}, clock_);
  const JobId fg = engine.AddJob(JobClass::kForeground, "fg");
  const JobId bg = engine.AddJob(JobClass::kBackground, "bg");
  int fg_policy = -1, bg_policy = -1, bg_nice = 0, fg_cpu = -1, bg_cpu = -1;
  engine.Submit(fg, Task("probe", [&] {
                  fg_policy = sched_getscheduler(0);
                  fg_cpu = sched_getcpu();
                }));
  engine.Submit(bg, Task("probe", [&] {
                  bg_policy = sched_getscheduler(0);
                  bg_nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
                  bg_cpu = sched_getcpu();
                }));
  engine.Synchronize(fg);
  engine.Synchronize(bg);
  EXPECT_EQ(fg_policy, SCHED_OTHER);
  EXPECT_EQ(fg_cpu, device_cpu);
  EXPECT_EQ(bg_cpu, device_cpu);
  const std::string mechanism = cpu_executor->low_priority_mechanism();
  if (mechanism == "SCHED_IDLE") {
    EXPECT_EQ(bg_policy, SCHED_IDLE);
  } else if (mechanism == "nice 19") {
    EXPECT_EQ(bg_nice, 19);
  } else {
    ADD_FAILURE() << "low-priority stream not demoted: " << mechanism;
  }
}

TEST_F(CpuEngineTest, WithoutOsPrioritiesStreamsKeepTheirPolicy) {
  CpuExecutorOptions executor_options;
  executor_options.os_priorities = false;
  auto executor = std::make_unique<CpuExecutor>(executor_options);
  CpuExecutor* cpu_executor = executor.get();
  MultiplexEngine engine(std::move(executor), MultiplexOptions{}, clock_);
  const JobId bg = engine.AddJob(JobClass::kBackground, "bg");
  int policy = -1;
  engine.Submit(bg, Task("probe", [&] { policy = sched_getscheduler(0); }));
  engine.Synchronize(bg);
  EXPECT_EQ(policy, SCHED_OTHER);
  EXPECT_EQ(cpu_executor->low_priority_mechanism(), "none");
}

}  // namespace
}  // namespace elastic::agent::multiplex
