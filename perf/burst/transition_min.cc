// Range-minimum search over source GPU counts (the reasoning is in transition_min.h).
#include "perf/burst/transition_min.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>

#include "perf/burst/cost_model.h"

namespace elastic::burst {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Below this many sources a plain scan beats building the tables.
constexpr size_t kScanUpTo = 24;

int FloorLog2(int n) { return std::bit_width(static_cast<unsigned>(n)) - 1; }

}  // namespace

TransitionMin::TransitionMin(const NetworkModel& net, const std::vector<int>& counts,
                             bool exhaustive)
    : net_(net), counts_(counts), exhaustive_(exhaustive) {
  for (int count : counts) inverse_.push_back(1.0 / count);
}

// Bit-for-bit TransitionTime (counts ascending, so the lower index is the smaller count).
double TransitionMin::Comm(int source, int target) const {
  if (source == target) return 0.0;
  double fraction = source < target ? inverse_[source] - inverse_[target]
                                    : inverse_[target] - inverse_[source];
  return ReshardTime(net_, batch_bytes_, fraction);
}

void TransitionMin::Load(double batch_bytes, const std::vector<int>& sources,
                         const std::vector<double>& time) {
  batch_bytes_ = batch_bytes;
  sources_ = &sources;
  time_ = &time;
  int m = static_cast<int>(sources.size());
  previous_reachable_.assign(m, -1);
  next_reachable_.assign(m, -1);
  for (int j = 0, last = -1; j < m; ++j) {
    if (time[sources[j]] < kInf) last = j;
    previous_reachable_[j] = last;
  }
  for (int j = m - 1, last = -1; j >= 0; --j) {
    if (time[sources[j]] < kInf) last = j;
    next_reachable_[j] = last;
  }
  tables_ = !exhaustive_ && sources.size() > kScanUpTo;
  if (!tables_) return;
  double alpha = 2.0 * batch_bytes / net_.bandwidth_bytes_per_s;
  below_key_.resize(m);
  above_key_.resize(m);
  for (int j = 0; j < m; ++j) {
    double s = time[sources[j]], inverse = inverse_[sources[j]];
    below_key_[j] = s + alpha * inverse;
    above_key_[j] = s - alpha * inverse;
  }
  Build(below_key_, below_table_);
  Build(above_key_, above_table_);
}

void TransitionMin::Build(const std::vector<double>& key, std::vector<std::vector<int>>& table) {
  int m = static_cast<int>(key.size());
  table.resize(FloorLog2(m) + 1);
  table[0].resize(m);
  std::iota(table[0].begin(), table[0].end(), 0);
  for (size_t level = 1; level < table.size(); ++level) {
    int half = 1 << (level - 1);
    table[level].resize(m - 2 * half + 1);
    for (size_t j = 0; j < table[level].size(); ++j) {
      int a = table[level - 1][j], b = table[level - 1][j + half];
      table[level][j] = key[b] < key[a] ? b : a;
    }
  }
}

int TransitionMin::Argmin(const std::vector<std::vector<int>>& table,
                          const std::vector<double>& key, int lo, int hi) const {
  if (lo > hi) return -1;
  int level = FloorLog2(hi - lo + 1);
  int a = table[level][lo], b = table[level][hi - (1 << level) + 1];
  return key[b] < key[a] ? b : a;
}

void TransitionMin::Consider(int position, int target, double fixed, double cap, Best& best,
                             double& best_value) const {
  int source = (*sources_)[position];
  double s = (*time_)[source];
  if (s == kInf) return;
  double comm = Comm(source, target);
  if (fixed + comm > cap || !(s + comm < best_value)) return;
  best_value = s + comm;
  best.source = source;
  best.comm = comm;
}

TransitionMin::Best TransitionMin::Find(int target, double fixed, double cap) const {
  Best best;
  double best_value = kInf;
  const std::vector<int>& sources = *sources_;
  int m = static_cast<int>(sources.size());
  if (!tables_) {
    for (int j = 0; j < m; ++j) Consider(j, target, fixed, cap, best, best_value);
    return best;
  }
  auto fits = [&](int j) { return fixed + Comm(sources[j], target) <= cap; };
  int below_end = static_cast<int>(std::lower_bound(sources.begin(), sources.end(), target) -
                                   sources.begin());
  int above_begin = below_end;
  if (above_begin < m && sources[above_begin] == target) {
    Consider(above_begin, target, fixed, cap, best, best_value);
    ++above_begin;
  }
  // Below the target, transfers shrink as the source count grows: the fitting sources are a
  // suffix of [0, below_end). Above it they grow: a prefix of [above_begin, m).
  int lo = 0, hi = below_end;
  if (hi > 0 && fits(0)) hi = 0;  // common: the cap admits every source
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (fits(mid)) hi = mid;
    else lo = mid + 1;
  }
  int j = Argmin(below_table_, below_key_, lo, below_end - 1);
  if (j >= 0) Consider(j, target, fixed, cap, best, best_value);
  lo = above_begin;
  hi = m;
  if (lo < hi && fits(m - 1)) lo = m;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (fits(mid)) lo = mid + 1;
    else hi = mid;
  }
  j = Argmin(above_table_, above_key_, above_begin, lo - 1);
  if (j >= 0) Consider(j, target, fixed, cap, best, best_value);
  return best;
}

TransitionMin::Best TransitionMin::Nearest(int target) const {
  const std::vector<int>& sources = *sources_;
  const std::vector<double>& time = *time_;
  Best best;
  double best_arrival = kInf;
  auto consider = [&](int j) {
    if (j < 0) return;
    int source = sources[j];
    double comm = Comm(source, target), arrival = time[source] + comm;
    if (best.source < 0 || comm < best.comm || (comm == best.comm && arrival < best_arrival)) {
      best.source = source;
      best.comm = comm;
      best_arrival = arrival;
    }
  };
  int m = static_cast<int>(sources.size());
  if (exhaustive_) {
    for (int j = 0; j < m; ++j) {
      if (time[sources[j]] < kInf) consider(j);
    }
    return best;
  }
  int at = static_cast<int>(std::lower_bound(sources.begin(), sources.end(), target) -
                            sources.begin());
  if (at < m && sources[at] == target && time[target] < kInf) return {target, 0.0};
  consider(at > 0 ? previous_reachable_[at - 1] : -1);
  int above = (at < m && sources[at] == target) ? at + 1 : at;
  consider(above < m ? next_reachable_[above] : -1);
  return best;
}

}  // namespace elastic::burst
