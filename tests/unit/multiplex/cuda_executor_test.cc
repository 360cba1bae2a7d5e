// CudaExecutor on a GPU: prioritised streams, pieces run in launch order with and without CUDA
// graphs (captured once, replayed after), event timing, errors, and the engine on top of it.
// Skips without a GPU.
#include "agent/multiplex/cuda_executor.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "agent/multiplex/engine.h"
#include "tests/common/cuda_skip.h"
#include "tests/unit/multiplex/cuda_test_kernels.h"

namespace elastic::agent::multiplex {
namespace {

struct End {
  LaunchId id;
  Duration duration;
  std::exception_ptr error;
};

class RecordingListener final : public ExecutorListener {
 public:
  void OnPieceStart(LaunchId) override {}
  void OnPieceEnd(LaunchId id, Duration duration, std::exception_ptr error) override {
    std::lock_guard lock(mutex_);
    ends_.push_back({id, duration, error});
    changed_.notify_all();
  }
  std::vector<End> WaitFor(std::size_t n) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, std::chrono::seconds(30), [&] { return ends_.size() >= n; });
    return ends_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<End> ends_;
};

// Two device counters, zeroed; read back after the work.
class Counters {
 public:
  Counters() {
    EXPECT_EQ(cudaMalloc(&data_, 2 * sizeof(int)), cudaSuccess);
    EXPECT_EQ(cudaMemset(data_, 0, 2 * sizeof(int)), cudaSuccess);
  }
  ~Counters() { cudaFree(data_); }
  Counters(const Counters&) = delete;
  Counters& operator=(const Counters&) = delete;
  int* at(int i) { return data_ + i; }
  int Read(int i) {
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    int value = -1;
    EXPECT_EQ(cudaMemcpy(&value, data_ + i, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    return value;
  }

 private:
  int* data_ = nullptr;
};

CudaExecutorOptions Options(bool graphs, bool priorities = true) {
  CudaExecutorOptions options;
  options.use_graphs = graphs;
  options.stream_priorities = priorities;
  return options;
}

Piece Increment(int* counter, std::string op) {
  return Piece{std::move(op), [counter] { test::LaunchIncrement(counter, CurrentCudaStream()); }};
}

// 10 increments on a high- and a low-priority stream; every launch must run exactly once.
void RunIncrements(bool graphs) {
  Counters counters;
  RecordingListener listener;
  CudaExecutor executor(Options(graphs));
  executor.SetListener(&listener);
  const StreamId high = executor.CreateStream(StreamPriority::kHigh);
  const StreamId low = executor.CreateStream(StreamPriority::kLow);
  EXPECT_LT(executor.priority_of(high), executor.priority_of(low)) << "lower runs first";
  LaunchId id = 0;
  for (int i = 0; i < 10; ++i) {
    Piece fg = Increment(counters.at(0), "fg.inc");
    executor.Launch(high, id++, fg);
    Piece bg = Increment(counters.at(1), "bg.inc");
    executor.Launch(low, id++, bg);
  }
  const std::vector<End> ends = listener.WaitFor(20);
  ASSERT_EQ(ends.size(), 20u);
  LaunchId last_even = 0, last_odd = 1;
  for (std::size_t i = 0; i < ends.size(); ++i) {
    EXPECT_FALSE(ends[i].error);
    LaunchId& last = ends[i].id % 2 == 0 ? last_even : last_odd;
    if (ends[i].id > 1) {
      EXPECT_EQ(ends[i].id, last + 2) << "one stream's pieces end in order";
    }
    last = ends[i].id;
  }
  EXPECT_EQ(counters.Read(0), 10);  // a capture records without running: 10, not 11
  EXPECT_EQ(counters.Read(1), 10);
  EXPECT_EQ(executor.graphs_captured(), graphs ? 2u : 0u);
  EXPECT_EQ(executor.graph_replays(), graphs ? 20u : 0u);
}

TEST(CudaExecutorTest, PiecesRunOnceInLaunchOrderWithoutGraphs) {
  ELASTIC_SKIP_WITHOUT_GPU();
  RunIncrements(false);
}

TEST(CudaExecutorTest, GraphsAreCapturedOncePerOperatorAndReplayed) {
  ELASTIC_SKIP_WITHOUT_GPU();
  RunIncrements(true);
}

TEST(CudaExecutorTest, WithoutPrioritiesEveryStreamGetsTheLowPriority) {
  ELASTIC_SKIP_WITHOUT_GPU();
  RecordingListener listener;
  CudaExecutor with(Options(false));
  with.SetListener(&listener);
  CudaExecutor without(Options(false, /*priorities=*/false));
  without.SetListener(&listener);
  const StreamId low = with.CreateStream(StreamPriority::kLow);
  const StreamId high = without.CreateStream(StreamPriority::kHigh);
  EXPECT_EQ(without.priority_of(high), with.priority_of(low));
}

TEST(CudaExecutorTest, EventsTimeThePieceOnTheDevice) {
  ELASTIC_SKIP_WITHOUT_GPU();
  RecordingListener listener;
  CudaExecutor executor(Options(false));
  executor.SetListener(&listener);
  const StreamId stream = executor.CreateStream(StreamPriority::kHigh);
  Piece spin{"spin", [] { test::LaunchSpin(20'000'000, 1, CurrentCudaStream()); }};  // ~10 ms
  executor.Launch(stream, 0, spin);
  const std::vector<End> ends = listener.WaitFor(1);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_GT(ends[0].duration, std::chrono::milliseconds(2));
  EXPECT_LT(ends[0].duration, std::chrono::seconds(5));
}

TEST(CudaExecutorTest, AThrowingPieceReportsItsErrorAndTheStreamGoesOn) {
  ELASTIC_SKIP_WITHOUT_GPU();
  Counters counters;
  RecordingListener listener;
  CudaExecutor executor(Options(true));
  executor.SetListener(&listener);
  const StreamId stream = executor.CreateStream(StreamPriority::kLow);
  Piece bad{"bad", [] { throw std::runtime_error("host side failed"); }};
  executor.Launch(stream, 0, bad);
  Piece good = Increment(counters.at(0), "good");
  executor.Launch(stream, 1, good);
  const std::vector<End> ends = listener.WaitFor(2);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_TRUE(ends[0].error);
  EXPECT_FALSE(ends[1].error);
  EXPECT_EQ(counters.Read(0), 1);
}

TEST(CudaExecutorTest, TheEngineRunsForegroundAndBackgroundJobsOnCuda) {
  ELASTIC_SKIP_WITHOUT_GPU();
  Counters counters;
  SteadyClock clock;
  for (const bool graphs : {false, true}) {
    ASSERT_EQ(cudaMemset(counters.at(0), 0, 2 * sizeof(int)), cudaSuccess);
    MultiplexEngine engine(std::make_unique<CudaExecutor>(Options(graphs)),
                           MultiplexOptions{}, clock);
    const JobId fg = engine.AddJob(JobClass::kForeground, "fg");
    const JobId bg = engine.AddJob(JobClass::kBackground, "bg");
    for (int i = 0; i < 20; ++i) {
      engine.Submit(bg, Increment(counters.at(1), "bg.layer" + std::to_string(i % 4)));
      engine.Submit(fg, Increment(counters.at(0), "fg.layer" + std::to_string(i % 4)));
    }
    engine.Synchronize(fg);
    engine.Synchronize(bg);
    EXPECT_EQ(engine.stats(fg).completed, 20u);
    EXPECT_EQ(engine.stats(bg).completed, 20u);
    EXPECT_EQ(counters.Read(0), 20) << "graphs " << graphs;
    EXPECT_EQ(counters.Read(1), 20) << "graphs " << graphs;
  }
}

}  // namespace
}  // namespace elastic::agent::multiplex
