// The data-augmentation random stream of one EST (EasyScale §3.2, Fig. 7; §3.3 D0: the data
// workers' RNG state is part of the checkpoint). It belongs to the EST, not to the loader
// thread that happens to prepare a batch, so which thread prepared what never shows in the bits.
// Torch-free; not thread-safe (the batch queue draws from it under its lock).
//
// SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", 2014): the
// whole state is one 64-bit word, so a checkpoint stores it as 16 hex digits, and skipping n
// draws is one multiplication. Each mini-batch of an EST takes exactly one draw, the batch seed,
// which seeds the (independent) per-sample draws of that batch's augmentation; so loader threads
// can prepare several batches of one EST at once without waiting for each other's state.
#pragma once

#include <cstdint>

namespace elastic::agent {

class EstDataStream {
 public:
  explicit EstDataStream(std::uint64_t state = 0) : state_(state) {}

  // The stream of EST `est_id` of a job seeded with `job_seed`, derived through std::seed_seq
  // with a tag that keeps it apart from the EST's compute stream and the sample order.
  static EstDataStream ForEst(std::uint64_t job_seed, std::int64_t est_id);

  std::uint64_t Next();
  // Advances as `draws` calls of Next would.
  void Skip(std::uint64_t draws) { state_ += draws * kGamma; }
  std::uint64_t state() const { return state_; }

 private:
  static constexpr std::uint64_t kGamma = 0x9e3779b97f4a7c15ULL;
  std::uint64_t state_;
};

}  // namespace elastic::agent
