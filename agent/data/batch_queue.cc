// BatchQueue: dispatch in consumption order, shared loader threads, snapshot and restore.
#include "agent/data/batch_queue.h"

#include <torch/torch.h>

#include <algorithm>

#include "agent/common/errors.h"

namespace elastic::agent {

struct BatchQueue::Slot {
  enum class State { kDispatched, kPreparing, kReady };
  std::int64_t step = 0;
  std::int64_t est = 0;
  std::int64_t epoch = 0;
  std::uint64_t seed = 0;
  std::vector<std::int64_t> indices;
  State state = State::kDispatched;
  MiniBatch batch;
  std::exception_ptr error;
};

BatchQueue::BatchQueue(Dataset data, SampleOrder order, std::uint64_t job_seed,
                       std::int64_t est_batch, EstRange hosted, Options options)
    : data_(std::move(data)),
      order_(std::move(order)),
      est_batch_(est_batch),
      hosted_(hosted),
      options_(options),
      wake_at_(std::max<std::int64_t>(1, (options.prefetch + 1) / 2)),
      cursor_est_(hosted.begin) {
  for (const EstLoaderState& state : StatesAtStep(job_seed, hosted, 0)) {
    ests_.push_back(HostedEst{EstDataStream(state.stream), {}});
  }
  for (std::int64_t i = 0; i < options_.workers; ++i)
    loaders_.emplace_back([this] { LoaderLoop(); });
}

BatchQueue::~BatchQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  for (std::thread& loader : loaders_) loader.join();
}

std::vector<EstLoaderState> BatchQueue::StatesAtStep(std::uint64_t job_seed, EstRange hosted,
                                                     std::int64_t step) {
  std::vector<EstLoaderState> states;
  for (std::int64_t est = hosted.begin; est < hosted.end; ++est) {
    EstDataStream stream = EstDataStream::ForEst(job_seed, est);
    stream.Skip(static_cast<std::uint64_t>(step));  // one draw per consumed batch
    states.push_back(EstLoaderState{est, stream.state(), {}});
  }
  return states;
}

void BatchQueue::Dispatch() {
  auto slot = std::make_shared<Slot>();
  slot->step = cursor_step_;
  slot->est = cursor_est_;
  slot->epoch = cursor_step_ / order_.steps_per_epoch();
  HostedEst& est = ests_[static_cast<std::size_t>(cursor_est_ - hosted_.begin)];
  if (!est.restored.empty()) {
    const PendingBatch pending = est.restored.front();
    est.restored.pop_front();
    if (pending.step != slot->step) {
      throw TrainingError("data loader: EST " + std::to_string(slot->est) +
                          " has a restored batch of step " + std::to_string(pending.step) +
                          " where step " + std::to_string(slot->step) + " comes next");
    }
    slot->seed = pending.seed;
  } else {
    slot->seed = est.stream.Next();
  }
  const auto step = order_.StepIndices(cursor_step_);
  const auto shard = step.subspan(static_cast<std::size_t>(cursor_est_ * est_batch_),
                                  static_cast<std::size_t>(est_batch_));
  slot->indices.assign(shard.begin(), shard.end());
  buffer_.push_back(std::move(slot));
  if (++cursor_est_ == hosted_.end) {
    cursor_est_ = hosted_.begin;
    ++cursor_step_;
  }
  ++unstarted_;  // Next wakes the loaders when this reaches wake_at_ (the header says why)
}

std::shared_ptr<BatchQueue::Slot> BatchQueue::ClaimUnstarted() {
  if (unstarted_ == 0) return nullptr;
  for (const auto& candidate : buffer_) {
    if (candidate->state == Slot::State::kDispatched) {
      candidate->state = Slot::State::kPreparing;
      --unstarted_;
      return candidate;
    }
  }
  return nullptr;
}

void BatchQueue::Prepare(Slot& slot) const {
  try {
    slot.batch = PrepareMiniBatch(data_, slot.indices, slot.seed, options_.augment);
  } catch (...) {
    slot.error = std::current_exception();
  }
}

void BatchQueue::LoaderLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    std::shared_ptr<Slot> slot;
    work_.wait(lock, [&] { return stopping_ || (slot = ClaimUnstarted()) != nullptr; });
    if (stopping_) return;
    lock.unlock();
    Prepare(*slot);
    lock.lock();
    // Nobody waits for this: Next either finds it ready or has prepared its own copy.
    slot->state = Slot::State::kReady;
  }
}

MiniBatch BatchQueue::Next(std::int64_t step, std::int64_t est) {
  std::unique_lock<std::mutex> lock(mutex_);
  // A busy loader takes the next slot without a wake-up; idle ones are woken when a Dispatch
  // brings the slots nobody prepares yet to wake_at_.
  bool wake = false;
  if (!started_) {
    started_ = true;
    while (static_cast<std::int64_t>(buffer_.size()) < options_.prefetch) {
      Dispatch();
      wake = wake || unstarted_ == wake_at_;
    }
  }
  std::shared_ptr<Slot> head = buffer_.front();
  if (head->step != step || head->est != est) {
    throw TrainingError("data loader: batch of step " + std::to_string(step) + " EST " +
                        std::to_string(est) + " requested, but the queue's next is step " +
                        std::to_string(head->step) + " EST " + std::to_string(head->est));
  }
  const bool ready = head->state == Slot::State::kReady;
  if (head->state == Slot::State::kDispatched) {
    head->state = Slot::State::kPreparing;  // ours now: no loader starts it
    --unstarted_;
  }
  buffer_.pop_front();
  Dispatch();  // keep `prefetch` batches in flight
  wake = wake || unstarted_ == wake_at_;
  lock.unlock();
  // After unlocking, so a woken loader does not run only to block on the mutex we hold.
  if (wake && options_.workers > 0) work_.notify_all();
  if (!ready) {
    // A loader may still be preparing the slot; this copy has the same bits and the slot's own
    // result is dropped. Dispatch fixed indices and seed, so reading them unlocked is safe.
    return PrepareMiniBatch(data_, head->indices, head->seed, options_.augment);
  }
  if (head->error) std::rethrow_exception(head->error);
  return std::move(head->batch);
}

std::vector<EstLoaderState> BatchQueue::Snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<EstLoaderState> states;
  for (std::int64_t est = hosted_.begin; est < hosted_.end; ++est) {
    states.push_back(EstLoaderState{
        est, ests_[static_cast<std::size_t>(est - hosted_.begin)].stream.state(), {}});
  }
  for (const auto& slot : buffer_) {
    states[static_cast<std::size_t>(slot->est - hosted_.begin)].pending.push_back(
        PendingBatch{slot->step, slot->epoch, slot->seed});
  }
  for (std::size_t i = 0; i < ests_.size(); ++i) {
    const auto& restored = ests_[i].restored;
    states[i].pending.insert(states[i].pending.end(), restored.begin(), restored.end());
  }
  return states;
}

void BatchQueue::Restore(std::int64_t step, std::vector<EstLoaderState> hosted_states) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (started_ || hosted_states.size() != ests_.size()) {
    throw TrainingError("data loader: restore after the first batch or for other ESTs");
  }
  cursor_step_ = step;
  cursor_est_ = hosted_.begin;
  for (std::size_t i = 0; i < ests_.size(); ++i) {
    ests_[i].stream = EstDataStream(hosted_states[i].stream);
    ests_[i].restored.assign(hosted_states[i].pending.begin(), hosted_states[i].pending.end());
  }
}

}  // namespace elastic::agent
