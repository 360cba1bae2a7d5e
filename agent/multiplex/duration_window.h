// A sliding window of durations and its median: what the slowdown feedback and the idle filler
// both judge by (medians, because one co-located or preempted sample must not move a decision).
#pragma once

#include <algorithm>
#include <cstddef>
#include <deque>
#include <vector>

#include "agent/multiplex/clock.h"

namespace elastic::agent::multiplex {

// Appends `sample`, dropping the oldest ones beyond `window` (at least 1 is kept).
inline void PushWindowed(std::deque<Duration>& samples, Duration sample, std::size_t window) {
  samples.push_back(sample);
  while (samples.size() > std::max<std::size_t>(window, 1)) samples.pop_front();
}

// REQUIRES: !samples.empty().
inline Duration MedianOf(const std::deque<Duration>& samples) {
  std::vector<Duration> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

}  // namespace elastic::agent::multiplex
