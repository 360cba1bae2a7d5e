// MultiplexEngine: virtual queues, dispatch on every submit and completion, feedback samples.
#include "agent/multiplex/engine.h"

#include <stdexcept>
#include <utility>

namespace elastic::agent::multiplex {

MultiplexEngine::MultiplexEngine(std::unique_ptr<Executor> executor, MultiplexOptions options,
                                 const Clock& clock)
    : executor_(std::move(executor)),
      options_(std::move(options)),
      clock_(clock),
      feedback_(options_.feedback) {
  executor_->SetListener(this);
}

MultiplexEngine::~MultiplexEngine() {
  {
    std::unique_lock lock(mutex_);
    for (Job& job : jobs_) job.queue.clear();
    changed_.wait(lock, [&] { return launched_.empty(); });
  }
  executor_.reset();  // joins the executor's threads before our members go
}

JobId MultiplexEngine::AddJob(JobClass job_class, std::string name) {
  const StreamPriority priority =
      job_class == JobClass::kForeground ? StreamPriority::kHigh : StreamPriority::kLow;
  const StreamId stream = executor_->CreateStream(priority);
  std::lock_guard lock(mutex_);
  Job& job = jobs_.emplace_back();
  job.job_class = job_class;
  job.name = std::move(name);
  job.stream = stream;
  return static_cast<JobId>(jobs_.size() - 1);
}

void MultiplexEngine::Submit(JobId job_id, Piece piece) {
  std::unique_lock lock(mutex_);
  Job& job = jobs_.at(job_id);
  changed_.wait(lock, [&] { return job.queue.size() < options_.max_queued; });
  job.queue.push_back({next_seq_++, std::move(piece)});
  ++job.submitted;
  DispatchLocked();
}

void MultiplexEngine::Synchronize(JobId job_id) {
  std::unique_lock lock(mutex_);
  Job& job = jobs_.at(job_id);
  changed_.wait(lock, [&] { return job.stats.completed == job.submitted; });
  if (job.error) std::rethrow_exception(std::exchange(job.error, nullptr));
}

JobStats MultiplexEngine::stats(JobId job) const {
  std::lock_guard lock(mutex_);
  return jobs_.at(job).stats;
}

std::vector<OpReport> MultiplexEngine::feedback_report() const {
  std::lock_guard lock(mutex_);
  return feedback_.Report();
}

bool MultiplexEngine::HeadIsolated(const Job& job, TimePoint now) const {
  if (job.job_class != JobClass::kForeground || job.queue.empty()) return false;
  const Piece& head = job.queue.front().piece;
  return head.isolate || (options_.slowdown_feedback && !head.op.empty() &&
                          feedback_.Decide(head.op, now) == Placement::kIsolate);
}

// Launches pieces until the policy says wait. Executor::Launch only enqueues, so holding our
// lock across it cannot deadlock: the executor calls back from its own threads.
void MultiplexEngine::DispatchLocked() {
  const TimePoint now = clock_.Now();
  std::vector<JobView> views(jobs_.size());
  for (;;) {
    for (std::size_t i = 0; i < jobs_.size(); ++i) {
      const Job& job = jobs_[i];
      views[i] = JobView{.job_class = job.job_class,
                         .has_queued = !job.queue.empty(),
                         .head_seq = job.queue.empty() ? 0 : job.queue.front().seq,
                         .head_isolated = HeadIsolated(job, now),
                         .outstanding = job.outstanding,
                         .isolated_outstanding = job.isolated_outstanding};
    }
    const std::optional<std::size_t> pick = PickNext(options_.dispatch, views);
    if (!pick) return;
    Job& job = jobs_[*pick];
    Piece piece = std::move(job.queue.front().piece);
    job.queue.pop_front();
    const bool isolated = views[*pick].head_isolated && options_.dispatch.isolate_sensitive;
    const LaunchId id = next_launch_++;
    Launched& launched = launched_[id];
    launched.job = static_cast<JobId>(*pick);
    launched.op = piece.op;
    launched.isolated = isolated;
    ++job.outstanding;
    job.isolated_outstanding += isolated ? 1 : 0;
    job.stats.isolated += isolated ? 1 : 0;
    executor_->Launch(job.stream, id, piece);
    changed_.notify_all();  // the queue has room again
  }
}

void MultiplexEngine::OnPieceStart(LaunchId id) {
  std::lock_guard lock(mutex_);
  Launched& launched = launched_.at(id);
  if (jobs_[launched.job].job_class == JobClass::kBackground) {
    ++background_running_;
    ++background_starts_;
  } else {
    launched.colocated = background_running_ > 0;
    launched.background_starts = background_starts_;
  }
}

void MultiplexEngine::OnPieceEnd(LaunchId id, Duration duration, std::exception_ptr error) {
  std::lock_guard lock(mutex_);
  const auto it = launched_.find(id);
  const Launched launched = std::move(it->second);
  launched_.erase(it);
  Job& job = jobs_[launched.job];
  if (error && !job.error) job.error = error;
  const bool foreground = job.job_class == JobClass::kForeground;
  if (!foreground) --background_running_;
  const bool colocated =
      foreground && (launched.colocated || launched.background_starts != background_starts_);
  Finish(job, launched, duration, colocated);
  DispatchLocked();
  changed_.notify_all();
}

void MultiplexEngine::Finish(Job& job, const Launched& launched, Duration duration,
                             bool colocated) {
  --job.outstanding;
  job.isolated_outstanding -= launched.isolated ? 1 : 0;
  ++job.stats.completed;
  job.stats.colocated += colocated ? 1 : 0;
  job.stats.busy += duration;
  if (job.job_class == JobClass::kForeground && !launched.op.empty()) {
    feedback_.Record(launched.op, duration, colocated, clock_.Now());
  }
}

}  // namespace elastic::agent::multiplex
