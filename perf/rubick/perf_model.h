// Rubick's performance model (Zhang et al., "Rubick", §4): predicted iteration time and
// throughput of a training job for any execution plan and resource allocation, from a model
// description, the resources, and 7 fitted parameters (Table 1). docs/perf-model.md holds the
// equations, what is measured and what is assumed.
// Pure: no I/O, no clocks, no globals; every function is thread-safe. Errors: Result<T>.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "perf/rubick/plan.h"

namespace elastic::perf {

// How data-parallel workers combine their gradients, which sets V_dp (§4.1). Rubick assumes a
// ring all-reduce (NCCL). The EST runtime gathers gradients instead, so that every rank folds them
// in one fixed order (docs/consistency.md): one partial sum per rank under d0, and every EST's own
// gradient under d1, d2 and statistical, a volume that grows with the ESTs a rank hosts.
enum class GradientExchange {
  kRingAllReduce,  // Rubick: V_dp = 2 S (d-1) / d, also ZeRO's reduce-scatter + all-gather
  kRankPartials,   // all-gather of d rank-order partial sums: S (d-1)
  kEstSlots,       // all-gather of all E = a d EST gradients: S a (d-1); ZeRO: S (d-1) (a+1) / d
};
inline constexpr std::array<GradientExchange, 3> kGradientExchanges = {
    GradientExchange::kRingAllReduce, GradientExchange::kRankPartials, GradientExchange::kEstSlots};
std::string_view GradientExchangeName(GradientExchange exchange);  // "ring-all-reduce", ...

// What the model knows about the network being trained (Table 1 "Job Model" and "Others").
struct ModelDesc {
  double params = 0;     // P: parameter count
  int layers = 1;        // l
  int seq_len = 0;       // s (tokens per sample); 0 = not a sequence model: no TP/PP plans
  int hidden = 0;        // h (hidden size); 0 = no TP/PP plans (V_tp, V_pp need s and h)
  int global_batch = 1;  // b: samples per iteration, fixed across reconfiguration (§3)
  // Forward time of the whole model for one sample on one GPU (§4.1: measured by the profiler and
  // scaled linearly to the per-GPU batch). When 0, fwd_flops_per_sample / Resources::gpu_flops.
  double fwd_s_per_sample = 0;
  double fwd_flops_per_sample = 0;
  // Activation memory stored for the backward pass, all layers, per sample, without GC.
  double activation_bytes_per_sample = 0;
  // Activation memory GC keeps per layer and sample (the layer's input); 0 = s * h *
  // activation_elem_bytes, the transformer layer input.
  double gc_checkpoint_bytes_per_sample_layer = 0;
  // Model-state bytes per parameter: mixed-precision Adam keeps fp16 weights and gradients and
  // fp32 master weights, momentum and variance (2 + 2 + 12 = 16, ZeRO paper §3).
  double weight_bytes = 2;
  double grad_bytes = 2;  // also the bytes per gradient element on the wire (V_dp, T_off)
  double optimizer_bytes = 12;
  double activation_elem_bytes = 2;  // bytes per activation element on the wire (V_tp, V_pp)
  GradientExchange gradient_exchange = GradientExchange::kRingAllReduce;
  // How the work divides when a plan splits the model (measured by `elastic-agent profile`; the
  // defaults are §4.1's assumptions). tp_unsplit_share: the share of a pass's per-sample time that
  // every TP rank runs whole (embeddings, the head and loss, LayerNorms); 0 = all of it divides
  // by t. block_shares: each of the l blocks' share of a forward-and-backward pass (summing to
  // 1), which sets PP's slowest stage; empty = equal stages.
  double tp_unsplit_share = 0;
  std::vector<double> block_shares;

  bool Supports3d() const { return seq_len > 0 && hidden > 0; }
};

// A pass of the whole model over one micro-batch of n samples: T(n) = s_per_pass + n * s_per_sample
// (the profiler's line through two timed batch sizes). For the backward pass (Resources::backward)
// the fixed part is the autograd engine's start and a dispatch per gradient. A second thread
// speeds the backward pass less than the forward (fmnist_cnn on 2 CPU threads: 1.28x vs 1.46x),
// and its fixed part is not k_bwd times the forward's (0.33-0.42 ms vs 0.21-0.30 ms, 1 thread).
struct PassTime {
  double s_per_pass = 0;
  double s_per_sample = 0;
};

// The resources a plan runs on (Table 1 "Resources" and "Environment").
// GPUs are packed gpus_per_node to a node in rank order (the last node may hold fewer), and ranks
// are laid out Megatron-style: TP innermost, then DP, then PP (rank = i_t + t * (i_d + d * i_p)).
struct Resources {
  int gpus = 1;           // g
  int gpus_per_node = 8;  // packing granularity
  int cpus = 0;           // CPU threads for the whole job (c per worker <= cpus / g)
  // Usable device memory per GPU (after the framework's own reserve) and host memory of the whole
  // job; 0 = unknown, not checked (memory.h).
  double gpu_mem_bytes = 0;
  double host_mem_bytes = 0;
  double b_intra = 0;    // bytes/s between two GPUs of one node (NVLink)
  double b_inter = 0;    // bytes/s between GPUs of different nodes
  double b_pcie = 0;     // bytes/s between one GPU and host memory
  double gpu_flops = 0;  // effective FLOP/s per GPU; only read when fwd_s_per_sample is 0
  // Fixed seconds of one forward pass of the whole model over one micro-batch, whatever its size
  // (kernel launches, synchronisation; measured by the profiler as the intercept of the forward
  // time at two batch sizes). 0 = the forward time is linear in the batch, as in §4.1.
  double fwd_s_per_pass = 0;
  // The backward pass of the whole model as the profiler timed it (our addition): set, T_bwd is
  // k_bwd times it instead of k_bwd times T_fwd. Unset (files before it), §4.1 as written.
  std::optional<PassTime> backward;

