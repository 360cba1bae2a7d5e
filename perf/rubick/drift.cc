// Windowed mean log-ratio drift between measured and predicted throughput.
#include "perf/rubick/drift.h"

#include <algorithm>
#include <cmath>

namespace elastic::perf {

DriftVerdict DriftDetector::Observe(double predicted, double measured) {
  if (predicted > 0 && measured > 0 && std::isfinite(predicted) && std::isfinite(measured)) {
    log_ratios_.push_back(std::log(measured / predicted));
    while (static_cast<int>(log_ratios_.size()) > std::max(1, options_.window)) {
      log_ratios_.pop_front();
    }
  }
  return Current();
}

DriftVerdict DriftDetector::Current() const {
  DriftVerdict verdict;
  if (log_ratios_.empty()) return verdict;
  double sum = 0;
  for (double r : log_ratios_) sum += r;
  // The mean of log ratios is a geometric mean: symmetric for 2x too fast and 2x too slow, and one
  // outlier moves it less than an arithmetic mean of ratios would.
  verdict.drift = std::exp(sum / static_cast<double>(log_ratios_.size())) - 1.0;
  verdict.refit = static_cast<int>(log_ratios_.size()) >= options_.window &&
                  std::abs(verdict.drift) > options_.threshold;
  return verdict;
}

}  // namespace elastic::perf
