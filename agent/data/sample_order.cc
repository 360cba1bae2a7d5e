// Deterministic epoch permutations and step batches.
#include "agent/data/sample_order.h"

#include <numeric>
#include <utility>

namespace elastic::agent {

std::uint64_t UniformBelow(std::mt19937_64& engine, std::uint64_t bound) {
  // Reject the top partial block of the 2^64 range so every residue is equally likely.
  const std::uint64_t limit = UINT64_MAX - (UINT64_MAX % bound + 1) % bound;
  std::uint64_t value;
  do {
    value = engine();
  } while (value > limit);
  return value % bound;
}

std::vector<std::int64_t> EpochPermutation(std::int64_t count, std::uint64_t seed,
                                           std::uint64_t epoch) {
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                    static_cast<std::uint32_t>(epoch), static_cast<std::uint32_t>(epoch >> 32)};
  std::mt19937_64 engine(seq);
  std::vector<std::int64_t> order(static_cast<std::size_t>(count));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  for (std::int64_t i = count - 1; i > 0; --i) {
    auto j = static_cast<std::int64_t>(UniformBelow(engine, static_cast<std::uint64_t>(i) + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

SampleOrder::SampleOrder(std::int64_t count, std::int64_t global_batch, std::uint64_t seed)
    : count_(count),
      global_batch_(global_batch),
      seed_(seed),
      steps_per_epoch_(count / global_batch) {}

std::span<const std::int64_t> SampleOrder::StepIndices(std::int64_t step) {
  const std::int64_t epoch = step / steps_per_epoch_;
  if (epoch != cached_epoch_) {
    permutation_ = EpochPermutation(count_, seed_, static_cast<std::uint64_t>(epoch));
    cached_epoch_ = epoch;
  }
  const std::int64_t offset = (step % steps_per_epoch_) * global_batch_;
  return std::span<const std::int64_t>(permutation_)
      .subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(global_batch_));
}

}  // namespace elastic::agent
