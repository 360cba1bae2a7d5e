// Small hand-checkable profiles for the burst split tests. Round numbers: bandwidth 1e9 B/s,
// so 1e6 bytes take 1 ms; times are given in milliseconds.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "perf/burst/profile.h"

namespace elastic::burst::testing {

// `inputs`: indices of earlier layers; {} = the previous layer (none for the first).
inline Layer MakeLayer(std::string name, std::vector<std::pair<int, double>> batch_ms,
                       double param_bytes, double output_bytes_per_sample,
                       std::vector<int> inputs = {}) {
  Layer layer;
  layer.name = std::move(name);
  layer.inputs = std::move(inputs);
  for (auto [batch, ms] : batch_ms) layer.compute.push_back({batch, ms * 1e-3});
  layer.param_bytes = param_bytes;
  layer.output_bytes_per_sample = output_bytes_per_sample;
  return layer;
}

inline ModelProfile MakeProfile(int global_batch, double latency_ms, std::vector<Layer> layers) {
  ModelProfile profile;
  profile.name = "test";
  profile.global_batch = global_batch;
  profile.network.bandwidth_bytes_per_s = 1e9;
  profile.network.latency_s = latency_ms * 1e-3;
  for (size_t i = 0; i < layers.size(); ++i) {
    if (i > 0 && layers[i].inputs.empty()) layers[i].inputs.push_back(static_cast<int>(i) - 1);
  }
  profile.layers = std::move(layers);
  return profile;
}

}  // namespace elastic::burst::testing
