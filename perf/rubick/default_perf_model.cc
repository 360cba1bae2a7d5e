// The table of built-in model descriptions.
#include "perf/rubick/default_perf_model.h"

#include <string>

namespace elastic::agent {
namespace {

// fmnist_cnn (agent/model/fmnist_cnn.cc): conv1 1->16 5x5, conv2 16->32 5x5, fc1 512->128,
// fc2 128->10 = 416 + 12,832 + 65,664 + 1,290 parameters in 4 blocks.
constexpr double kFmnistCnnParams = 80'202;
constexpr int kFmnistCnnBlocks = 4;

// What the CPU agent trains with, and the cluster it assumes without measurements.
void AgentDefaults(perf::FittedModel& m) {
  // The agent trains in fp32 with SGD + momentum: 4-byte weights, gradients (also on the wire)
  // and one 4-byte momentum buffer.
  m.model.weight_bytes = 4;
  m.model.grad_bytes = 4;
  m.model.optimizer_bytes = 4;
  m.model.activation_elem_bytes = 4;
  // Assumed, not measured: shared memory inside a node, 10 Gb/s Ethernet between nodes, and a
  // memory copy for "offload" (the CPU build's device is the host).
  m.b_intra = 10e9;
  m.b_inter = 1.25e9;
  m.b_pcie = 10e9;
}

perf::FittedModel FmnistCnn() {
  perf::FittedModel m;
  AgentDefaults(m);
  m.model_name = "fmnist_cnn";
  m.model.params = kFmnistCnnParams;
  m.model.layers = kFmnistCnnBlocks;
  // PP's activation message (V_pp = 2 p b s h / (d t)): as the profiler describes a CNN, s = 1
  // and h = the floats per sample its middle block boundary passes (conv2's 32x4x4 output).
  m.model.seq_len = 1;
  m.model.hidden = 512;
  // design.md §7: ~1,800 samples/s training at 1 thread, i.e. (1 + k_bwd) * T_fwd per sample
  // = 1/1,800 s with the default k_bwd = 2.
  m.model.fwd_s_per_sample = 1.0 / (1'800.0 * 3.0);
  // Activations kept for backward, fp32: conv/pool maps 16x24x24 + 16x12x12 + 32x8x8 + 32x4x4
  // and the fc outputs, about 14.2k floats per sample.
  m.model.activation_bytes_per_sample = 14'218.0 * 4;
  // What gc keeps per block and sample: the block's input (784, 16x12x12, 32x4x4 and 128
  // floats for the four blocks), their mean.
  m.model.gc_checkpoint_bytes_per_sample_layer =
      (784.0 + 2'304.0 + 512.0 + 128.0) / kFmnistCnnBlocks * 4;
  return m;  // params: PerfParams' defaults; points = 0 marks it as not fitted
}

}  // namespace

std::optional<perf::FittedModel> BuiltInPerfModel(std::string_view model_name) {
  if (model_name == "fmnist_cnn") return FmnistCnn();
  return std::nullopt;
}

perf::FittedModel BootstrapPerfModel(std::string_view model_name, double params, int blocks) {
  perf::FittedModel m;
  AgentDefaults(m);
  m.model_name = std::string(model_name);
  m.model.params = params;
  m.model.layers = blocks;
  m.model.fwd_s_per_sample = 1e-3;  // a placeholder: calibrated by the first measurement
  return m;
}

ModelShape BuiltInModelShape(std::string_view model_name) {
  if (model_name == "fmnist_cnn") return {kFmnistCnnBlocks, 0};
  // gpt (agent/model/gpt.h): kGptLayers + 2 = 4 blocks, kGptHeads = 4. No timing description
  // yet: without train.perf_model a gpt job runs its requested plan.
  if (model_name == "gpt") return {4, 4};
  return {};
}

}  // namespace elastic::agent
