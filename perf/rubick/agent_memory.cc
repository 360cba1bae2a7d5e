// The agent's per-rank memory, plan by plan, from the buffers its code allocates.
#include "perf/rubick/agent_memory.h"

#include <algorithm>
#include <cmath>

#include "common/byte_size.h"

namespace elastic::agent {
namespace {

bool UsesEstSlots(Plan word, const PlanRequest& request, int ranks) {
  // d1/d2 on several ranks: every EST's gradient is captured into its slot and the slots are
  // folded in EST order (agent/est/gradient_stash.h); each rank allocates all E slots. One rank,
  // d0, pp and tp fold into .grad as the ESTs run (the running fold): no slots at all.
  if (ranks == 1 || request.determinism == Determinism::kD0) return false;
  return word == Plan::kDp || word == Plan::kGa || word == Plan::kGc || word == Plan::kZeroDp ||
         word == Plan::kZeroOffload;
}

// Activations of one micro-batch of n samples kept for the backward pass at the busiest moment.
double Activations(const perf::ModelDesc& model, const PlanRequest& request, Plan word, int ranks,
                   double n) {
  const double per_sample = model.activation_bytes_per_sample;
  const double layers = std::max(1, model.layers);
  if (word == Plan::kGc) {
    // Every block's input is kept (the checkpoint), and one block's activations exist at a time:
    // the last block's in the forward pass, a recomputed one in the backward pass.
    double checkpoint = model.gc_checkpoint_bytes_per_sample_layer;
    if (checkpoint <= 0) checkpoint = double(model.seq_len) * model.hidden * model.activation_elem_bytes;
    return checkpoint * layers * n + per_sample / layers * n;
  }
  if (word == Plan::kPp && ranks > 1) {
    // 1F1B: the first stage runs min(W, E) forward passes of its blocks before its first
    // backward pass; blocks are assumed to hold equal activations (Rubick §4.1's l / p).
    const double in_flight = std::min<double>(ranks, static_cast<double>(request.ests));
    return per_sample / ranks * n * in_flight;
  }
  if (word == Plan::kTp) return per_sample * n / ranks;  // the split layers' share (Megatron)
  return per_sample * n;  // dp, ga, zero-*: the hosted ESTs run one after another
}

// The gradient exchange's and the parameter gather's transient buffers, in gradient elements
// (multiples of P), on the busiest rank (a = ceil(E / W) hosted ESTs).
double ExchangeInParams(Plan word, const PlanRequest& request, int ranks) {
  if (ranks == 1) return 0;
  const double w = ranks, e = static_cast<double>(request.ests);
  const double a = std::ceil(e / w);
  switch (word) {
    case Plan::kDp:
    case Plan::kGa:
    case Plan::kGc:
      if (request.determinism == Determinism::kD0) return 1 + w;  // partial + W gathered
      // Reduce-scatter in EST order: the send copy of the hosted slots, every EST's chunk of
      // this rank, the folded chunk and the gathered gradient, all alive until the install.
      return a + e / w + 1 / w + 1;
    case Plan::kZeroDp:
    case Plan::kZeroOffload:
      // The send copy and every EST's piece of the shard, then (freed) the shard and the
      // gathered parameters.
      return std::max(a + e / w, 1 / w + 1);
    case Plan::kPp: return 1 / w + 1;  // a stage's parameters, then all of them gathered
    case Plan::kTp: return 1;          // the split gradients gathered whole
    default: return 0;
  }
}

}  // namespace

AgentMemoryEstimate EstimateAgentMemory(const perf::ModelDesc& model, const PlanRequest& request,
                                        Plan word, int ranks) {
  AgentMemoryEstimate m;
  const double p = model.params, w = ranks;
  const double n = static_cast<double>(request.global_batch) /
                   static_cast<double>(std::max<std::int64_t>(1, request.ests));
  m.weights = p * model.weight_bytes;
  m.gradients = p * model.grad_bytes;
  const double momentum = request.momentum_buffers ? p * model.optimizer_bytes : 0.0;
  switch (word) {
    case Plan::kZeroDp: m.optimizer = momentum / w; break;  // the owner's run of parameters
    case Plan::kPp: m.optimizer = momentum / w; break;      // the stage's parameters
    case Plan::kZeroOffload:
      // The owner's update runs on host threads: its momentum (and, on a GPU, the shard's
      // master weights and gradients) live in host memory.
      m.host = p / w * (model.weight_bytes + model.grad_bytes) + momentum / w;
      break;
    default: m.optimizer = momentum; break;
  }
  if (UsesEstSlots(word, request, ranks)) {
    m.est_slots = static_cast<double>(request.ests) * p * model.grad_bytes;
  }
  m.activations = Activations(model, request, word, ranks, n);
  m.exchange = ExchangeInParams(word, request, ranks) * p * model.grad_bytes;
  const double states = m.weights + m.gradients + m.optimizer + m.est_slots;
  m.device_total = states + std::max(m.activations, m.exchange);
  return m;
}

double RankDeviceBudget(const PlanRequest& request, const NodeAllocation& allocation) {
  if (request.device_memory_bytes > 0) return request.device_memory_bytes;
  return allocation.mem_bytes_per_node / std::max(1, allocation.workers_per_node);
}

std::string AgentMemoryRefusal(const AgentMemoryEstimate& estimate, const PlanRequest& request,
                               const NodeAllocation& allocation) {
  const double budget = RankDeviceBudget(request, allocation);
  if (budget > 0 && estimate.device_total > budget) {
    return "needs " + FormatByteSize(estimate.device_total) + " per rank (parameters " +
           FormatByteSize(estimate.weights) + ", gradients " + FormatByteSize(estimate.gradients) +
           ", momentum " + FormatByteSize(estimate.optimizer) + ", EST slots " +
           FormatByteSize(estimate.est_slots) + ", then activations " +
           FormatByteSize(estimate.activations) + " or exchange " +
           FormatByteSize(estimate.exchange) + "), the budget is " + FormatByteSize(budget) +
           (request.device_memory_bytes > 0 ? " (train.device_memory)" : " (node memory / ranks)");
  }
  const double host = estimate.host * std::max(1, allocation.workers_per_node);
  if (allocation.mem_bytes_per_node > 0 && host > allocation.mem_bytes_per_node) {
    return "its host shards need " + FormatByteSize(host) + " per node, the node has " +
           FormatByteSize(allocation.mem_bytes_per_node);
  }
  return {};
}

}  // namespace elastic::agent
