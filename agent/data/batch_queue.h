// The data loaders a rank's ESTs share and the queueing buffer between them (EasyScale §3.2,
// Fig. 7). Includes LibTorch: only the trainer and its tests include this header.
//
// A rank hosts a block of ESTs that run one after another, so one small pool of loader threads
// (data.workers) serves all of them instead of one pool per EST: the rate batches are consumed
// at is that of a single worker. The ESTs' mini-batches, in the order this rank consumes them
// ((step, EST) for each step, the hosted ESTs in id order), are dispatched into a bounded buffer
// (data.prefetch entries) and prepared ahead by whichever loader is free.
//
// Determinism: what a batch contains is fixed when it is dispatched, in the trainer's thread, in
// consumption order: its sample indices (SampleOrder: a function of seed, step, EST) and its
// seed, one draw from its EST's data stream (est_data_stream.h). Loaders only run the pure
// PrepareMiniBatch on that. So neither the number of loaders nor their timing, nor the prefetch
// depth, nor the placement changes a single bit; and which batches are dispatched when is itself
// a function of the consumption position, never of thread timing, so a snapshot at a step
// boundary is deterministic too.
//
// Next never sleeps on a loader: a head that is not ready yet (no loader got to it, or one is
// still at it) is prepared by the calling thread, the same pure function on the same inputs. On
// a busy machine a woken loader can wait milliseconds for a core, and training would wait with
// it; preparing a batch costs microseconds (est_bench, docs/consistency.md). Loaders are woken
// once ceil(prefetch / 2) dispatched batches wait for them, not once per batch, so each wake-up
// prepares several (fewer context switches on the training thread's core).
//
// Checkpoints: Snapshot() gives each hosted EST's stream and the batches dispatched but not yet
// consumed; Restore() on the ESTs a rank hosts after a resume (any W) re-dispatches those
// batches first, with their recorded seeds, then continues each stream (loader_state.h).
//
// Thread-safety: Next/Snapshot/Restore from one thread (the trainer's); the loader threads are
// internal. Errors: a batch whose preparation threw rethrows from Next; a Next out of the
// dispatch order throws TrainingError.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "agent/common/est_range.h"
#include "agent/config/job_config.h"
#include "agent/data/dataset.h"
#include "agent/data/est_data_stream.h"
#include "agent/data/loader_state.h"
#include "agent/data/mini_batch.h"
#include "agent/data/sample_order.h"

namespace elastic::agent {

class BatchQueue {
 public:
  struct Options {
    std::int64_t workers = kDefaultDataWorkers;  // loader threads; 0 = prepare inside Next
    std::int64_t prefetch = kDefaultDataPrefetch;
    Augment augment = kDefaultAugment;
  };

  // Starts the loaders, which wait until the first Next. The streams start fresh
  // (EstDataStream::ForEst) at step 0 unless Restore says otherwise.
  // REQUIRES: est_batch * ests <= the order's global batch; hosted within [0, ests).
  BatchQueue(Dataset data, SampleOrder order, std::uint64_t job_seed, std::int64_t est_batch,
             EstRange hosted, Options options);
  ~BatchQueue();  // stops and joins the loaders
  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;

  // EST `est`'s mini-batch of `step`: the loaders' copy when it is ready, else prepared here.
  // REQUIRES: called in consumption order.
  MiniBatch Next(std::int64_t step, std::int64_t est);

  // At a step boundary: every hosted EST's stream and pending batches (dispatched, not
  // consumed), EST-id order.
  std::vector<EstLoaderState> Snapshot() const;

  // Continues from `step` with `hosted_states` (one per hosted EST, id order, pending batches
  // starting at `step`), as taken from a checkpoint. REQUIRES: before the first Next.
  void Restore(std::int64_t step, std::vector<EstLoaderState> hosted_states);

  // The state an uninterrupted run has at `step` when nothing is pending: each stream after
  // `step` draws. For checkpoints written before the loader record existed.
  static std::vector<EstLoaderState> StatesAtStep(std::uint64_t job_seed, EstRange hosted,
                                                  std::int64_t step);

  std::int64_t steps_per_epoch() const { return order_.steps_per_epoch(); }

 private:
  struct Slot;
  struct HostedEst {
    EstDataStream stream;
    std::deque<PendingBatch> restored;  // from a checkpoint, not yet dispatched again
  };

  void Dispatch();  // REQUIRES: mutex_ held
  void Prepare(Slot& slot) const;
  void LoaderLoop();
  std::shared_ptr<Slot> ClaimUnstarted();  // REQUIRES: mutex_ held

  const Dataset data_;
  SampleOrder order_;
  const std::int64_t est_batch_;
  const EstRange hosted_;
  const Options options_;

  mutable std::mutex mutex_;
  std::condition_variable work_;              // loaders: slots wait for them, or stop
  std::deque<std::shared_ptr<Slot>> buffer_;  // dispatched, not consumed; consumption order
  std::int64_t unstarted_ = 0;                // slots in buffer_ nobody is preparing yet
  const std::int64_t wake_at_;                // unstarted_ count that wakes the loaders
  std::vector<HostedEst> ests_;               // index = EST id - hosted_.begin
  std::int64_t cursor_step_ = 0;              // the next (step, EST) to dispatch
  std::int64_t cursor_est_ = 0;
  bool started_ = false;
  bool stopping_ = false;
  std::vector<std::thread> loaders_;
};

}  // namespace elastic::agent
