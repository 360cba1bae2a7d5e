// SlopeIndex: the rubick engine's shrink candidates per device type by slope (see
// rubick_slope_index.h).
#include "scheduler/policy/rubick_slope_index.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace elastic::policy::rubick {

void SlopeIndex::Set(std::size_t job, double slope, const std::vector<bool>& holds_type) {
  Erase(job);
  Entry& entry = entries_[job];
  entry.in = true;
  entry.slope = slope;
  entry.nan = std::isnan(slope);
  entry.holds_type = holds_type;
  if (entry.nan) {
    ++nan_;
    return;
  }
  for (std::size_t t = 0; t < holds_type.size() && t < by_type_.size(); ++t) {
    if (holds_type[t]) by_type_[t].emplace(slope, job);
  }
}

void SlopeIndex::Erase(std::size_t job) {
  if (job >= entries_.size()) entries_.resize(job + 1);
  Entry& entry = entries_[job];
  if (!entry.in) return;
  entry.in = false;
  if (entry.nan) {
    --nan_;
    return;
  }
  for (std::size_t t = 0; t < entry.holds_type.size() && t < by_type_.size(); ++t) {
    if (entry.holds_type[t]) by_type_[t].erase({entry.slope, job});
  }
}

double SlopeIndex::Lowest(std::size_t type) const {
  const auto& set = by_type_[type];
  return set.empty() ? std::numeric_limits<double>::infinity() : set.begin()->first;
}

std::vector<std::size_t> SlopeIndex::LowestChain(
    std::size_t type, double eps, const std::function<bool(std::size_t)>& skip) const {
  std::vector<std::size_t> chain;
  double top = 0.0;
  for (const auto& [slope, job] : by_type_[type]) {
    if (skip(job)) continue;
    // Past a gap of 2 x eps: (the margin keeps rounding of slope - eps on the right side).
    if (!chain.empty() && slope > top + 2 * eps) break;
    chain.push_back(job);
    top = slope;
  }
  std::sort(chain.begin(), chain.end());
  return chain;
}

}  // namespace elastic::policy::rubick
