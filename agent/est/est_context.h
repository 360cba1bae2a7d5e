// EasyScaleThread (EST) contexts: the per-logical-worker state that must travel with an EST when
// it moves between processes (EasyScale §3.3). Today that is its RNG stream; it is what the
// checkpoint will save per EST. Includes LibTorch.
#pragma once

#include <torch/types.h>

#include <cstdint>

namespace elastic::agent {

struct EstContext {
  std::int64_t id = 0;      // 0 .. ests-1; fixes the EST's data shard and reduction position
  torch::Tensor rng_state;  // CPU generator state (uint8 tensor) between the EST's turns
};

// The EST's generator seed, derived from (job seed, EST id) through std::seed_seq so streams of
// different ESTs and jobs do not overlap in any simple way. Fully specified: platform-independent.
std::uint64_t EstSeed(std::uint64_t job_seed, std::int64_t est_id);

// A context whose stream starts at EstSeed(job_seed, est_id).
EstContext MakeEstContext(std::uint64_t job_seed, std::int64_t est_id);

// While alive, LibTorch's default CPU generator (which dropout and other stock ops draw from)
// runs `est`'s stream; on destruction the advanced state is saved back into `est` and the
// previous default state restored. This keeps randomness a property of the EST, not of the
// process hosting it. Not thread-safe: one scope at a time per process.
class EstRngScope {
 public:
  explicit EstRngScope(EstContext& est);
  ~EstRngScope();
  EstRngScope(const EstRngScope&) = delete;
  EstRngScope& operator=(const EstRngScope&) = delete;

 private:
  EstContext& est_;
  torch::Tensor saved_default_state_;
};

}  // namespace elastic::agent
