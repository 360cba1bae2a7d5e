// EasyScaleThread (EST) contexts: the per-logical-worker state that must travel with an EST when
// it moves between processes (EasyScale §3.3): its RNG stream and its copy of the model's
// buffers (est_buffers.h); the checkpoint saves both per EST. Includes LibTorch.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace elastic::agent {

struct EstContext {
  std::int64_t id = 0;      // 0 .. ests-1; fixes the EST's data shard and reduction position
  torch::Tensor rng_state;  // CPU generator state (uint8 tensor) between the EST's turns
  // The EST's own copy of the model's buffers (BatchNorm running statistics...), in the model's
  // named_buffers() order; empty for a model without buffers (est_buffers.h).
  std::vector<torch::Tensor> buffers;
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
