// The probe's quiet time, the pooled slope and the scaling to the quiet host (host_speed.h).
#include "agent/profile/host_speed.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace elastic::agent {

std::vector<double> Values(const std::vector<Probed>& samples) {
  std::vector<double> values;
  for (const Probed& sample : samples) values.push_back(sample.value);
  return values;
}

double QuietProbeMs(const std::vector<Probed>& samples) {
  constexpr double kQuietQuantile = 0.10;
  std::vector<double> probes;
  for (const Probed& sample : samples) probes.push_back(sample.probe_ms);
  std::sort(probes.begin(), probes.end());
  // Nearest rank: the smallest time with at least 10 % of the probes at or below it.
  const auto rank =
      static_cast<std::size_t>(std::ceil(kQuietQuantile * static_cast<double>(probes.size())));
  return probes[std::max<std::size_t>(rank, 1) - 1];
}

double ProbeSlope(const std::vector<std::vector<Probed>>& groups) {
  double covariance = 0, variance = 0;  // sums over every group around its own means
  for (const std::vector<Probed>& group : groups) {
    if (group.empty()) continue;
    double mean_x = 0, mean_y = 0;
    for (const Probed& sample : group) {
      mean_x += std::log(sample.probe_ms);
      mean_y += std::log(sample.value);
    }
    mean_x /= static_cast<double>(group.size());
    mean_y /= static_cast<double>(group.size());
    for (const Probed& sample : group) {
      const double dx = std::log(sample.probe_ms) - mean_x;
      covariance += dx * (std::log(sample.value) - mean_y);
      variance += dx * dx;
    }
  }
  return variance > 0 ? covariance / variance : 0.0;
}

std::vector<double> AtQuietHost(const std::vector<Probed>& samples, double slope, double quiet_ms) {
  std::vector<double> values;
  for (const Probed& sample : samples) {
    values.push_back(sample.value * std::pow(sample.probe_ms / quiet_ms, -slope));
  }
  return values;
}

}  // namespace elastic::agent
