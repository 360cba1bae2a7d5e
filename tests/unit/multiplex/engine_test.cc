// MultiplexEngine driven through a fake executor and an injected clock: the test decides when
// each launched piece starts and ends and how long it took, so every check is deterministic.
#include "agent/multiplex/engine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace elastic::agent::multiplex {
namespace {

using std::chrono::milliseconds;

class FakeClock final : public Clock {
 public:
  TimePoint Now() const override { return now; }
  TimePoint now{};
};

// Records launches; the test plays the device by calling Start and End.
class FakeExecutor final : public Executor {
 public:
  struct LaunchRecord {
    StreamId stream;
    LaunchId id;
    Piece piece;
  };

  void SetListener(ExecutorListener* listener) override { listener_ = listener; }
  StreamId CreateStream(StreamPriority priority) override {
    priorities.push_back(priority);
    return static_cast<StreamId>(priorities.size() - 1);
  }
  void Launch(StreamId stream, LaunchId id, Piece& piece) override {
    launches.push_back({stream, id, std::move(piece)});
  }

  void Start(std::size_t i) { listener_->OnPieceStart(launches.at(i).id); }
  void End(std::size_t i, Duration d, std::exception_ptr error = nullptr) {
    if (launches.at(i).piece.run) launches[i].piece.run();
    listener_->OnPieceEnd(launches[i].id, d, error);
  }
  void Run(std::size_t i, Duration d) {
    Start(i);
    End(i, d);
  }
  std::vector<std::string> Ops() const {
    std::vector<std::string> ops;
    for (const auto& l : launches) ops.push_back(l.piece.op);
    return ops;
  }

  std::vector<StreamPriority> priorities;
  std::vector<LaunchRecord> launches;

 private:
  ExecutorListener* listener_ = nullptr;
};

class EngineTest : public ::testing::Test {
 protected:
  void Make(MultiplexOptions options) {
    auto executor = std::make_unique<FakeExecutor>();
    device_ = executor.get();
    engine_ = std::make_unique<MultiplexEngine>(std::move(executor), options, clock_);
    fg_ = engine_->AddJob(JobClass::kForeground, "fg");
    bg_ = engine_->AddJob(JobClass::kBackground, "bg");
  }
  static MultiplexOptions NoFeedback() {
    MultiplexOptions options;
    options.slowdown_feedback = false;
    return options;
  }
  static Piece P(std::string op, bool isolate = false) {
    return Piece{.op = std::move(op), .run = nullptr, .isolate = isolate};
  }

