// Which ESTs a rank hosts: W ranks split E ESTs into contiguous, balanced blocks in rank order
// (rank r hosts [floor(r*E/W), floor((r+1)*E/W))), or blocks in proportion to device speed. Contiguity in rank order is what makes a
// rank-ordered allgather of the hosted ESTs' gradients arrive in EST-id order. Torch-free.
#pragma once

#include <cstdint>
#include <vector>

#include "agent/common/est_range.h"
#include "common/env.h"

namespace elastic::agent {

// The ESTs rank `rank` of `ranks` hosts. Throws ConfigError when ranks > ests (every rank must
// host at least one EST) or the arguments are out of range.
EstRange HostedEsts(std::int64_t ests, int rank, int ranks);

// EasyScale's heterogeneous placement (§3.4): contiguous blocks in rank order sized in
// proportion to each rank's device speed (`speeds`, one per rank), every rank at least one EST.
// Equal speeds give HostedEsts exactly. Under D1/D2 the bits do not depend on the placement
// (the fold is in EST-id order), only the step time does. Throws ConfigError as HostedEsts, and
// for a speed that is not a positive finite number.
EstRange HostedEstsBySpeed(std::int64_t ests, int rank, const std::vector<double>& speeds);

// This process's device speed against a reference GPU of 1: ELASTIC_DEVICE_SPEED (a decimal
// number in (0, 1000], set per node on clusters of mixed devices), 1 when unset. Throws
// ConfigError naming the variable, its value and the expected form otherwise.
double DeviceSpeedFromEnv(const EnvLookup& env);

}  // namespace elastic::agent
