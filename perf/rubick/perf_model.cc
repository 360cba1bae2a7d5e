// Rubick §4 performance model: Eq. (1) and its terms (§4.1-§4.3).
#include "perf/rubick/perf_model.h"

#include <algorithm>
#include <cmath>

namespace elastic::perf {
namespace {

constexpr std::array<std::string_view, kNumPerfParams> kParamNames{
    "k_bwd", "k_sync", "k_opt", "k_opt_off", "k_off", "k_swap", "k_const"};

// Whether any communication group {q, q + stride, ..., q + stride * (size - 1)} of a dimension
// crosses a node boundary. Groups tile the ranks in blocks of stride * size.
bool AnyGroupSpansNodes(int gpus, int gpus_per_node, int stride, int size) {
  const int block = stride * size;
  for (int base = 0; base + block <= gpus; base += block) {
    for (int q = base; q < base + stride; ++q) {
      int last = q + stride * (size - 1);
      if (q / gpus_per_node != last / gpus_per_node) return true;
    }
  }
  return false;
}

double GroupBandwidth(const Resources& resources, int stride, int size) {
  if (size <= 1) return 0;  // no communication in this dimension
  bool spans = AnyGroupSpansNodes(resources.gpus, resources.gpus_per_node, stride, size);
  return spans ? resources.b_inter : resources.b_intra;
}

std::string PlanPrefix(const ExecutionPlan& plan) { return "perf: plan " + Describe(plan) + ": "; }

std::string CheckDegrees(const ModelDesc& model, const Resources& resources,
                         const ExecutionPlan& plan) {
  const std::string at = PlanPrefix(plan);
  if (plan.dp < 1 || plan.tp < 1 || plan.pp < 1 || plan.ga_steps < 1 || plan.micro_batches < 1) {
    return at + "degrees, GA steps and micro-batches must all be >= 1";
  }
  if (plan.Gpus() != resources.gpus) {  // Table 1: d * t * p = g
    return at + "d*t*p = " + std::to_string(plan.Gpus()) + " but the allocation has " +
           std::to_string(resources.gpus) + " GPUs";
  }
  const long split = static_cast<long>(plan.dp) * plan.ga_steps * plan.micro_batches;
  if (model.global_batch % split != 0) {
    return at + "global batch " + std::to_string(model.global_batch) +
           " is not a multiple of d*a*m = " + std::to_string(split);
  }
  if (plan.pp == 1 && plan.micro_batches != 1) return at + "micro-batches need pp > 1 (use GA)";
  if (plan.pp > 1 && plan.ga_steps != 1) return at + "under PP, accumulate with micro-batches";
  if (model.layers % plan.pp != 0) {  // §4.1: PP places the layers evenly over the stages
    return at + "pp " + std::to_string(plan.pp) + " does not divide the model's " +
           std::to_string(model.layers) + " layers";
  }
  if ((plan.tp > 1 || plan.pp > 1) && !model.Supports3d()) {
    return at + "TP/PP need the model's seq_len and hidden size";
  }
  if (plan.tp > 1 && model.hidden % plan.tp != 0) {
    return at + "hidden size " + std::to_string(model.hidden) + " is not divisible by tp";
  }
  return {};
}

std::string CheckZero(const Resources& resources, const ExecutionPlan& plan) {
  const std::string at = PlanPrefix(plan);
  if (plan.zero_stage < 0 || plan.zero_stage > 2) {
    return at + "zero stage " + std::to_string(plan.zero_stage) +
           " is outside the model (expected 0, 1 or 2; the paper models ZeRO-2)";
  }
  if ((plan.zero_stage > 0 || plan.offload) && (plan.tp > 1 || plan.pp > 1)) {
    return at + "ZeRO-DP and ZeRO-Offload are DP-based (tp = pp = 1)";
  }
  if (!plan.offload) return {};
  if (plan.zero_stage != 2) return at + "ZeRO-Offload builds on zero stage 2";
  if (plan.cpu_threads < 1) return at + "ZeRO-Offload needs cpu_threads >= 1";
  if (static_cast<long>(plan.cpu_threads) * resources.gpus > resources.cpus) {
    return at + "c*g = " + std::to_string(plan.cpu_threads * resources.gpus) +
           " CPU threads but the allocation has " + std::to_string(resources.cpus);
  }
  if (!(resources.b_pcie > 0)) return at + "ZeRO-Offload needs the PCIe bandwidth b_pcie";
  return {};
}

}  // namespace

ParamVector ToVector(const PerfParams& p) {
  return {p.k_bwd, p.k_sync, p.k_opt, p.k_opt_off, p.k_off, p.k_swap, p.k_const};
}

PerfParams FromVector(const ParamVector& v) { return {v[0], v[1], v[2], v[3], v[4], v[5], v[6]}; }

std::string_view ParamName(int index) { return kParamNames[static_cast<std::size_t>(index)]; }

double OverlapTime(double x, double y, double k) {
  // §4.3: f_overlap^k(T_x, T_y) = (T_x^k + T_y^k)^(1/k), evaluated as max * (1 + r^k)^(1/k)
  // with r = min / max <= 1 so that large k cannot overflow.
  const double hi = std::max(x, y);
  const double lo = std::min(x, y);
  if (hi <= 0) return 0;
  return hi * std::pow(1.0 + std::pow(lo / hi, k), 1.0 / k);
}

double ForwardSecondsPerSample(const ModelDesc& model, const Resources& resources) {
  if (model.fwd_s_per_sample > 0) return model.fwd_s_per_sample;
  if (model.fwd_flops_per_sample > 0 && resources.gpu_flops > 0) {
    return model.fwd_flops_per_sample / resources.gpu_flops;
  }
  return 0;
}

GroupBandwidths Bandwidths(const Resources& resources, const ExecutionPlan& plan) {
  // §4.1 "Modeling T_comm": each kind of communication sees the bottleneck bandwidth among the
  // GPUs it involves: B_intra when every group stays inside a node, B_inter otherwise.
  return {GroupBandwidth(resources, plan.tp, plan.dp), GroupBandwidth(resources, 1, plan.tp),
          GroupBandwidth(resources, plan.tp * plan.dp, plan.pp)};
}

double TensorParallelShare(const ModelDesc& model, int t) {
  const double unsplit = model.tp_unsplit_share;
  return unsplit + (1 - unsplit) / t;
}

double PipelinePassFactor(const ModelDesc& model, int p, int m) {
  if (model.block_shares.empty() || p <= 1) return static_cast<double>(m + p - 1) / p;
  const auto blocks = static_cast<int>(model.block_shares.size());
  double slowest = 0;
  for (int stage = 0; stage < p; ++stage) {
    double share = 0;
    for (int b = stage * blocks / p; b < (stage + 1) * blocks / p; ++b) {
      share += model.block_shares[static_cast<std::size_t>(b)];
    }
    slowest = std::max(slowest, share);
  }
  return 1 + (m - 1) * slowest;
}

std::string CheckPlan(const ModelDesc& model, const Resources& resources,
                      const ExecutionPlan& plan) {
  if (!(model.params > 0) || model.layers < 1 || model.global_batch < 1) {
    return "perf: model: params, layers and global_batch must be positive";
  }
  if (resources.gpus < 1 || resources.gpus_per_node < 1) {
    return "perf: resources: gpus and gpus_per_node must be >= 1";
  }
  if (!(model.tp_unsplit_share >= 0 && model.tp_unsplit_share < 1)) {
    return "perf: model: tp_unsplit_share must be in [0, 1)";
  }
  if (!model.block_shares.empty() && static_cast<int>(model.block_shares.size()) != model.layers) {
    return "perf: model: block_shares has " + std::to_string(model.block_shares.size()) +
           " entries for " + std::to_string(model.layers) + " layers";
  }
  if (!(resources.fwd_s_per_pass >= 0)) return "perf: resources: fwd_s_per_pass must be >= 0";
  if (resources.backward &&
      !(resources.backward->s_per_pass >= 0 && resources.backward->s_per_sample > 0)) {
    return "perf: resources: the backward pass needs bwd_s_per_pass >= 0 and bwd_s_per_sample > 0";
  }
  if (!(ForwardSecondsPerSample(model, resources) > 0)) {
    return "perf: model: no forward time (fwd_s_per_sample, or fwd_flops_per_sample with "
           "gpu_flops)";
  }
  if (std::string why = CheckDegrees(model, resources, plan); !why.empty()) return why;
  if (std::string why = CheckZero(resources, plan); !why.empty()) return why;
  GroupBandwidths bw = Bandwidths(resources, plan);
  if ((plan.dp > 1 && !(bw.dp > 0)) || (plan.tp > 1 && !(bw.tp > 0)) ||
      (plan.pp > 1 && !(bw.pp > 0))) {
    return PlanPrefix(plan) + "a communication group needs b_intra/b_inter > 0";
  }
  return {};
}

std::string_view GradientExchangeName(GradientExchange exchange) {
  switch (exchange) {
    case GradientExchange::kRingAllReduce:
      return "ring-all-reduce";
    case GradientExchange::kRankPartials:
      return "rank-partials";
    case GradientExchange::kEstSlots:
      return "est-slots";
  }
  return "ring-all-reduce";
}

double DataParallelBytes(const ModelDesc& model, const ExecutionPlan& plan) {
  const double d = plan.dp;
  // S: the gradient bytes of one worker's part of the model (its TP shard of its PP stage).
  const double s = model.params * model.grad_bytes / (plan.tp * plan.pp);
  const double ests_per_worker = static_cast<double>(plan.ga_steps) * plan.micro_batches;  // a
  switch (model.gradient_exchange) {
    case GradientExchange::kRingAllReduce:
      break;
    case GradientExchange::kRankPartials:
      // Every worker receives the other d - 1 partial sums whole; d0 runs no ZeRO across ranks.
      if (plan.zero_stage == 0) return s * (d - 1);
      break;
    case GradientExchange::kEstSlots:
      // Replicated: every worker gathers the (d - 1) a gradients of the ESTs it does not host.
      // ZeRO: the owner of each 1/d shard receives its piece from those ESTs (an all-to-all),
      // then gathers the others' updated shards: S (d-1) a / d + S (d-1) / d.
      return plan.zero_stage == 0 ? s * ests_per_worker * (d - 1)
                                  : s * (d - 1) * (ests_per_worker + 1) / d;
  }
  // §4.1: V_dp = P * 2(d-1) / (d*t*p)  (ring all-reduce; also the ZeRO series)
  return s * 2 * (d - 1) / d;
}

Result<IterationTime> PredictIteration(const ModelDesc& model, const Resources& resources,
                                       const ExecutionPlan& plan, const PerfParams& k) {
  if (std::string why = CheckPlan(model, resources, plan); !why.empty()) {
    return Result<IterationTime>::Fail(std::move(why));
  }
  const double b = model.global_batch;
  const double d = plan.dp, t = plan.tp, p = plan.pp, a = plan.ga_steps, m = plan.micro_batches;
  const double s = model.seq_len, h = model.hidden, l = model.layers;
  const double param_bytes = model.params * model.grad_bytes;  // P on the wire (fp16 gradients)
  const GroupBandwidths bw = Bandwidths(resources, plan);
  IterationTime it;

  // §4.1 "Modeling T_fwd": linear in the per-GPU batch b/(d*a*m) and in the TP shard 1/t, plus
  // (our addition) the measured fixed cost of a pass, paid once per micro-batch: on a GPU a small
  // model's pass is mostly kernel launches, so a = 8 micro-batches cost nearly twice a = 4. PP:
  // T_fwd = t_p * g_p / p * (m + p - 1), where t_p * g_p is the whole model's forward time for
  // one micro-batch. Without PP (p = m = 1) this is the per-GA-step forward time. Where the
  // profiler measured how the model splits (ours), TP divides only the split share and PP's
  // slowest stage sets the pipeline's pace (TensorParallelShare, PipelinePassFactor).
  const double tp_share = TensorParallelShare(model, plan.tp);
  const double pipeline = PipelinePassFactor(model, plan.pp, plan.micro_batches);
  const double per_sample_micro =
      ForwardSecondsPerSample(model, resources) * b / (d * a * m) * tp_share;
  it.fwd = (per_sample_micro + resources.fwd_s_per_pass) * pipeline;
  // §4.1 "Modeling T_bwd": T_bwd = k_bwd * T_fwd; GC recomputes the forward pass (+ T_fwd).
  // With the backward pass measured (our addition), T_bwd = k_bwd * that pass, scaled to the
  // micro-batch and the pipeline as T_fwd is: k_bwd then fits what the timed pass leaves out
  // (the loss, the EST's gradient capture) rather than how the backward compares to the forward,
  // which differs between thread counts and devices.
  if (resources.backward) {
    const double backward_micro = resources.backward->s_per_sample * b / (d * a * m) * tp_share +
                                  resources.backward->s_per_pass;
    it.bwd = k.k_bwd * backward_micro * pipeline;
  } else {
    it.bwd = k.k_bwd * it.fwd;
  }
  if (plan.gc) it.bwd += it.fwd;

  // §4.1 "Modeling T_comm": T_comm = V / B; V = 0 when that dimension's size is 1.
  if (plan.dp > 1) it.comm_dp = DataParallelBytes(model, plan) / bw.dp;
  // V_tp = 4 * 2 * (t-1) * b*s*h*l / (d*t)  (4 all-reduces per layer, Megatron)
  if (plan.tp > 1) {
    it.comm_tp = 4 * 2 * (t - 1) * b * s * h * l / (d * t) * model.activation_elem_bytes / bw.tp;
  }
  // V_pp = 2 * p * b*s*h / (d*t)  (1F1B, forward and backward)
  if (plan.pp > 1) it.comm_pp = 2 * p * b * s * h / (d * t) * model.activation_elem_bytes / bw.pp;

  // §4.1 "Combining computation and communication" (3D) and "Gradient Accumulation":
  // T_cc = a*T_fwd + (a-1)*T_bwd + f^{k_sync}(T_bwd, T_comm_dp) + T_comm_tp + T_comm_pp
  // (a = 1 gives the 3D-parallel formula; TP/PP communication is on the critical path).
  it.cc = a * it.fwd + (a - 1) * it.bwd + OverlapTime(it.bwd, it.comm_dp, k.k_sync) + it.comm_tp +
          it.comm_pp;

  // §4.2 "Modeling T_opt": k_opt * P / x with x = t*p (3D) or d (ZeRO-DP); ZeRO-Offload updates
  // on c CPU threads per worker: k_opt_off * P / (d*c).
  if (plan.offload) {
    it.opt = k.k_opt_off * model.params / (d * plan.cpu_threads);
  } else if (plan.zero_stage > 0) {
    it.opt = k.k_opt * model.params / d;
  } else {
    it.opt = k.k_opt * model.params / (t * p);
  }
  // §4.2 "Modeling T_off": T_off = P / (d * B_pcie), P/d being each worker's gradient partition
  // (PCIe is full duplex: the parameters coming back overlap the gradients going down).
  if (plan.offload) it.off = param_bytes / (d * resources.b_pcie);
  // §4.2: T_oo = f^{k_off}(T_comm_dp, T_off) + f^{k_swap}(T_opt, T_off) under ZeRO-Offload,
  // T_oo = T_opt otherwise.
  it.oo = plan.offload
              ? OverlapTime(it.comm_dp, it.off, k.k_off) + OverlapTime(it.opt, it.off, k.k_swap)
              : it.opt;

  // §4.3 Eq. (1): T_iter = T_cc + T_oo + k_const; THROUGHPUT = b / T_iter (§4).
  it.iter = it.cc + it.oo + k.k_const;
  it.throughput = b / it.iter;
  return Result<IterationTime>::Ok(it);
}

}  // namespace elastic::perf
