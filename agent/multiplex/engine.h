// The foreground/background multiplexing engine (DeepPool §5): per-job virtual queues feeding
// an executor's prioritised streams, with launch pacing and slowdown feedback.
//
// A job is a sequence of pieces submitted by one host thread. The engine launches them onto
// the job's stream (foreground: high priority, background: low) as DispatchOptions allow, and
// measures every foreground piece; SlowdownFeedback decides which must run alone.
//
// Error model: a piece that throws poisons its job; Synchronize() rethrows the first error.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "agent/multiplex/clock.h"
#include "agent/multiplex/dispatch_policy.h"
#include "agent/multiplex/executor.h"
#include "agent/multiplex/piece.h"
#include "agent/multiplex/slowdown_feedback.h"

namespace elastic::agent::multiplex {

struct MultiplexOptions {
  DispatchOptions dispatch;
  // Off: foreground pieces are still timed, but only hinted pieces (Piece::isolate) run alone.
  bool slowdown_feedback = true;
  FeedbackOptions feedback;
  // Capacity of each job's virtual queue: Submit blocks while it is full.
  std::size_t max_queued = 64;
};

struct JobStats {
  std::uint64_t completed = 0;
  std::uint64_t isolated = 0;   // pieces launched with no background piece beside them
  std::uint64_t colocated = 0;  // foreground pieces that overlapped a background piece
  Duration busy{};              // sum of the pieces' run times
};

// Thread-safe: each job is driven by its own host thread (Submit, Synchronize); any thread may
// read stats. Owns the executor. Destruction drops pieces not yet launched and waits for the
// launched ones. REQUIRES: no Submit or Synchronize runs during destruction.
class MultiplexEngine final : private ExecutorListener {
 public:
  MultiplexEngine(std::unique_ptr<Executor> executor, MultiplexOptions options, const Clock& clock);
  ~MultiplexEngine() override;
  MultiplexEngine(const MultiplexEngine&) = delete;
  MultiplexEngine& operator=(const MultiplexEngine&) = delete;

  // A new job with its own stream. `name` appears in nothing but stats and logs.
  JobId AddJob(JobClass job_class, std::string name);

  // Queues `piece` behind the job's earlier pieces; blocks while the job's queue is full.
  void Submit(JobId job, Piece piece);

  // Blocks until every piece submitted to `job` has finished; rethrows the first exception a
  // piece of the job threw (and forgets it).
  void Synchronize(JobId job);

  JobStats stats(JobId job) const;
  std::vector<OpReport> feedback_report() const;

 private:
  struct QueuedPiece {
    std::uint64_t seq;
    Piece piece;
  };
  struct Job {
    JobClass job_class = JobClass::kForeground;
    std::string name;
    StreamId stream = 0;
    std::deque<QueuedPiece> queue;
    int outstanding = 0;
    int isolated_outstanding = 0;
    std::uint64_t submitted = 0;
    std::exception_ptr error;
    JobStats stats;
  };
  struct Launched {
    JobId job = 0;
    std::string op;
    bool isolated = false;
    bool colocated = false;  // a background piece was running when it started
    std::uint64_t background_starts = 0;
  };

  void OnPieceStart(LaunchId id) override;
  void OnPieceEnd(LaunchId id, Duration duration, std::exception_ptr error) override;

  bool HeadIsolated(const Job& job, TimePoint now) const;
  void DispatchLocked();
  void Finish(Job& job, const Launched& launched, Duration duration, bool colocated);

  std::unique_ptr<Executor> executor_;
  const MultiplexOptions options_;
  const Clock& clock_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;  // a piece finished or was launched
  std::deque<Job> jobs_;             // a deque: Submit and Synchronize keep a Job& across waits
  std::unordered_map<LaunchId, Launched> launched_;
  SlowdownFeedback feedback_;
  std::uint64_t next_seq_ = 0;
  LaunchId next_launch_ = 0;
  int background_running_ = 0;
  std::uint64_t background_starts_ = 0;
};

}  // namespace elastic::agent::multiplex