  FakeClock clock_;
  FakeExecutor* device_ = nullptr;
  std::unique_ptr<MultiplexEngine> engine_;
  JobId fg_ = 0;
  JobId bg_ = 0;
};

TEST_F(EngineTest, DefaultsArePinned) {
  const MultiplexOptions defaults;
  EXPECT_TRUE(defaults.dispatch.prioritize_foreground);
  EXPECT_EQ(defaults.dispatch.max_outstanding_foreground, 2);
  EXPECT_EQ(defaults.dispatch.max_outstanding_background, 1);
  EXPECT_TRUE(defaults.dispatch.isolate_sensitive);
  EXPECT_TRUE(defaults.slowdown_feedback);
  EXPECT_EQ(defaults.max_queued, 64u);
}

TEST_F(EngineTest, JobsGetStreamsOfTheirPriority) {
  Make(NoFeedback());
  EXPECT_EQ(device_->priorities,
            (std::vector<StreamPriority>{StreamPriority::kHigh, StreamPriority::kLow}));
}

TEST_F(EngineTest, PacingHoldsBackgroundToOneOutstandingPiece) {
  Make(NoFeedback());
  for (int i = 0; i < 4; ++i) engine_->Submit(bg_, P("b" + std::to_string(i)));
  EXPECT_EQ(device_->Ops(), (std::vector<std::string>{"b0"}));
  engine_->Submit(fg_, P("f0"));
  engine_->Submit(fg_, P("f1"));
  engine_->Submit(fg_, P("f2"));  // foreground cap is 2
  EXPECT_EQ(device_->Ops(), (std::vector<std::string>{"b0", "f0", "f1"}));
  device_->Run(0, milliseconds(1));  // b0 done: the next background piece goes
  EXPECT_EQ(device_->Ops(), (std::vector<std::string>{"b0", "f0", "f1", "b1"}));
  device_->Run(1, milliseconds(1));  // f0 done: f2 goes
  EXPECT_EQ(device_->Ops().back(), "f2");
  for (std::size_t i = 2; i < device_->launches.size(); ++i) device_->Run(i, milliseconds(1));
  engine_->Synchronize(fg_);
  engine_->Synchronize(bg_);
  EXPECT_EQ(engine_->stats(bg_).completed, 4u);
  EXPECT_EQ(engine_->stats(fg_).completed, 3u);
}

TEST_F(EngineTest, ForegroundSubmittedLaterOvertakesQueuedBackground) {
  Make(NoFeedback());
  for (int i = 0; i < 3; ++i) engine_->Submit(bg_, P("b" + std::to_string(i)));
  device_->Run(0, milliseconds(1));  // b1 launched
  engine_->Submit(fg_, P("f0"));     // goes at once, ahead of b2
  device_->Run(1, milliseconds(1));  // b1 done: b2 goes
  EXPECT_EQ(device_->Ops(), (std::vector<std::string>{"b0", "b1", "f0", "b2"}));
  device_->Run(2, {});
  device_->Run(3, {});
}

TEST_F(EngineTest, WithoutPrioritiesOrPacingEverythingLaunchesInSubmissionOrder) {
  MultiplexOptions options = NoFeedback();
  options.dispatch = {.prioritize_foreground = false,
                      .max_outstanding_foreground = 0,
                      .max_outstanding_background = 0,
                      .isolate_sensitive = false};
  Make(options);
  engine_->Submit(bg_, P("b0"));
  engine_->Submit(bg_, P("b1"));
  engine_->Submit(fg_, P("f0", /*isolate=*/true));
  EXPECT_EQ(device_->Ops(), (std::vector<std::string>{"b0", "b1", "f0"}));
  for (std::size_t i = 0; i < 3; ++i) device_->Run(i, {});
  EXPECT_EQ(engine_->stats(fg_).isolated, 0u);
}

TEST_F(EngineTest, HintedPieceWaitsForBackgroundDrainAndBlocksBackgroundWhileRunning) {
  Make(NoFeedback());
  engine_->Submit(bg_, P("b0"));
  engine_->Submit(bg_, P("b1"));
  device_->Start(0);
  engine_->Submit(fg_, P("allreduce", /*isolate=*/true));
  EXPECT_EQ(device_->Ops(), (std::vector<std::string>{"b0"}));  // draining
  device_->End(0, milliseconds(1));
  EXPECT_EQ(device_->Ops(), (std::vector<std::string>{"b0", "allreduce"}));  // b1 held back
  device_->Run(1, milliseconds(1));
  EXPECT_EQ(device_->Ops(), (std::vector<std::string>{"b0", "allreduce", "b1"}));
  device_->Run(2, {});
  EXPECT_EQ(engine_->stats(fg_).isolated, 1u);
  EXPECT_EQ(engine_->stats(fg_).colocated, 0u);
}

TEST_F(EngineTest, CoLocationIsCountedWhenBackgroundRunsDuringAForegroundPiece) {
  Make(NoFeedback());
  engine_->Submit(fg_, P("f0"));
  engine_->Submit(bg_, P("b0"));
  device_->Start(0);  // f0 starts alone ...
  device_->Start(1);  // ... then b0 starts beside it
  device_->End(1, milliseconds(1));
  device_->End(0, milliseconds(1));
  engine_->Submit(fg_, P("f1"));
  device_->Run(2, milliseconds(1));  // alone
  EXPECT_EQ(engine_->stats(fg_).colocated, 1u);
  EXPECT_EQ(engine_->stats(fg_).completed, 2u);
}

// Learning (solo baseline), marking from measured ratios, isolation while marked, retry.
TEST_F(EngineTest, FeedbackIsolatesOperatorsMeasuredAsSensitive) {
  MultiplexOptions options;
  options.feedback = {.sensitive_ratio = 1.5,
                      .min_samples = 2,
                      .window = 4,
                      .retry_after = std::chrono::seconds(5)};
  Make(options);
  auto fg_run = [&](Duration d) {  // submit "conv" and run it, whatever bg does
    engine_->Submit(fg_, P("conv"));
    device_->Run(device_->launches.size() - 1, d);
  };
  // Two learning runs go alone even though background work is queued.
  engine_->Submit(bg_, P("b"));
  device_->Start(0);
  engine_->Submit(fg_, P("conv"));
  EXPECT_EQ(device_->launches.size(), 1u);  // waits for b to drain
  device_->End(0, {});
  device_->Run(1, milliseconds(10));
  fg_run(milliseconds(10));
  EXPECT_EQ(engine_->stats(fg_).isolated, 2u);
  // Now co-located: a background piece runs across each foreground run, 3x slower.
  for (int i = 0; i < 2; ++i) {
    engine_->Submit(bg_, P("b"));
    const std::size_t b = device_->launches.size() - 1;
    device_->Start(b);
    engine_->Submit(fg_, P("conv"));
    const std::size_t f = device_->launches.size() - 1;
    ASSERT_NE(f, b) << "conv was not launched beside the background piece";
    device_->Run(f, milliseconds(30));
    device_->End(b, {});
    clock_.now += milliseconds(10);
  }
  EXPECT_EQ(engine_->stats(fg_).colocated, 2u);
  ASSERT_EQ(engine_->feedback_report().size(), 1u);
  EXPECT_TRUE(engine_->feedback_report()[0].sensitive);
  // Marked: the next conv waits for the background piece and holds later ones back.
  engine_->Submit(bg_, P("b"));
  device_->Start(device_->launches.size() - 1);
  engine_->Submit(fg_, P("conv"));
  engine_->Submit(bg_, P("b-late"));
  EXPECT_EQ(device_->Ops().back(), "b");
  device_->End(device_->launches.size() - 1, {});
  EXPECT_EQ(device_->Ops().back(), "conv");
  device_->Run(device_->launches.size() - 1, milliseconds(10));
  EXPECT_EQ(device_->Ops().back(), "b-late");
  device_->Run(device_->launches.size() - 1, {});
  EXPECT_EQ(engine_->stats(fg_).isolated, 3u);
  // After retry_after the operator is probed beside background work again.
  clock_.now += std::chrono::seconds(5);
  engine_->Submit(bg_, P("b"));
  device_->Start(device_->launches.size() - 1);
  engine_->Submit(fg_, P("conv"));
  EXPECT_EQ(device_->Ops().back(), "conv");
  device_->Run(device_->launches.size() - 1, milliseconds(11));
  device_->End(device_->launches.size() - 2, {});
  fg_run(milliseconds(10));
  engine_->Synchronize(fg_);
  engine_->Synchronize(bg_);
}

TEST_F(EngineTest, APieceErrorReachesSynchronizeOnce) {
  Make(NoFeedback());
  engine_->Submit(fg_, P("f0"));
  device_->Start(0);
  device_->End(0, {}, std::make_exception_ptr(std::runtime_error("boom")));
  EXPECT_THROW(engine_->Synchronize(fg_), std::runtime_error);
  EXPECT_NO_THROW(engine_->Synchronize(fg_));
}

TEST_F(EngineTest, FullQueueMeansSubmitWouldBlock) {
  MultiplexOptions options = NoFeedback();
  options.max_queued = 2;
  Make(options);
  engine_->Submit(bg_, P("b0"));  // launched
  engine_->Submit(bg_, P("b1"));  // queued
  engine_->Submit(bg_, P("b2"));  // queued: the queue is full now
  std::atomic<bool> submitted{false};
  std::thread producer([&] {
    engine_->Submit(bg_, P("b3"));
    submitted = true;
  });
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_FALSE(submitted.load());  // may only pass spuriously late, never fail spuriously
  device_->Run(0, {});
  producer.join();
  EXPECT_TRUE(submitted.load());
  for (std::size_t i = 1; i < 4; ++i) device_->Run(i, {});
}

// Jobs may be added while another job's host thread waits in Synchronize (the waiter keeps a
// reference to its job across the wait).
TEST_F(EngineTest, AddingJobsWhileAnotherJobSynchronizes) {
  Make(NoFeedback());
  engine_->Submit(fg_, P("f0"));
  std::atomic<bool> synchronized{false};
  std::thread host([&] {
    engine_->Synchronize(fg_);
    synchronized = true;
  });
  for (int i = 0; i < 100; ++i) engine_->AddJob(JobClass::kBackground, "more");
  EXPECT_FALSE(synchronized.load());
  device_->Run(0, {});
  host.join();
  EXPECT_TRUE(synchronized.load());
}

}  // namespace
}  // namespace elastic::agent::multiplex
