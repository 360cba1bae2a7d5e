// SlopeIndex: the rubick engine's shrink candidates per device type by slope (see
// rubick_slope_index.h).
#include "scheduler/policy/rubick_slope_index.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace elastic::policy::rubick {

void SlopeIndex::Set(std::size_t job, double slope, double tie,
                     const TypeFlags& holds_type) {
  Erase(job);
  Entry& entry = entries_[job];
  entry.in = true;
  entry.slope = slope;
  entry.tie = tie;
  entry.nan = std::isnan(slope) || std::isnan(tie);
  entry.holds_type = holds_type;
  if (entry.nan) {
    ++nan_;
    return;
  }
  for (std::size_t t = 0; t < holds_type.size() && t < by_type_.size(); ++t) {
    if (holds_type[t]) by_type_[t].insert({slope, tie, job});
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
    if (entry.holds_type[t]) by_type_[t].erase({entry.slope, entry.tie, job});
  }
}

double SlopeIndex::Lowest(std::size_t type) const {
  const auto& set = by_type_[type];
  return set.empty() ? std::numeric_limits<double>::infinity() : set.begin()->slope;
}

std::vector<std::size_t> SlopeIndex::LowestChain(
    std::size_t type, double eps, const std::function<bool(std::size_t)>& skip) const {
  std::vector<std::size_t> chain;
  double top = 0.0;
  for (const auto& [slope, tie, job] : by_type_[type]) {
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

namespace elastic::policy::rubick {

std::optional<std::size_t> SlopeIndex::LowestOfOneSlope(
    std::size_t type, double eps, const std::function<bool(std::size_t)>& skip) const {
  const auto& set = by_type_[type];
  auto first = set.begin();
  while (first != set.end() && skip(first->job)) ++first;
  if (first == set.end() || !std::isfinite(first->slope)) return std::nullopt;
  // The first job past the slope's group; the chain holds one slope when it is 2 x eps higher.
  constexpr double kMaxTie = std::numeric_limits<double>::infinity();
  auto next = set.upper_bound({first->slope, kMaxTie, std::numeric_limits<std::size_t>::max()});
  while (next != set.end() && skip(next->job)) ++next;
  if (next != set.end() && !(next->slope > first->slope + 2 * eps)) return std::nullopt;
  return first->job;
}

}  // namespace elastic::policy::rubick
