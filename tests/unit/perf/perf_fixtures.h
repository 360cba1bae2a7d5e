// Models, nodes and parameters shared by the perf/rubick tests.
#pragma once

#include "perf/rubick/perf_model.h"
#include "perf/rubick/planner.h"

namespace elastic::perf::testing {

inline constexpr double kGB = 1e9;

// Round numbers, so expected values can be worked out by hand in the tests.
inline ModelDesc SmallModel() {
  ModelDesc m;
  m.params = 1e8;
  m.layers = 4;
  m.seq_len = 128;
  m.hidden = 256;
  m.global_batch = 8;
  m.fwd_s_per_sample = 0.01;
  m.activation_bytes_per_sample = 1e8;
  return m;
}

inline Resources OneNode(int gpus, int gpus_per_node = 8) {
  Resources r;
  r.gpus = gpus;
  r.gpus_per_node = gpus_per_node;
  r.cpus = 16 * gpus;
  r.b_intra = 1e10;
  r.b_inter = 1e9;
  r.b_pcie = 5e9;
  return r;
}

inline PerfParams RoundParams() {
  PerfParams k;
  k.k_bwd = 2.0;
  k.k_sync = 2.0;
  k.k_opt = 1e-10;
  k.k_opt_off = 1e-9;
  k.k_off = 2.0;
  k.k_swap = 2.0;
  k.k_const = 0.05;
  return k;
}

// RoBERTa-large-like (355M parameters, 24 layers, s = 512, h = 1024) with a global batch of 64.
inline ModelDesc RobertaLike() {
  ModelDesc m;
  m.params = 3.55e8;
  m.layers = 24;
  m.seq_len = 512;
  m.hidden = 1024;
  m.global_batch = 64;
  m.fwd_s_per_sample = 0.012;
  m.activation_bytes_per_sample = 0.8 * kGB;
  return m;
}

// An A800-like node: 8 x 80 GB GPUs, NVLink 200 GB/s, 100 Gb/s network, PCIe 4 GB/s per GPU.
inline NodeSpec A800Like() {
  NodeSpec n;
  n.gpus_per_node = 8;
  n.cpus_per_node = 96;
  n.gpu_mem_bytes = 80 * kGB;
  n.host_mem_bytes_per_node = 1600 * kGB;
  n.b_intra = 200e9;
  n.b_inter = 12.5e9;
  n.b_pcie = 4e9;
  return n;
}

}  // namespace elastic::perf::testing
