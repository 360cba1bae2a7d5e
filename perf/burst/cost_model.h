// DeepPool's iteration-time components (§4.1): comp(i,g), sync(i,g) and comm(i,g)→(j,h).
//
// Network model (the paper's "simple networking model"): full bisection bandwidth, so a transfer
// is limited only by the busiest GPU's link; each transfer costs bytes / per-GPU bandwidth +
// propagation latency. Assumptions beyond the paper are marked ASSUMED and listed in
// docs/burst-planner.md.
//  - comp(i,g): forward + backward time of layer i when the global batch B is split over g GPUs.
//    The slowest worker holds ceil(B/g) samples and sets the time (ASSUMED); its time comes from
//    the layer's profile table, linearly interpolated between measured batches. Below the
//    smallest measured batch the smallest batch's time is used (a GPU is not assumed faster than
//    measured on fewer samples); above the largest, time grows in proportion to the batch
//    (the largest batch's throughput is kept). Both extrapolations are ASSUMED.
//  - sync(i,g): ring all-reduce of the layer's gradients, 2(g-1)/g * bytes / bandwidth + latency,
//    0 for g = 1 or a layer without parameters; not overlapped with the backward pass (§4.1).
//  - comm(i,g)→(j,h): when consecutive layers use different GPU counts, layer i's output for the
//    whole batch (B * output bytes per sample) is re-sharded forward and its gradient backward
//    (§4.1: "activation and back-propagation"), so the cost counts two transfers. The smaller
//    group's GPUs are a subset of the larger one's and keep the samples they already hold
//    (ASSUMED placement): each GPU of the smaller group sends or receives
//    bytes * (1/min(g,h) - 1/max(g,h)); exact when one count divides the other, the lower bound
//    otherwise. comm = 0 when g == h.
//  - Separate placement (a branch run in parallel on GPUs disjoint from the fork's and join's,
//    §4.2 "move samples to and from a new set of GPUs"): nothing is in place, so the busier side
//    moves bytes * max(1/g, 1/h) per GPU; again forward and backward.
// Pure functions; thread-safe.
#pragma once

#include "perf/burst/profile.h"

namespace elastic::burst {

// Forward + backward seconds of `layer` at `per_worker_batch` samples (interpolated, see above).
// REQUIRES: a validated layer, per_worker_batch >= 1.
double ComputeAtBatch(const Layer& layer, int per_worker_batch);

// comp(i,g) = ComputeAtBatch(layer, ceil(global_batch / gpus)). REQUIRES: gpus >= 1.
double LayerCompute(const Layer& layer, int global_batch, int gpus);

// sync(i,g): ring all-reduce time of `param_bytes` over `gpus` GPUs.
double SyncTime(const NetworkModel& net, double param_bytes, int gpus);

// Forward + backward re-sharding of `batch_bytes` when each GPU of the busier side moves
// batch_bytes * fraction.
inline double ReshardTime(const NetworkModel& net, double batch_bytes, double fraction) {
  return 2.0 * (batch_bytes * fraction / net.bandwidth_bytes_per_s + net.latency_s);
}

// comm for one layer boundary, forward and backward, when `batch_bytes` (the producing layer's
// output for the whole batch) moves from `from` GPUs to `to` GPUs of a nested placement.
// Inline: the search evaluates it for every pair of counts.
inline double TransitionTime(const NetworkModel& net, double batch_bytes, int from, int to) {
  if (from == to) return 0.0;
  int low = from < to ? from : to, high = from < to ? to : from;
  return ReshardTime(net, batch_bytes, 1.0 / low - 1.0 / high);
}

// The same boundary when the receiving (or sending) group is disjoint from the other one.
double SeparateTransitionTime(const NetworkModel& net, double batch_bytes, int from, int to);

}  // namespace elastic::burst
