// Which samples each step and each EST consume: a pure function of (seed, step), so a resumed or
// resized job reads exactly the samples an uninterrupted one would (design.md §4).
// Torch-free and allocation-light; not thread-safe (caches the current epoch's permutation).
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace elastic::agent {

// Uniform integer in [0, bound) from a 64-bit engine by rejection. We do not use
// std::uniform_int_distribution: its algorithm is implementation-defined, so libstdc++ and libc++
// would shuffle differently. REQUIRES: bound >= 1.
std::uint64_t UniformBelow(std::mt19937_64& engine, std::uint64_t bound);

// Permutation of 0..count-1 for one epoch: Fisher-Yates driven by an mt19937_64 seeded through
// std::seed_seq with (seed, epoch) split into 32-bit words. mt19937_64 and seed_seq are fully
// specified by the standard, so the order is the same on every platform and library.
std::vector<std::int64_t> EpochPermutation(std::int64_t count, std::uint64_t seed,
                                           std::uint64_t epoch);

// The sample stream: epoch e is EpochPermutation(count, seed, e); step s (0-based) takes the
// global_batch indices starting at (s mod steps_per_epoch) * global_batch of epoch
// s / steps_per_epoch, where steps_per_epoch = count / global_batch. The tail of each epoch that
// does not fill a batch is skipped so every step has exactly global_batch samples.
class SampleOrder {
 public:
  // REQUIRES: 1 <= global_batch <= count (callers check and report it).
  SampleOrder(std::int64_t count, std::int64_t global_batch, std::uint64_t seed);

  // The global_batch sample indices of `step`. EST e of E takes the contiguous slice
  // [e * global_batch / E, (e + 1) * global_batch / E) of it. The span stays valid until the
  // next call.
  std::span<const std::int64_t> StepIndices(std::int64_t step);

  std::int64_t steps_per_epoch() const { return steps_per_epoch_; }

 private:
  std::int64_t count_;
  std::int64_t global_batch_;
  std::uint64_t seed_;
  std::int64_t steps_per_epoch_;
  std::int64_t cached_epoch_ = -1;
  std::vector<std::int64_t> permutation_;
};

}  // namespace elastic::agent
