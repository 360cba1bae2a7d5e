// A model's layer profile as the burst split sees it (DeepPool §4.1): per-layer
// compute tables, parameter and activation sizes, the layer graph and the network model.
//
// Units inside the library are seconds and bytes (the JSON reader converts from ms, µs, Gbit/s).
// Plain values: no I/O, no clocks; a const ModelProfile may be shared between threads.
#pragma once

#include <string>
#include <vector>

namespace elastic::burst {

// One measurement: forward + backward time of a layer at one per-worker batch size.
struct ComputePoint {
  int batch = 1;         // samples per worker
  double seconds = 0.0;  // forward + backward, > 0
};

struct Layer {
  std::string name;
  // Indices of the layers whose outputs this layer consumes; each < this layer's index (the
  // vector is in topological order). Empty only for the first layer, which reads the input data.
  std::vector<int> inputs;
  std::vector<ComputePoint> compute;  // batch strictly increasing, at least one point
  double param_bytes = 0.0;           // gradient bytes all-reduced after the backward pass
  double output_bytes_per_sample = 0.0;  // activation this layer hands to its consumers
};

// DeepPool §4.1: "full bi-section networking ... per-GPU bandwidth and minimum propagation
// delay"; a transfer takes payload / bandwidth + latency.
struct NetworkModel {
  double bandwidth_bytes_per_s = 25e9;  // per GPU, each direction
  double latency_s = 10e-6;
};

struct ModelProfile {
  std::string name;
  int global_batch = 1;  // samples per iteration, split over the GPUs of each layer
  NetworkModel network;
  std::vector<Layer> layers;  // topological order: every input precedes its consumer
};

// Empty when the profile is usable; otherwise one message naming the layer, the field, the
// value and what was expected. Graph shape (series-parallel) is checked by DecomposeGraph.
std::string ValidateProfile(const ModelProfile& profile);

}  // namespace elastic::burst
