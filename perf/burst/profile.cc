// Validation of a ModelProfile before the burst split trusts its numbers.
#include "perf/burst/profile.h"

#include <cmath>
#include <set>

namespace elastic::burst {
namespace {

std::string LayerLabel(const ModelProfile& profile, size_t index) {
  return "layer " + std::to_string(index) + " (\"" + profile.layers[index].name + "\")";
}

bool FiniteNonNegative(double value) { return std::isfinite(value) && value >= 0.0; }

std::string ValidateLayer(const ModelProfile& profile, size_t index,
                          std::set<std::string>& names) {
  const Layer& layer = profile.layers[index];
  const std::string label = LayerLabel(profile, index);
  if (layer.name.empty()) return "layer " + std::to_string(index) + ": empty name";
  if (!names.insert(layer.name).second) return label + ": duplicate layer name";
  if (index == 0 && !layer.inputs.empty()) return label + ": the first layer cannot have inputs";
  if (index > 0 && layer.inputs.empty()) {
    return label + ": no inputs; only the first layer reads the input data";
  }
  std::set<int> seen;
  for (int input : layer.inputs) {
    if (input < 0 || static_cast<size_t>(input) >= index) {
      return label + ": input index " + std::to_string(input) +
             " must name an earlier layer (layers are in topological order)";
    }
    if (!seen.insert(input).second) {
      return label + ": input \"" + profile.layers[input].name + "\" listed twice";
    }
  }
  if (layer.compute.empty()) return label + ": compute table is empty";
  int previous_batch = 0;
  for (const ComputePoint& point : layer.compute) {
    if (point.batch <= previous_batch) {
      return label + ": compute batch " + std::to_string(point.batch) +
             ": expected an integer > " + std::to_string(previous_batch) +
             " (batches strictly increasing, >= 1)";
    }
    if (!std::isfinite(point.seconds) || point.seconds <= 0.0) {
      return label + ": compute time at batch " + std::to_string(point.batch) +
             ": expected a finite time > 0";
    }
    previous_batch = point.batch;
  }
  if (!FiniteNonNegative(layer.param_bytes)) return label + ": param bytes: expected >= 0";
  if (!FiniteNonNegative(layer.output_bytes_per_sample)) {
    return label + ": output bytes per sample: expected >= 0";
  }
  return {};
}

}  // namespace

std::string ValidateProfile(const ModelProfile& profile) {
  if (profile.global_batch < 1) {
    return "global batch " + std::to_string(profile.global_batch) + ": expected an integer >= 1";
  }
  const NetworkModel& net = profile.network;
  if (!std::isfinite(net.bandwidth_bytes_per_s) || net.bandwidth_bytes_per_s <= 0.0) {
    return "network bandwidth: expected a finite value > 0";
  }
  if (!FiniteNonNegative(net.latency_s)) return "network latency: expected a finite value >= 0";
  if (profile.layers.empty()) return "no layers";
  std::set<std::string> names;
  for (size_t i = 0; i < profile.layers.size(); ++i) {
    std::string error = ValidateLayer(profile, i, names);
    if (!error.empty()) return error;
  }
  return {};
}

}  // namespace elastic::burst
