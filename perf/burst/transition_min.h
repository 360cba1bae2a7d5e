// The inner step of the burst split's chain search (Algorithm 1's loop over h): for a target
// GPU count c, the source count p minimising S[p] + comm(p→c), among sources whose transfer keeps
// the target layer within its amplification cap.
//
// comm(p→c) = alpha * |1/n_p - 1/n_c| + beta for p != c (cost_model.h), so for sources below c
// the cost is (S[p] + alpha/n_p) + const(c) and above c it is (S[p] - alpha/n_p) + const(c);
// the cap admits a contiguous run of sources on each side (comm is monotone in n_p there).
// Range-minimum sparse tables over both keys answer each target in O(1) after an O(m log m)
// load, instead of O(m) per target: O(K log K) per layer rather than O(K^2) with all counts.
// Small source lists, and `exhaustive` mode (tests), scan every source instead.
// Not thread-safe (holds the loaded tables); cheap to create one per search.
#pragma once

#include <vector>

#include "perf/burst/profile.h"

namespace elastic::burst {

class TransitionMin {
 public:
  struct Best {
    int source = -1;    // candidate index; -1 when no source is reachable within the cap
    double comm = 0.0;  // comm(source→target)
  };

  // REQUIRES: counts ascending and positive; `net` and `counts` outlive this object.
  TransitionMin(const NetworkModel& net, const std::vector<int>& counts, bool exhaustive);

  // `batch_bytes`: the source layer's output for the whole batch. `sources`: its candidate
  // indices, ascending; `time`: S by candidate index (infinity: unreachable). Both must stay
  // alive and unchanged until the next Load.
  void Load(double batch_bytes, const std::vector<int>& sources, const std::vector<double>& time);

  // Minimises time[p] + comm(p→target) subject to fixed + comm(p→target) <= cap.
  Best Find(int target, double fixed, double cap) const;

  // The reachable source with the cheapest transfer to `target` (ties: the earlier arrival).
  Best Nearest(int target) const;

 private:
  double Comm(int source, int target) const;
  int Argmin(const std::vector<std::vector<int>>& table, const std::vector<double>& key, int lo,
             int hi) const;  // over source positions [lo, hi]; -1 if empty
  static void Build(const std::vector<double>& key, std::vector<std::vector<int>>& table);
  void Consider(int position, int target, double fixed, double cap, Best& best,
                double& best_value) const;

  const NetworkModel& net_;
  const std::vector<int>& counts_;
  std::vector<double> inverse_;  // 1.0 / count, as TransitionTime computes it
  const bool exhaustive_;
  double batch_bytes_ = 0.0;
  const std::vector<int>* sources_ = nullptr;
  const std::vector<double>* time_ = nullptr;
  bool tables_ = false;
  std::vector<double> below_key_, above_key_;  // S + alpha/n, S - alpha/n per source position
  std::vector<std::vector<int>> below_table_, above_table_;
  std::vector<int> previous_reachable_, next_reachable_;  // per position, -1 if none
};

}  // namespace elastic::burst
