// Progress-line parsing and the drift note.
#include "perf/rubick/plan_drift.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace elastic::agent {

namespace {
constexpr std::string_view kModelSizePrefix = "elastic-agent: model params=";
}  // namespace

std::string FormatModelSizeLine(std::int64_t params, std::int64_t blocks) {
  return std::string(kModelSizePrefix) + std::to_string(params) +
         " blocks=" + std::to_string(blocks);
}

std::optional<ModelSize> ParseModelSizeLine(std::string_view line) {
  if (line.substr(0, kModelSizePrefix.size()) != kModelSizePrefix) return std::nullopt;
  line.remove_prefix(kModelSizePrefix.size());
  long long params = 0, blocks = 0;
  auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), params);
  constexpr std::string_view kBlocks = " blocks=";
  std::string_view rest(end, static_cast<std::size_t>(line.data() + line.size() - end));
  if (ec != std::errc() || params < 1 || rest.substr(0, kBlocks.size()) != kBlocks) {
    return std::nullopt;
  }
  rest.remove_prefix(kBlocks.size());
  auto [stop, ec2] = std::from_chars(rest.data(), rest.data() + rest.size(), blocks);
  if (ec2 != std::errc() || blocks < 1 || blocks > 1'000'000 ||
      stop != rest.data() + rest.size()) {
    return std::nullopt;
  }
  return ModelSize{static_cast<double>(params), static_cast<int>(blocks)};
}

std::optional<double> ParseProgressThroughput(std::string_view line) {
  constexpr std::string_view kKey = " samples_per_s=";
  if (line.substr(0, 5) != "step=") return std::nullopt;
  const std::size_t at = line.find(kKey);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string value(line.substr(at + kKey.size()));
  char* end = nullptr;
  const double rate = std::strtod(value.c_str(), &end);
  if (end == value.c_str() || (*end != '\0' && *end != ' ')) return std::nullopt;
  return rate;
}

void PlanDriftWatch::StartGeneration(std::uint64_t generation, double predicted_samples_per_s) {
  generation_ = generation;
  predicted_ = predicted_samples_per_s;
  skipped_first_ = false;
  first_logs_.clear();
  generation_measured_ = false;
}

std::optional<DriftTrigger> PlanDriftWatch::OnLine(std::string_view line) {
  std::optional<double> measured = ParseProgressThroughput(line);
  if (!measured || !(*measured > 0) || !std::isfinite(*measured)) return std::nullopt;
  if (!skipped_first_) {
    skipped_first_ = true;
    return std::nullopt;
  }
  bool first_window_done = false;
  if (!generation_measured_) {
    first_logs_.push_back(std::log(*measured));
    first_window_done = generation_measured_ = static_cast<int>(first_logs_.size()) >= window_;
  }
  perf::DriftVerdict verdict;
  if (predicted_ > 0) verdict = detector_.Observe(predicted_, *measured);
  if (verdict.refit) detector_.Reset();
  if (first_window_done) {
    double sum = 0;
    for (double v : first_logs_) sum += v;
    return GenerationPoint(std::exp(sum / static_cast<double>(first_logs_.size())), verdict.refit);
  }
  if (!verdict.refit) return std::nullopt;
  DriftTrigger trigger;
  trigger.predicted = predicted_;
  trigger.measured = predicted_ * (1.0 + verdict.drift);
  trigger.drift = verdict.drift;
  trigger.past_threshold = true;
  char text[256];
  std::snprintf(text, sizeof text,
                "generation %llu: measured %.1f samples/s vs predicted %.1f: the model's drift "
                "over the last reports is %+.0f%%, past the refit threshold",
                static_cast<unsigned long long>(generation_), trigger.measured, predicted_,
                100.0 * verdict.drift);
  trigger.note = text;
  return trigger;
}

std::optional<DriftTrigger> PlanDriftWatch::GenerationPoint(double measured,
                                                            bool past_threshold) const {
  DriftTrigger point;
  point.predicted = predicted_;
  point.measured = measured;
  point.generation_point = true;
  point.past_threshold = past_threshold;
  char text[256];
  if (predicted_ > 0) {
    point.drift = measured / predicted_ - 1.0;
    std::snprintf(text, sizeof text,
                  "generation %llu: measured %.1f samples/s vs predicted %.1f over its first %d "
                  "reports: error %+.1f%%%s",
                  static_cast<unsigned long long>(generation_), measured, predicted_, window_,
                  100.0 * point.drift, past_threshold ? ", past the refit threshold" : "");
  } else {
    std::snprintf(text, sizeof text,
                  "generation %llu: measured %.1f samples/s over its first %d reports (no "
                  "prediction yet)",
                  static_cast<unsigned long long>(generation_), measured, window_);
  }
  point.note = text;
  return point;
}

}  // namespace elastic::agent
