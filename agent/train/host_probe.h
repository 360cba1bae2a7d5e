// The host-speed probe of train.host_probe (a profiling aid): a fixed compute kernel timed before
// a training step. On a shared host (a cloud VM) the CPUs run at two or more speeds in phases the
// guest cannot see; the probe slows down with the step, so a profile can keep the steps that ran
// at the host's quiet speed (docs/perf-model.md "Host contention phases").
#pragma once

#include "agent/comm/communicator.h"

namespace elastic::agent {

// Wall milliseconds of a fixed kernel (an 80 x 80 single-precision matrix product, repeated)
// run once on each of `threads` intra-op threads at the same time, so a slow CPU under any of
// them shows. Touches only its own buffers: training state, RNG streams and thread settings stay
// as they were, so results never depend on whether the probe ran. REQUIRES: threads >= 1.
double TimeHostProbe(int threads);

// TimeHostProbe on every rank, then the largest time of all ranks (a synchronous step runs at the
// pace of its slowest rank). Collective: every rank calls it; every rank returns the same value.
double TimeHostProbeOnEveryRank(Communicator& world, int threads);

}  // namespace elastic::agent
