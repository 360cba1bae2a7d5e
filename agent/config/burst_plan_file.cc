// ReadBurstPlanFile: an `elastic-plan burst --json` plan's per-layer GPU counts.
#include "agent/config/burst_plan_file.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "agent/config/quoted.h"

namespace elastic::agent {

std::vector<std::int64_t> ReadBurstPlanFile(TomlReader& reader, const std::string& path,
                                            std::int64_t max_count) {
  const std::string key = "train.burst_plan";
  const std::string quoted = Quoted(path);
  std::ifstream in(path);
  if (!in) {
    reader.Fail(key, quoted + " cannot be read: expected `elastic-plan burst --json`'s output");
  }
  nlohmann::json plan;
  try {
    plan = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    reader.Fail(key, quoted + " is not JSON (" + e.what() + ")");
  }
  if (!plan.is_object() || !plan.contains("layers") || !plan["layers"].is_array() ||
      plan["layers"].empty()) {
    reader.Fail(key, quoted +
                         ": expected an object with a non-empty \"layers\" array "
                         "(`elastic-plan burst --json`)");
  }
  std::vector<std::int64_t> workers;
  for (const nlohmann::json& layer : plan["layers"]) {
    const std::string at = quoted + ": layers[" + std::to_string(workers.size()) + "]";
    const bool integer =
        layer.is_object() && layer.contains("gpus") && layer["gpus"].is_number_integer();
    const std::int64_t gpus = integer ? layer["gpus"].get<std::int64_t>() : 0;
    if (gpus < 1 || gpus > max_count) {
      reader.Fail(key, at + ".gpus: expected an integer from 1 to " + std::to_string(max_count));
    }
    if (layer.contains("parallel") && layer["parallel"] == true) {
      reader.Fail(key, at + " runs on GPUs of its own beside another branch: expected a chain "
                            "plan (elastic-plan burst --no-separate)");
    }
    workers.push_back(gpus);
  }
  return workers;
}

}  // namespace elastic::agent
