// Progress-line parsing and the drift note.
#include "perf/rubick/plan_drift.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace elastic::agent {

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
}

std::optional<DriftTrigger> PlanDriftWatch::OnLine(std::string_view line) {
  if (!(predicted_ > 0)) return std::nullopt;
  std::optional<double> measured = ParseProgressThroughput(line);
  if (!measured) return std::nullopt;
  if (!skipped_first_) {
    skipped_first_ = true;
    return std::nullopt;
  }
  perf::DriftVerdict verdict = detector_.Observe(predicted_, *measured);
  if (!verdict.refit) return std::nullopt;
  detector_.Reset();
  DriftTrigger trigger;
  trigger.predicted = predicted_;
  trigger.measured = predicted_ * (1.0 + verdict.drift);
  trigger.drift = verdict.drift;
  char text[256];
  std::snprintf(text, sizeof text,
                "generation %llu: measured %.1f samples/s vs predicted %.1f: the model's drift "
                "over the last reports is %+.0f%%, past the refit threshold",
                static_cast<unsigned long long>(generation_), trigger.measured, predicted_,
                100.0 * verdict.drift);
  trigger.note = text;
  return trigger;
}

}  // namespace elastic::agent
