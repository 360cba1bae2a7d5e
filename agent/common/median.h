// The median of a sample, for the agent's measurements (profile rates, layer timings).
// Header-only and torch-free.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace elastic::agent {

// The median of `values` (the mean of the middle two for an even count). REQUIRES: non-empty.
inline double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace elastic::agent
