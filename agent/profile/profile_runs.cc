// JobTomlForRun edits the job's TOML tree (toml++) instead of re-serialising JobConfig, so keys
// this file does not know about pass through unchanged.
#include "agent/profile/profile_runs.h"

#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <regex>
#include <sstream>

#include "agent/common/errors.h"
#include "common/toml_reader.h"

namespace elastic::agent {

std::string JobTomlForRun(std::string_view job_text, const std::string& source_name,
                          const RunSettings& settings) {
  toml::table root;
  try {
    root = toml::parse(job_text, source_name);
  } catch (const toml::parse_error& e) {
    throw ConfigError(source_name + ":" + std::to_string(e.source().begin.line) +
                      ": invalid TOML: " + std::string(e.description()));
  }
  auto table = [&root](const char* name) -> toml::table& {
    if (!root.contains(name)) root.insert(name, toml::table{});
    return *root[name].as_table();
  };
  toml::table& train = table("train");
  train.insert_or_assign("plan", settings.plan);
  train.insert_or_assign("ests", settings.ests);
  train.insert_or_assign("threads", settings.threads);
  train.insert_or_assign("cpu_threads", settings.cpu_threads);
  train.insert_or_assign("steps", settings.steps);
  train.insert_or_assign("log_every", std::int64_t{1});
  train.insert_or_assign("host_probe", settings.host_probe);
  // Relative paths would now resolve against the run file's directory: data.path and
  // model.torchscript are made absolute; train.perf_model (the supervisor's fitted.json, unused
  // by `train`) is dropped.
  train.erase("perf_model");
  // A run's few steps measure speed: a warmup longer than them would be refused, and the rate
  // it scales costs nothing to measure.
  train.erase("warmup_steps");
  table("data").insert_or_assign("path", settings.data_path);
  if (!settings.torchscript.empty()) {
    table("model").insert_or_assign("torchscript", settings.torchscript);
  }
  root.erase("checkpoint");
  std::ostringstream text;
  text << root << "\n";
  return text.str();
}

std::vector<StepRate> ParseStepRates(std::string_view output) {
  static const std::regex line(
      R"((?:^|\n)step=(\d+) loss=\S+ samples_per_s=([0-9.eE+-]+)(?: probe_ms=([0-9.eE+-]+))?)");
  std::vector<StepRate> rates;
  const std::string text(output);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line);
       it != std::sregex_iterator(); ++it) {
    StepRate rate;
    rate.step = std::stoll((*it)[1].str());
    rate.samples_per_s = std::stod((*it)[2].str());
    if ((*it)[3].matched) rate.probe_ms = std::stod((*it)[3].str());
    rates.push_back(rate);
  }
  return rates;
}

std::vector<StepRate> MeasuredSteps(const std::vector<StepRate>& rates, std::int64_t warmup,
                                    std::int64_t measured) {
  std::vector<StepRate> steady;
  for (std::int64_t step = warmup + 1; step <= warmup + measured; ++step) {
    auto found = std::find_if(rates.begin(), rates.end(),
                              [step](const StepRate& rate) { return rate.step == step; });
    if (found == rates.end() || !(found->samples_per_s > 0)) {
      throw TrainingError("profile: no progress line with a positive samples_per_s for step " +
                          std::to_string(step) + " (found " + std::to_string(rates.size()) +
                          " progress lines; expected steps 1 to " +
                          std::to_string(warmup + measured) + ")");
    }
    steady.push_back(*found);
  }
  return steady;
}

double MedianMeasuredRate(const std::vector<StepRate>& rates, std::int64_t warmup,
                          std::int64_t measured) {
  std::vector<double> steady;
  for (const StepRate& rate : MeasuredSteps(rates, warmup, measured)) {
    steady.push_back(rate.samples_per_s);
  }
  return Median(std::move(steady));
}

double RelativeSpread(const std::vector<double>& rates) {
  const auto [low, high] = std::minmax_element(rates.begin(), rates.end());
  return (*high - *low) / Median(rates);
}

}  // namespace elastic::agent
