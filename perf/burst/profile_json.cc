// JSON profile reader (strict: unknown keys, wrong types and out-of-range values are refused)
// and the JSON rendering of profiles and plans.
#include "perf/burst/profile_json.h"

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace elastic::burst {
namespace {

using nlohmann::json;

constexpr double kBytesPerGbit = 1e9 / 8.0;

class ProfileReader {
 public:
  explicit ProfileReader(std::string name) : name_(std::move(name)) {}

  Result<ModelProfile> Read(std::string_view text) {
    json root;
    try {
      root = json::parse(text);
    } catch (const json::parse_error& error) {
      return Failed(std::string("not valid JSON: ") + error.what());
    }
    if (!ReadRoot(root)) return Failed(error_);
    std::string invalid = ValidateProfile(profile_);
    if (!invalid.empty()) return Failed(invalid);
    return Result<ModelProfile>::Ok(std::move(profile_));
  }

 private:
  Result<ModelProfile> Failed(const std::string& what) const {
    return Result<ModelProfile>::Fail(name_ + ": " + what);
  }

  bool Fail(const std::string& path, const std::string& what) {
    error_ = path + ": " + what;
    return false;
  }

  bool CheckKeys(const json& object, const std::string& path,
                 const std::set<std::string>& required, const std::set<std::string>& optional) {
    if (!object.is_object()) return Fail(path, "expected an object");
    for (const auto& [key, value] : object.items()) {
      if (!required.count(key) && !optional.count(key)) {
        std::string known;
        for (const std::string& k : required) known += (known.empty() ? "" : ", ") + k;
        for (const std::string& k : optional) known += ", " + k;
        return Fail(path, "unknown key \"" + key + "\" (expected: " + known + ")");
      }
    }
    for (const std::string& key : required) {
      if (!object.contains(key)) return Fail(path, "missing key \"" + key + "\"");
    }
    return true;
  }

  bool Number(const json& value, const std::string& path, double minimum, bool inclusive,
              double& out) {
    if (!value.is_number()) return Fail(path, "expected a number, got " + value.dump());
    out = value.get<double>();
    bool ok = std::isfinite(out) && (inclusive ? out >= minimum : out > minimum);
    if (!ok) {
      return Fail(path, "expected a number " + std::string(inclusive ? ">= " : "> ") +
                            Format(minimum) + ", got " + value.dump());
    }
    return true;
  }

  bool Integer(const json& value, const std::string& path, int minimum, int& out) {
    if (!value.is_number_integer() || value.get<long long>() < minimum ||
        value.get<long long>() > 1'000'000'000) {
      return Fail(path, "expected an integer >= " + std::to_string(minimum) + ", got " +
                            value.dump());
    }
    out = static_cast<int>(value.get<long long>());
    return true;
  }

  static std::string Format(double value) {
    std::ostringstream out;
    out << value;
    return out.str();
  }

  bool ReadRoot(const json& root) {
    if (!CheckKeys(root, "$", {"format", "model", "global_batch", "network", "layers"}, {})) {
      return false;
    }
    if (root["format"] != kProfileFormat) {
      return Fail("$.format", "expected \"" + std::string(kProfileFormat) + "\", got " +
                                  root["format"].dump());
    }
    if (!root["model"].is_string()) return Fail("$.model", "expected a string");
    profile_.name = root["model"].get<std::string>();
    if (!Integer(root["global_batch"], "$.global_batch", 1, profile_.global_batch)) return false;
    if (!ReadNetwork(root["network"])) return false;
    const json& layers = root["layers"];
    if (!layers.is_array() || layers.empty()) {
      return Fail("$.layers", "expected a non-empty array of layers");
    }
    for (size_t i = 0; i < layers.size(); ++i) {
      if (!ReadLayer(layers[i], i)) return false;
    }
    return true;
  }

  bool ReadNetwork(const json& network) {
    if (!CheckKeys(network, "$.network", {"bandwidth_gbps", "latency_us"}, {})) return false;
    double gbps = 0.0, latency_us = 0.0;
    if (!Number(network["bandwidth_gbps"], "$.network.bandwidth_gbps", 0.0, false, gbps) ||
        !Number(network["latency_us"], "$.network.latency_us", 0.0, true, latency_us)) {
      return false;
    }
    profile_.network.bandwidth_bytes_per_s = gbps * kBytesPerGbit;
    profile_.network.latency_s = latency_us * 1e-6;
    return true;
  }

  bool ReadLayer(const json& object, size_t index) {
    std::string path = "$.layers[" + std::to_string(index) + "]";
    if (!CheckKeys(object, path, {"name", "param_bytes", "output_bytes_per_sample", "fwd_bwd_ms"},
                   {"inputs"})) {
      return false;
    }
    Layer layer;
    if (!object["name"].is_string() || object["name"].get<std::string>().empty()) {
      return Fail(path + ".name", "expected a non-empty string");
    }
    layer.name = object["name"].get<std::string>();
    path += " (\"" + layer.name + "\")";
    if (index_.count(layer.name)) return Fail(path + ".name", "duplicate layer name");
    if (!Number(object["param_bytes"], path + ".param_bytes", 0.0, true, layer.param_bytes) ||
        !Number(object["output_bytes_per_sample"], path + ".output_bytes_per_sample", 0.0, true,
                layer.output_bytes_per_sample) ||
        !ReadInputs(object, index, path, layer) || !ReadCompute(object["fwd_bwd_ms"], path, layer)) {
      return false;
    }
    index_[layer.name] = static_cast<int>(index);
    profile_.layers.push_back(std::move(layer));
    return true;
  }

  // Default: the previous layer (a chain); the first layer has none.
  bool ReadInputs(const json& object, size_t index, const std::string& path, Layer& layer) {
    if (!object.contains("inputs")) {
      if (index > 0) layer.inputs.push_back(static_cast<int>(index) - 1);
      return true;
    }
    const json& inputs = object["inputs"];
    if (!inputs.is_array()) return Fail(path + ".inputs", "expected an array of layer names");
    for (size_t k = 0; k < inputs.size(); ++k) {
      std::string at = path + ".inputs[" + std::to_string(k) + "]";
      if (!inputs[k].is_string()) return Fail(at, "expected a layer name");
      auto found = index_.find(inputs[k].get<std::string>());
      if (found == index_.end()) {
        return Fail(at, "unknown layer " + inputs[k].dump() +
                            " (inputs must name layers listed before this one)");
      }
      layer.inputs.push_back(found->second);
    }
    return true;
  }

  bool ReadCompute(const json& table, const std::string& path, Layer& layer) {
    std::string at = path + ".fwd_bwd_ms";
    if (!table.is_array() || table.empty()) {
      return Fail(at, "expected a non-empty array of [per-worker batch, milliseconds] pairs");
    }
    for (size_t k = 0; k < table.size(); ++k) {
      std::string item = at + "[" + std::to_string(k) + "]";
      const json& pair = table[k];
      if (!pair.is_array() || pair.size() != 2) {
        return Fail(item, "expected [per-worker batch, milliseconds], got " + pair.dump());
      }
      ComputePoint point;
      double ms = 0.0;
      if (!Integer(pair[0], item + "[0] (batch)", 1, point.batch) ||
          !Number(pair[1], item + "[1] (ms)", 0.0, false, ms)) {
        return false;
      }
      if (!layer.compute.empty() && point.batch <= layer.compute.back().batch) {
        return Fail(item + "[0] (batch)",
                    "expected batches in increasing order, got " + std::to_string(point.batch) +
                        " after " + std::to_string(layer.compute.back().batch));
      }
      point.seconds = ms * 1e-3;
      layer.compute.push_back(point);
    }
    return true;
  }

  std::string name_;
  std::string error_;
  ModelProfile profile_;
  std::map<std::string, int> index_;
};

json LayerCostJson(const Layer& layer, const LayerCost& cost) {
  return {{"name", layer.name},
          {"gpus", cost.gpus},
          {"parallel", cost.parallel},
          {"comm_in_ms", cost.comm_in_s * 1e3},
          {"comp_ms", cost.comp_s * 1e3},
          {"sync_ms", cost.sync_s * 1e3},
          {"time_ms", cost.time_s * 1e3},
          {"amplification", cost.amplification}};
}

json SummaryJson(const BurstSplit& split) {
  const PlanCost& cost = split.cost;
  return {{"iteration_ms", cost.iteration_s * 1e3},
          {"single_gpu_ms", cost.single_gpu_s * 1e3},
          {"speedup_vs_one_gpu", cost.single_gpu_s / cost.iteration_s},
          {"gpu_sec", cost.gpu_sec},
          {"amplification", cost.amplification},
          {"max_layer_amplification", cost.max_layer_amplification},
          {"peak_gpus", cost.peak_gpus}};
}

}  // namespace

Result<ModelProfile> ParseProfileJson(std::string_view text, const std::string& name) {
  return ProfileReader(name).Read(text);
}

Result<ModelProfile> LoadProfileJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Result<ModelProfile>::Fail(path + ": cannot open the profile");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseProfileJson(text.str(), path);
}

