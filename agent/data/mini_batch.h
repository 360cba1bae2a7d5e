// One EST's mini-batch as the forward pass takes it, and how a loader prepares it. Includes
// LibTorch: only the batch queue, the trainer and their tests include this header.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <span>

#include "agent/config/job_config.h"
#include "agent/data/dataset.h"

namespace elastic::agent {

struct MiniBatch {
  torch::Tensor inputs;   // [n, ...] as the dataset holds them (float32 [n, 1, 28, 28] images)
  torch::Tensor targets;  // int64 [n] or [n, T], contiguous
};

// The rows `indices` of `data`, augmented (`augment`) with per-sample draws from a stream
// seeded by `seed` (the batch seed its EST's data stream gave it). A pure function of its
// arguments, so any loader thread, or the trainer itself, prepares the same bits. Thread-safe:
// reads `data` only and uses no process-wide generator.
MiniBatch PrepareMiniBatch(const Dataset& data, std::span<const std::int64_t> indices,
                           std::uint64_t seed, Augment augment);

}  // namespace elastic::agent
