// The measurements `elastic-agent profile` takes besides whole training runs (Rubick §4.1/§4.3:
// the forward time per sample is profiled, the bandwidths are measured on the machine): one
// worker's forward pass with the real model on real Fashion-MNIST, host memory copy bandwidth
// (B_pcie of a CPU build: the offloaded update moves gradients within host memory) and
// point-to-point bandwidth between two MPI ranks (B_intra). Includes no LibTorch header.
// Errors: TrainingError; LibTorch failures as c10::Error; PeerLostError from the Communicator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "agent/comm/communicator.h"
#include "agent/config/job_config.h"
#include "agent/profile/host_speed.h"

namespace elastic::agent {

// What the performance model needs to know about the job's model (ModelDesc).
struct ModelFacts {
  double params = 0;  // parameter count of the real model
  int blocks = 0;     // Model::BlockCount (the pipeline-stage granularity, Rubick's l)
  // Floats per sample each block outputs (the tensor a pipeline stage boundary after that block
  // moves); block_outputs[i] is block i's.
  std::vector<double> block_outputs;
  // Positions per sample: a sequence model's sample is [s] tokens (gpt); 1 for images.
  int seq_len = 1;
};

// Builds the job's model (seeded as the trainer seeds it) and runs one real sample of its
// training set (Fashion-MNIST or the text corpus, LoadTrainingSet) through its blocks.
ModelFacts InspectModel(const JobConfig& config);

// Seconds per sample of the model's training-mode forward passes over the job's per-EST
// micro-batch (`full`) and, when `half_too`, over half of it (`half`, passes alternating with the
// full ones so that a drift of the machine reaches both alike), on the job's train.device, with
// `threads` intra-op threads, after `warmup` unmeasured passes of each: one entry per each of the
// `reps` measured passes, with the host probe's time just before it when `host_probe` (else 0).
// Each forward pass is followed by a timed backward pass (of the logits' mean: the loss's own
// few operations aside, a training step's backward), whose seconds per sample go beside it.
struct PassTimings {
  std::vector<Probed> full;
  std::vector<Probed> half;  // empty unless half_too
  std::vector<Probed> full_backward;
  std::vector<Probed> half_backward;  // empty unless half_too
};
PassTimings MeasurePasses(const JobConfig& config, int threads, bool half_too, int warmup, int reps,
                          bool host_probe);

// Median bytes/s of memcpy between two host buffers of `bytes` bytes over `reps` copies.
double MeasureHostCopyBandwidth(std::size_t bytes, int reps);

// Median bytes/s between pinned host memory and the job's GPU (train.device = "cuda"): one copy
// of `bytes` bytes each way per repetition (ZeRO-Offload moves gradients down and parameters up).
double MeasureDeviceCopyBandwidth(const JobConfig& config, std::size_t bytes, int reps);

// Point-to-point bandwidth between ranks 0 and 1 (bytes/s): median over `reps` ping-pongs of
// `bytes` each way (Communicator::Send/Receive, what a ring step or a pipeline boundary uses).
// Collective: every rank calls it; ranks other than 0 and 1 only wait. Every rank returns rank
// 0's value. REQUIRES: world.size() >= 2.
double MeasurePeerBandwidth(Communicator& world, std::size_t bytes, int reps);

}  // namespace elastic::agent
