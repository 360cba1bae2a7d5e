// SlowdownFeedback: sliding medians of solo and co-located run times per operator.
#include "agent/multiplex/slowdown_feedback.h"

#include <algorithm>

#include "agent/multiplex/duration_window.h"

namespace elastic::agent::multiplex {
namespace {

double MedianSeconds(const std::deque<Duration>& samples) {
  return std::chrono::duration<double>(MedianOf(samples)).count();
}

}  // namespace

SlowdownFeedback::SlowdownFeedback(FeedbackOptions options) : options_(options) {
  options_.min_samples = std::max<std::size_t>(options_.min_samples, 1);
  options_.window = std::max(options_.window, options_.min_samples);
}

Placement SlowdownFeedback::Decide(std::string_view op, TimePoint now) const {
  const auto it = ops_.find(std::string(op));
  if (it == ops_.end() || it->second.solo.size() < options_.min_samples) {
    return Placement::kIsolate;
  }
  const OpState& state = it->second;
  return state.sensitive && now < state.retry_at ? Placement::kIsolate : Placement::kColocate;
}

void SlowdownFeedback::Record(std::string_view op, Duration duration, bool colocated,
                              TimePoint now) {
  OpState& state = ops_[std::string(op)];
  PushWindowed(colocated ? state.colocated : state.solo, duration, options_.window);
  if (colocated) Judge(state, now);
}

// Judges once min_samples co-located runs have been seen since the last judgement; marking
// clears them, so a probe after retry_after is judged on fresh runs only.
void SlowdownFeedback::Judge(OpState& state, TimePoint now) const {
  if (state.colocated.size() < options_.min_samples || state.solo.size() < options_.min_samples) {
    return;
  }
  const double solo = MedianSeconds(state.solo);
  if (solo <= 0) return;
  state.ratio = MedianSeconds(state.colocated) / solo;
  if (*state.ratio > options_.sensitive_ratio) {
    state.sensitive = true;
    state.retry_at = now + options_.retry_after;
    state.colocated.clear();
  } else {
    state.sensitive = false;
  }
}

bool SlowdownFeedback::IsSensitive(std::string_view op) const {
  const auto it = ops_.find(std::string(op));
  return it != ops_.end() && it->second.sensitive;
}

std::vector<OpReport> SlowdownFeedback::Report() const {
  std::vector<OpReport> report;
  for (const auto& [op, state] : ops_) {
    report.push_back({op, state.ratio, state.sensitive, state.solo.size(), state.colocated.size()});
  }
  std::sort(report.begin(), report.end(),
            [](const OpReport& a, const OpReport& b) { return a.op < b.op; });
  return report;
}

}  // namespace elastic::agent::multiplex
