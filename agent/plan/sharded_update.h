// The sharded update (zero-dp, zero-offload): ZeRO stage 2 over the EST runtime (Rubick §2.1, §3).
// Internal to agent/plan (parameter_update.h is the interface). Includes LibTorch.
#pragma once

#include <memory>

#include "agent/plan/parameter_update.h"

namespace elastic::agent {

// REQUIRES: plan.zero_stage > 0. Throws ConfigError under d0 on more than one rank (its
// rank-order partial sums are not implemented for shards).
std::unique_ptr<ParameterUpdate> MakeShardedUpdate(const perf::ExecutionPlan& plan,
                                                   const UpdateContext& context);

}  // namespace elastic::agent
