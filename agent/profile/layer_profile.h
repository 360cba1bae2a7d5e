// `elastic-agent profile-layers`: per-layer forward + backward times of a real LibTorch model
// (agent/model/layer_graph_model.h) at several per-worker batches, written as the burst
// planner's elastic-burst-profile/1 JSON (docs/burst-planner.md).
//
// Each layer is timed alone: its inputs are detached tensors of the real shapes that require
// grad (the image for the first layer does not), the backward pass starts from a gradient of
// ones on its output, parameter and input gradients are cleared before every repetition; the
// median of `reps` repetitions after `warmup` is recorded. The model is in training mode (batch
// statistics, dropout) except for a batch where a batch norm would see one value per channel,
// which is timed in eval mode (logged). Errors: UsageError for bad options,
// std::runtime_error for a file that cannot be written.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "agent/model/layer_graph_model.h"
#include "perf/burst/profile.h"

namespace elastic::agent {

struct LayerProfileOptions {
  std::string model;           // a LayerGraphModelNames() name
  std::vector<int> batches;    // per-worker batches, strictly increasing, >= 1
  int64_t image_size = 0;      // 0: the model's own (224, 299, 28)
  int64_t classes = 0;         // 0: the model's own (1000; fmnist_cnn 10)
  int global_batch = 0;        // 0: the largest of `batches`
  double bandwidth_gbps = 200.0;  // per GPU, each direction (from `elastic-agent profile`)
  double latency_us = 10.0;
  int reps = 5;
  int warmup = 2;
  int threads = 1;             // LibTorch intra-op threads while timing
  uint64_t seed = 1;           // weights and inputs
  std::string out_path;
};

// The profile of `model` (already built and seeded) under `options`; progress lines to `log`.
burst::ModelProfile ProfileLayers(LayerGraphModel& model, const LayerProfileOptions& options,
                                  std::ostream& log);

// Builds options.model, profiles it and writes options.out_path (temp file + rename); one
// summary line to `out`.
void RunLayerProfileCommand(const LayerProfileOptions& options, std::ostream& out);

}  // namespace elastic::agent
