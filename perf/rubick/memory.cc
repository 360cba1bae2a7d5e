// Per-plan memory estimate: model states (ZeRO partitioning, offload) plus activations (GA, PP
// micro-batches in flight, GC checkpoints).
#include "perf/rubick/memory.h"

#include <algorithm>
#include <cstdio>

namespace elastic::perf {
namespace {

double ModelStates(const ModelDesc& model, const ExecutionPlan& plan) {
  const double w = model.weight_bytes, g = model.grad_bytes, o = model.optimizer_bytes;
  const double d = plan.dp;
  // ZeRO-Offload: only the fp16 weights stay on the GPU; gradients stream to the host, where the
  // fp32 master weights and Adam moments live (Ren et al., ZeRO-Offload §4).
  if (plan.offload) return model.params * w;
  // ZeRO (Rajbhandari et al. §5): stage 1 partitions optimizer states over d, stage 2 also the
  // gradients; weights stay replicated.
  if (plan.zero_stage == 1) return model.params * (w + g + o / d);
  if (plan.zero_stage == 2) return model.params * (w + (g + o) / d);
  // 3D parallelism partitions all model states over the t*p model shards (§4.2).
  return model.params * (w + g + o) / (plan.tp * plan.pp);
}

double Activations(const ModelDesc& model, const ExecutionPlan& plan) {
  const double samples = static_cast<double>(model.global_batch) /
                         (static_cast<double>(plan.dp) * plan.ga_steps * plan.micro_batches);
  const double stage_layers = static_cast<double>(model.layers) / plan.pp;  // l / p, p | l
  // 1F1B: the first stage holds up to p micro-batches before its first backward pass.
  const double in_flight = plan.pp > 1 ? std::min(plan.pp, plan.micro_batches) : 1;
  const double per_layer = model.activation_bytes_per_sample / model.layers;
  if (!plan.gc) return per_layer * stage_layers * samples / plan.tp * in_flight;
  // GC keeps each layer's input (replicated across TP ranks) for every micro-batch in flight, and
  // rebuilds one layer's full activations at a time during the backward pass.
  double checkpoint =
      model.gc_checkpoint_bytes_per_sample_layer > 0
          ? model.gc_checkpoint_bytes_per_sample_layer
          : static_cast<double>(model.seq_len) * model.hidden * model.activation_elem_bytes;
  return checkpoint * stage_layers * samples * in_flight + per_layer * samples / plan.tp;
}

std::string GiB(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return text;
}

}  // namespace

MemoryEstimate EstimateMemory(const ModelDesc& model, const ExecutionPlan& plan) {
  MemoryEstimate estimate;
  estimate.states = ModelStates(model, plan);
  estimate.activations = Activations(model, plan);
  estimate.gpu_total = estimate.states + estimate.activations;
  if (plan.offload) estimate.host_total = model.params * (model.grad_bytes + model.optimizer_bytes);
  return estimate;
}

std::string CheckMemory(const ModelDesc& model, const Resources& resources,
                        const ExecutionPlan& plan) {
  const MemoryEstimate need = EstimateMemory(model, plan);
  if (resources.gpu_mem_bytes > 0 && need.gpu_total > resources.gpu_mem_bytes) {
    return "perf: plan " + Describe(plan) + ": needs " + GiB(need.gpu_total) + " per GPU (states " +
           GiB(need.states) + ", activations " + GiB(need.activations) + "), the GPUs have " +
           GiB(resources.gpu_mem_bytes);
  }
  if (resources.host_mem_bytes > 0 && need.host_total > resources.host_mem_bytes) {
    return "perf: plan " + Describe(plan) + ": needs " + GiB(need.host_total) +
           " of host memory, the job has " + GiB(resources.host_mem_bytes);
  }
  return {};
}

}  // namespace elastic::perf
