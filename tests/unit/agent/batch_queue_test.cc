// Tests for the shared data loaders (BatchQueue, EasyScale §3.2 / Fig. 7): the batches do not
// depend on the number of loader threads, the prefetch depth or the placement of ESTs on ranks;
// augmentation draws belong to the EST; a snapshot taken with batches pending restores, on
// another placement, to exactly the batches an uninterrupted run gets.
#include "agent/data/batch_queue.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <utility>

#include "agent/common/errors.h"
#include "agent/est/est_placement.h"  // HostedEsts: the placements the tests compare

namespace elastic::agent {
namespace {

constexpr std::int64_t kEsts = 4;
constexpr std::int64_t kEstBatch = 8;
constexpr std::uint64_t kSeed = 5;

// 96 distinct, asymmetric images (so a flip shows) with labels: 3 steps an epoch.
Dataset Data() {
  torch::Tensor images = torch::arange(96 * 28 * 28, torch::kFloat32).reshape({96, 1, 28, 28});
  return Dataset{images, torch::arange(96, torch::kInt64) % 10, nullptr};
}

BatchQueue MakeQueue(EstRange hosted, BatchQueue::Options options) {
  return BatchQueue(Data(), SampleOrder(96, kEsts * kEstBatch, kSeed), kSeed, kEstBatch, hosted,
                    options);
}

using Batches = std::map<std::pair<std::int64_t, std::int64_t>, MiniBatch>;  // (step, EST)

// Consumes steps [first, last) for the ESTs `hosted`, as a trainer does.
void Consume(BatchQueue& queue, EstRange hosted, std::int64_t first, std::int64_t last,
             Batches* out) {
  for (std::int64_t step = first; step < last; ++step) {
    for (std::int64_t est = hosted.begin; est < hosted.end; ++est) {
      (*out)[{step, est}] = queue.Next(step, est);
    }
  }
}

// Every EST's batches for steps [0, steps) over `ranks` placements of kEsts ESTs.
Batches RunRanks(int ranks, BatchQueue::Options options, std::int64_t steps = 7) {
  Batches batches;
  for (int rank = 0; rank < ranks; ++rank) {
    const EstRange hosted = HostedEsts(kEsts, rank, ranks);
    BatchQueue queue = MakeQueue(hosted, options);
    Consume(queue, hosted, 0, steps, &batches);
  }
  return batches;
}

void ExpectSameBatches(const Batches& a, const Batches& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [key, batch] : a) {
    const MiniBatch& other = b.at(key);
    EXPECT_TRUE(torch::equal(batch.inputs, other.inputs)) << key.first << "/" << key.second;
    EXPECT_TRUE(torch::equal(batch.targets, other.targets)) << key.first << "/" << key.second;
  }
}

TEST(BatchQueue, WorkersPrefetchAndPlacementChangeNoBatch) {
  const Batches reference = RunRanks(1, {0, 1, Augment::kFlip});
  for (std::int64_t workers : {1, 3}) {
    for (std::int64_t prefetch : {1, 4, 9}) {
      SCOPED_TRACE("workers=" + std::to_string(workers) + " prefetch=" + std::to_string(prefetch));
      ExpectSameBatches(RunRanks(1, {workers, prefetch, Augment::kFlip}), reference);
      ExpectSameBatches(RunRanks(3, {workers, prefetch, Augment::kFlip}), reference);
    }
  }
}

// With no work between calls the consumer overtakes the loaders, so Next prepares heads itself,
// some while a loader is preparing the same batch: still the same batches.
TEST(BatchQueue, AConsumerFasterThanItsLoadersGetsTheSameBatches) {
  const Batches reference = RunRanks(1, {0, 1, Augment::kFlip}, 30);
  for (std::int64_t workers : {1, 2}) {
    for (std::int64_t prefetch : {2, 3, 16}) {
      SCOPED_TRACE("workers=" + std::to_string(workers) + " prefetch=" + std::to_string(prefetch));
      ExpectSameBatches(RunRanks(1, {workers, prefetch, Augment::kFlip}, 30), reference);
    }
  }
}

TEST(BatchQueue, ShardsFollowTheSampleOrderAndFlipsAreTheEstsDraws) {
  const Batches plain = RunRanks(1, {2, 4, Augment::kNone});
  const Batches flipped = RunRanks(1, {2, 4, Augment::kFlip});
  SampleOrder order(96, kEsts * kEstBatch, kSeed);
  const Dataset data = Data();
  int flips = 0;
  for (std::int64_t step = 0; step < 7; ++step) {
    const auto indices = order.StepIndices(step);
    for (std::int64_t est = 0; est < kEsts; ++est) {
      const auto shard = indices.subspan(static_cast<std::size_t>(est * kEstBatch), kEstBatch);
      torch::Tensor index = torch::tensor(std::vector<std::int64_t>(shard.begin(), shard.end()));
      EXPECT_TRUE(torch::equal(plain.at({step, est}).inputs, data.images.index_select(0, index)));
      EXPECT_TRUE(torch::equal(plain.at({step, est}).targets, data.labels.index_select(0, index)));
      const MiniBatch& f = flipped.at({step, est});
      for (std::int64_t i = 0; i < kEstBatch; ++i) {
        const torch::Tensor original = plain.at({step, est}).inputs[i];
        const bool mirrored = torch::equal(f.inputs[i], original.flip({-1}));
        EXPECT_TRUE(mirrored || torch::equal(f.inputs[i], original));
        flips += mirrored ? 1 : 0;
      }
    }
  }
  EXPECT_GT(flips, 7 * kEsts * kEstBatch / 4);  // about half of 224
  EXPECT_LT(flips, 7 * kEsts * kEstBatch * 3 / 4);
}

TEST(BatchQueue, SnapshotWithPendingBatchesRestoresOnAnotherPlacement) {
  const BatchQueue::Options options{2, 5, Augment::kFlip};
  const Batches uninterrupted = RunRanks(1, options);
  // Steps 0..2 on one rank hosting all ESTs, prefetching 5 batches past step 3's start.
  Batches resumed;
  std::vector<EstLoaderState> states;
  {
    BatchQueue queue = MakeQueue({0, kEsts}, options);
    Consume(queue, {0, kEsts}, 0, 3, &resumed);
    states = queue.Snapshot();
  }
  ASSERT_EQ(states.size(), 4u);
  EXPECT_EQ(states[0].pending.size(), 2u);  // (3,0) (3,1) (3,2) (3,3) (4,0) dispatched
  EXPECT_EQ(states[1].pending.size(), 1u);
  EXPECT_EQ(states[0].pending[0].step, 3);
  EXPECT_EQ(states[0].pending[1].step, 4);
  // Steps 3..6 on three ranks with other options, each taking its ESTs' states.
  for (int rank = 0; rank < 3; ++rank) {
    const EstRange hosted = HostedEsts(kEsts, rank, 3);
    BatchQueue queue = MakeQueue(hosted, {1, 1, Augment::kFlip});
    queue.Restore(3, {states.begin() + hosted.begin, states.begin() + hosted.end});
    Consume(queue, hosted, 3, 7, &resumed);
  }
  ExpectSameBatches(resumed, uninterrupted);
}

TEST(BatchQueue, StatesAtStepEqualASnapshotWithNothingPending) {
  BatchQueue queue = MakeQueue({1, 3}, {0, 1, Augment::kNone});
  Batches ignored;
  Consume(queue, {1, 3}, 0, 2, &ignored);
  std::vector<EstLoaderState> snapshot = queue.Snapshot();
  // Prefetch 1: the batch of (2, 1) is dispatched, its seed drawn.
  ASSERT_EQ(snapshot[0].pending.size(), 1u);
  EXPECT_EQ(snapshot[1], BatchQueue::StatesAtStep(kSeed, {1, 3}, 2)[1]);
  EstDataStream before(BatchQueue::StatesAtStep(kSeed, {1, 3}, 2)[0].stream);
  EXPECT_EQ(snapshot[0].pending[0].seed, before.Next());
  EXPECT_EQ(snapshot[0].stream, before.state());
}

TEST(BatchQueue, OutOfOrderRequestsAndLateRestoresAreRefused) {
  BatchQueue queue = MakeQueue({0, 2}, {1, 2, Augment::kNone});
  EXPECT_THROW(queue.Next(0, 1), TrainingError);
  queue.Next(0, 0);
  EXPECT_THROW(queue.Restore(0, BatchQueue::StatesAtStep(kSeed, {0, 2}, 0)), TrainingError);
}

}  // namespace
}  // namespace elastic::agent