json ProfileToJson(const ModelProfile& profile) {
  json layers = json::array();
  for (size_t i = 0; i < profile.layers.size(); ++i) {
    const Layer& layer = profile.layers[i];
    json compute = json::array();
    for (const ComputePoint& point : layer.compute) {
      compute.push_back({point.batch, point.seconds * 1e3});
    }
    json inputs = json::array();
    for (int input : layer.inputs) inputs.push_back(profile.layers[input].name);
    layers.push_back({{"name", layer.name},
                      {"inputs", inputs},
                      {"param_bytes", layer.param_bytes},
                      {"output_bytes_per_sample", layer.output_bytes_per_sample},
                      {"fwd_bwd_ms", compute}});
  }
  return {{"format", kProfileFormat},
          {"model", profile.name},
          {"global_batch", profile.global_batch},
          {"network",
           {{"bandwidth_gbps", profile.network.bandwidth_bytes_per_s / kBytesPerGbit},
            {"latency_us", profile.network.latency_s * 1e6}}},
          {"layers", layers}};
}

json SplitToJson(const ModelProfile& profile, const BurstSplitOptions& options,
                 const BurstSplit& split, const BurstSplit* uniform) {
  json out = SummaryJson(split);
  out["model"] = profile.name;
  out["gpus"] = options.gpus;
  out["global_batch"] = profile.global_batch;
  // JSON has no infinity: an unbounded limit is written as null.
  out["amp_limit"] = std::isinf(options.amp_limit) ? json(nullptr) : json(options.amp_limit);
  out["counts"] = options.counts == CountSet::kAll ? "all" : "powers-of-two";
  out["candidate_counts"] = split.candidate_counts;
  out["blocks"] = split.blocks;
  json layers = json::array();
  for (size_t i = 0; i < profile.layers.size(); ++i) {
    layers.push_back(LayerCostJson(profile.layers[i], split.cost.layers[i]));
  }
  out["layers"] = layers;
  if (uniform) {
    json baseline = SummaryJson(*uniform);
    baseline["gpus"] = uniform->assignment.gpus.front();
    out["uniform"] = baseline;
    out["speedup_vs_uniform"] = uniform->cost.iteration_s / split.cost.iteration_s;
  }
  return out;
}

}  // namespace elastic::burst
