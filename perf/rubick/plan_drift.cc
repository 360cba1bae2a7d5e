// Progress-line parsing and the drift note.
#include "perf/rubick/plan_drift.h"

#include <algorithm>
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
  log_sum_ = 0;
  reports_ = 0;
  last_point_ = 0;
}

std::optional<DriftTrigger> PlanDriftWatch::OnLine(std::string_view line) {
  std::optional<double> measured = ParseProgressThroughput(line);
  if (!measured || !(*measured > 0) || !std::isfinite(*measured)) return std::nullopt;
  if (!skipped_first_) {
    skipped_first_ = true;
    return std::nullopt;
  }
  log_sum_ += std::log(*measured);
  ++reports_;
  const int window = std::max(1, options_.window);
  if (reports_ % window != 0) return std::nullopt;
  const double mean = std::exp(log_sum_ / reports_);
  const bool past = predicted_ > 0 && std::abs(mean / predicted_ - 1.0) > options_.threshold;
  if (reports_ == window) {
    last_point_ = mean;
    return GenerationPoint(mean, past);
  }
  if (!past || std::abs(mean / last_point_ - 1.0) <= options_.threshold) return std::nullopt;
  last_point_ = mean;
  return DriftPastThreshold(mean);
}

DriftTrigger PlanDriftWatch::DriftPastThreshold(double measured) const {
  DriftTrigger trigger;
  trigger.predicted = predicted_;
  trigger.measured = measured;
  trigger.drift = measured / predicted_ - 1.0;
  trigger.past_threshold = true;
  char text[256];
  std::snprintf(text, sizeof text,
                "generation %llu: measured %.1f samples/s vs predicted %.1f over its %d reports: "
                "the model's drift is %+.0f%%, past the refit threshold",
                static_cast<unsigned long long>(generation_), measured, predicted_, reports_,
                100.0 * trigger.drift);
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
                  static_cast<unsigned long long>(generation_), measured, predicted_, reports_,
                  100.0 * point.drift, past_threshold ? ", past the refit threshold" : "");
  } else {
    std::snprintf(text, sizeof text,
                  "generation %llu: measured %.1f samples/s over its first %d reports (no "
                  "prediction yet)",
                  static_cast<unsigned long long>(generation_), measured, reports_);
  }
  point.note = text;
  return point;
}

}  // namespace elastic::agent
