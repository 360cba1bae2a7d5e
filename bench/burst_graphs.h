// Synthetic but architecture-exact layer profiles for the burst split benchmark: VGG-16,
// WideResNet-101-2 and Inception-v3 as in torchvision (shapes, FLOPs, parameters and activation
// sizes follow from the real layer shapes), with forward + backward times from a FLOPs/throughput
// device model instead of measurements. Not part of the burst split library.
//
// Layer granularity: a convolution with its batch norm and ReLU is one layer; pools, the residual
// add (+ ReLU) and concatenations are layers of their own. Residual blocks and Inception modules
// are branch/join blocks; Inception-v3's auxiliary classifier (training-only side output) is left
// out. fp32 throughout: 4 bytes per parameter and per activation element.
#pragma once

#include <string>

#include "perf/burst/profile.h"

namespace elastic::bench {

// ASSUMED device model (an A100-class GPU with TF32 and CUDA graphs), one layer's forward +
// backward at per-worker batch b with f forward FLOPs and m activation bytes per sample:
//   t(b) = overhead + max(3 f b / (peak * max_util * u), 3 (m b + param bytes) / memory_bw),
//   u = f b / (f b + half_util_flops)   (small kernels leave the GPU underutilised, §2 Fig. 4),
// backward = 2x forward in FLOPs and memory traffic.
struct DeviceModel {
  double peak_flops = 156e12;   // TF32 dense peak
  double max_utilization = 0.45;
  double half_util_flops = 0.5e9;
  double memory_bytes_per_s = 1.5e12;
  double layer_overhead_s = 10e-6;  // forward + backward launches per layer under CUDA graphs
};

// Profiled per-worker batches: powers of two from 1 to global_batch, plus global_batch itself.
burst::ModelProfile Vgg16(int global_batch, const burst::NetworkModel& network,
                          const DeviceModel& device = {});
burst::ModelProfile WideResNet101_2(int global_batch, const burst::NetworkModel& network,
                                    const DeviceModel& device = {});
burst::ModelProfile InceptionV3(int global_batch, const burst::NetworkModel& network,
                                const DeviceModel& device = {});

// Sum of param_bytes / 4: the model's parameter count (torchvision: VGG-16 138,357,544;
// WideResNet-101-2 126,886,696; Inception-v3 without the auxiliary head 23,834,568).
double ParameterCount(const burst::ModelProfile& profile);

}  // namespace elastic::bench
