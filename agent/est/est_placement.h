// Which ESTs a rank hosts: W ranks split E ESTs into contiguous, balanced blocks in rank order
// (rank r hosts [floor(r*E/W), floor((r+1)*E/W))). Contiguity in rank order is what makes a
// rank-ordered allgather of the hosted ESTs' gradients arrive in EST-id order. Torch-free.
#pragma once

#include <cstdint>

#include "agent/common/est_range.h"

namespace elastic::agent {

// The ESTs rank `rank` of `ranks` hosts. Throws ConfigError when ranks > ests (every rank must
// host at least one EST) or the arguments are out of range.
EstRange HostedEsts(std::int64_t ests, int rank, int ranks);

}  // namespace elastic::agent
