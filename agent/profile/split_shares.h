// How the job's model divides when a plan splits it, measured for the performance model
// (perf::ModelDesc::tp_unsplit_share and block_shares): each block's share of a training pass,
// which sets a pipeline's slowest stage, and the share of the pass a tensor-parallel rank still
// runs whole (embeddings, head, loss, LayerNorms).
#pragma once

#include <vector>

#include "agent/config/job_config.h"

namespace elastic::agent {

struct SplitShares {
  double tp_unsplit = 0;       // 0 where the model has no tensor-parallel form
  std::vector<double> blocks;  // one per Model::BlockCount block, summing to 1
};

// Times the job's model (seeded as the trainer seeds it) over one per-EST micro-batch of its
// training set on one intra-op thread on the job's device: each block's forward and backward
// alone (the last block with the loss), and the whole pass unsplit and as rank 0 of a t = 2
// tensor-parallel group whose all-reduce is a copy, so u = 2 T_2 / T_1 - 1 (clamped to [0, 0.95]).
// Medians of `reps` repetitions after `warmup`.
SplitShares MeasureSplitShares(const JobConfig& config, int warmup, int reps);

}  // namespace elastic::agent
