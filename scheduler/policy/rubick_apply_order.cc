// Rubick engine: the order its decisions can be applied in (Engine::ApplicableOrder), so that a
// job grows only into what jobs applied before it gave back.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "scheduler/policy/rubick_engine.h"

namespace elastic::policy::rubick {
namespace {

struct Amounts {
  long devices = 0, cpus = 0;
  std::int64_t memory_mb = 0;
};
using Delta = std::vector<std::pair<int, Amounts>>;  // per node, ascending

bool Fits(const Delta& delta, const std::vector<Amounts>& free) {
  for (const auto& [node, a] : delta) {
    if (!(a.devices <= free[node].devices && a.cpus <= free[node].cpus &&
          a.memory_mb <= free[node].memory_mb)) {
      return false;
    }
  }
  return true;
}

// What one allocation adds (sign +1) or gives back (-1) on each of its nodes, appended.
void AddAmounts(const JobState& job, int sign, Delta& out) {
  for (const Slice& slice : job.allocation) {
    Amounts a;
    a.devices = sign * slice.devices;
    a.cpus = sign * static_cast<long>(slice.devices) * job.cpus_per_device;
    a.memory_mb = sign * slice.devices * job.HostMemoryPerDevice();
    out.emplace_back(slice.node, a);
  }
}

// Per changed job, what it takes (positive) or gives back (negative) on each node: one entry per
// node it holds before or after, ascending.
std::vector<Delta> ChangeDeltas(const std::vector<Work>& work,
                                const std::vector<size_t>& changed) {
  std::vector<Delta> deltas;
  deltas.reserve(changed.size());
  for (size_t i : changed) {
    Delta delta;
    delta.reserve(work[i].s.allocation.size() + work[i].original->allocation.size());
    AddAmounts(work[i].s, +1, delta);
    AddAmounts(*work[i].original, -1, delta);
    std::sort(delta.begin(), delta.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    size_t out = 0;  // entries of one node summed into the first (sums: order-free)
    for (size_t k = 0; k < delta.size(); ++k) {
      if (out > 0 && delta[out - 1].first == delta[k].first) {
        Amounts& m = delta[out - 1].second;
        m.devices += delta[k].second.devices;
        m.cpus += delta[k].second.cpus;
        m.memory_mb += delta[k].second.memory_mb;
      } else {
        delta[out++] = delta[k];
      }
    }
    delta.resize(out);
    deltas.push_back(std::move(delta));
  }
  return deltas;
}

}  // namespace

// Decisions are applied one by one, so a job growing into devices (or CPUs, memory) another job
// gives back must come after it: repeatedly emit the first change whose per-node growth fits
// what is free. Re-placed jobs can form cycles (a takes b's old node while b takes a's); what
// never fits is dropped, leaving those jobs where they are, which is always valid.
// A change found not to fit is checked again only once an emitted one gave something back on
// one of its nodes (nothing else can make it fit), so the first fit is found without re-checking
// every change before it after each emit.
std::vector<size_t> Engine::ApplicableOrder(std::vector<size_t> changed) const {
  std::vector<Amounts> free;
  for (const NodeState& node : cluster_.nodes) {
    free.push_back({node.free_devices, node.free_cpus, node.free_memory_mb});
  }
  const std::vector<Delta> deltas = ChangeDeltas(work_, changed);
  std::vector<std::pair<int, size_t>> on_node;  // (node, change), sorted: who to re-check
  for (size_t k = 0; k < deltas.size(); ++k) {
    for (const auto& entry : deltas[k]) on_node.emplace_back(entry.first, k);
  }
  std::sort(on_node.begin(), on_node.end());
  std::vector<bool> emitted(changed.size(), false);
  std::set<size_t> recheck;  // checked, did not fit, something freed on one of its nodes since
  size_t scanned = 0;        // changes [0, scanned) were checked at least once
  std::vector<size_t> order;
  while (true) {
    std::optional<size_t> pick;
    while (!pick && !recheck.empty()) {  // before `scanned`: these come first in list order
      const size_t k = *recheck.begin();
      recheck.erase(recheck.begin());
      if (Fits(deltas[k], free)) pick = k;
    }
    for (; !pick && scanned < changed.size(); ++scanned) {
      if (Fits(deltas[scanned], free)) pick = scanned;
    }
    if (!pick) break;
    emitted[*pick] = true;
    for (const auto& [node, a] : deltas[*pick]) {
      free[node].devices -= a.devices;
      free[node].cpus -= a.cpus;
      free[node].memory_mb -= a.memory_mb;
      if (a.devices >= 0 && a.cpus >= 0 && a.memory_mb >= 0) continue;  // nothing given back
      auto it = std::lower_bound(on_node.begin(), on_node.end(), std::make_pair(node, size_t{0}));
      for (; it != on_node.end() && it->first == node; ++it) {
        if (!emitted[it->second] && it->second < scanned) recheck.insert(it->second);
      }
    }
    order.push_back(changed[*pick]);
  }
  return order;
}

}  // namespace elastic::policy::rubick