  int Nodes() const { return gpus_per_node > 0 ? (gpus + gpus_per_node - 1) / gpus_per_node : 0; }
};

// The 7 fittable parameters of Table 1, with plausible starting values.
struct PerfParams {
  double k_bwd = 2.0;       // T_bwd / T_fwd (§4.1)
  double k_sync = 2.0;      // overlap exponent: backward pass vs DP gradient sync (§4.1, §4.3)
  double k_opt = 1e-11;     // GPU optimizer seconds per parameter a GPU updates (§4.2)
  double k_opt_off = 1e-9;  // CPU optimizer seconds x threads per parameter (§4.2)
  double k_off = 2.0;       // overlap exponent: DP gradient sync vs offload transfer (§4.2)
  double k_swap = 2.0;      // overlap exponent: CPU optimizer step vs offload transfer (§4.2)
  double k_const = 0.0;     // constant per-iteration overhead in seconds (Eq. 1)
};
inline constexpr int kNumPerfParams = 7;
using ParamVector = std::array<double, kNumPerfParams>;
ParamVector ToVector(const PerfParams& params);  // in the order above
PerfParams FromVector(const ParamVector& values);
std::string_view ParamName(int index);  // "k_bwd", ... ; REQUIRES: 0 <= index < 7

// Every term of Eq. (1) for one plan, in seconds (fwd, bwd: one GA step / one pass of the
// pipeline; the rest per iteration), and the resulting throughput.
struct IterationTime {
  double fwd = 0;         // T_fwd
  double bwd = 0;         // T_bwd
  double comm_dp = 0;     // T_comm_dp
  double comm_tp = 0;     // T_comm_tp
  double comm_pp = 0;     // T_comm_pp
  double opt = 0;         // T_opt
  double off = 0;         // T_off
  double cc = 0;          // T_cc: computation combined with communication
  double oo = 0;          // T_oo: optimizer combined with offloading
  double iter = 0;        // T_iter = T_cc + T_oo + k_const
  double throughput = 0;  // samples/s = b / T_iter
};

// Bandwidth each communication dimension sees: the bottleneck among its groups (§4.1).
struct GroupBandwidths {
  double dp = 0;
  double tp = 0;
  double pp = 0;
};

// f_overlap^k(x, y) = (x^k + y^k)^(1/k) (§4.3, after Pollux): x + y at k = 1, -> max(x, y) as
// k -> inf. REQUIRES: x, y >= 0, k >= 1 (smaller k is evaluated but means "worse than serial").
double OverlapTime(double x, double y, double k);

// Seconds to run the whole model forward for one sample on one GPU; 0 if neither a measured time
// nor FLOPs with a device rate is given.
double ForwardSecondsPerSample(const ModelDesc& model, const Resources& resources);

GroupBandwidths Bandwidths(const Resources& resources, const ExecutionPlan& plan);

// The share of one rank's per-sample pass time under TP degree t: u + (1 - u) / t, u being
// model.tp_unsplit_share (1 / t when u = 0, as in §4.1).
double TensorParallelShare(const ModelDesc& model, int t);

// A pipeline pass of m micro-batches over p stages, in units of the whole model's time for one
// micro-batch: the stages' sum for the first micro-batch, then the slowest stage for each other
// one, 1 + (m - 1) f_max, where stage s runs blocks [s l / p, (s + 1) l / p) (§4.1's equal
// stages give f_max = 1 / p, i.e. (m + p - 1) / p).
double PipelinePassFactor(const ModelDesc& model, int p, int m);

// V_dp: the bytes one data-parallel worker exchanges per iteration to combine gradients (and,
// under ZeRO, to gather the updated parameters); 0 when d = 1.
double DataParallelBytes(const ModelDesc& model, const ExecutionPlan& plan);

// Why `plan` cannot run `model` on `resources` (structure only, not memory); empty if it can.
std::string CheckPlan(const ModelDesc& model, const Resources& resources,
                      const ExecutionPlan& plan);

// Eq. (1) with every term; fails with CheckPlan's reason for an invalid plan.
Result<IterationTime> PredictIteration(const ModelDesc& model, const Resources& resources,
                                       const ExecutionPlan& plan, const PerfParams& params);

}  // namespace elastic::perf
