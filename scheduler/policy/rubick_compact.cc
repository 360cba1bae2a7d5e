// Room on few nodes for a guaranteed job's claim (Rubick Algorithm 1's ScheduleJob searches node
// by node, shrinking jobs on the node it places on). ReclaimDevices frees devices wherever its
// lowest-slope victims run, so a claim placed after it may span several nodes and run slower
// than the speed it is owed (minRes is counted on packed devices): measured on the ITP trace
// at 12x8, 81 of 310 guaranteed admissions under rubick started on 2-6 nodes below 95 % of
// their owed speed. This frees the claim's devices on the fewest nodes first.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/policy/rubick_engine.h"
#include "scheduler/policy/rubick_policy.h"

namespace elastic::policy::rubick {
namespace {

// The allocation with one device fewer on `node`.
Allocation WithoutOneOn(const Allocation& allocation, int node) {
  Allocation next = allocation;
  for (size_t k = 0; k < next.size(); ++k) {
    if (next[k].node != node) continue;
    if (--next[k].devices == 0) next.erase(next.begin() + static_cast<long>(k));
    break;
  }
  return next;
}

int DevicesOn(const Allocation& allocation, int node) {
  for (const Slice& slice : allocation) {
    if (slice.node == node) return slice.devices;
  }
  return 0;
}

}  // namespace

// Per node, the devices of running elastic jobs that job i may take there: a whole slice of a
// best-effort job it may preempt, else what a job holds there above its floor (one pass over the
// running jobs, not one per node).
std::vector<int> Engine::ReclaimablePerNode(size_t i, bool may_preempt) const {
  std::vector<int> total(cluster_.nodes.size(), 0);
  for (size_t j : running_elastic_) {
    const Work& v = work_[j];
    if (j == i) continue;
    const bool preemptable = may_preempt && Preemptable(v);
    if (!preemptable && !ShrinkViewOf(v).candidate) continue;
    const int spare = DeviceCount(v.s.allocation) - Floor(v);
    for (const Slice& slice : v.s.allocation) {
      // shrunk to its floor first, then preempted (VictimOn)
      total[slice.node] += preemptable ? slice.devices : std::min(slice.devices, spare);
    }
  }
  return total;
}

// The running job on `node` to take one device from: the lowest shrink slope above its floor,
// else the best-effort job with the lowest loss per device (preempted whole).
std::optional<size_t> Engine::VictimOn(size_t i, int node, bool may_preempt,
                                       const std::vector<size_t>& refused, bool& preempt) const {
  std::optional<size_t> best;
  double best_slope = std::numeric_limits<double>::infinity();
  for (int pass = 0; pass < (may_preempt ? 2 : 1) && !best; ++pass) {
    for (size_t j : running_elastic_) {
      const Work& v = work_[j];
      if (j == i || DevicesOn(v.s.allocation, node) == 0) continue;
      if (std::find(refused.begin(), refused.end(), j) != refused.end()) continue;
      if (pass == 0 && !ShrinkViewOf(v).candidate) continue;
      if (pass == 1 && !Preemptable(v)) continue;
      double slope = pass == 0 ? ShrinkViewOf(v).slope : PreemptSlope(v);
      if (slope < best_slope - kEpsilon) {
        best = j;
        best_slope = slope;
      }
    }
    preempt = pass == 1;
  }
  return best;
}

// Where to make room for `devices` devices of `type` for job i on the fewest nodes: one node
// that can hold them all (the one needing the fewest devices taken), else whole nodes that can
// be emptied; each with the devices wanted free there. Empty when such room is already free;
// nothing when it cannot be made. A running job's own devices count as free: it gives them back
// when re-placed (Repack). Devices only: CPUs short beside free devices are Acquire's to reclaim.
std::optional<Engine::RoomPlan> Engine::PlanCompactRoom(size_t i, const TypeInfo& type,
                                                        int devices, bool may_preempt) const {
  const Work& w = work_[i];
  std::vector<std::pair<int, int>> fits;   // (devices to take, node) for a one-node claim
  std::vector<std::pair<int, int>> whole;  // (devices to take, node) for emptiable nodes
  int free_whole = 0;
  const std::vector<int> reclaimable = ReclaimablePerNode(i, may_preempt);
  for (size_t n = 0; n < cluster_.nodes.size(); ++n) {
    const NodeState& node = cluster_.nodes[n];
    if (node.device_type != type.name) continue;
    const int node_index = static_cast<int>(n);
    const int available = ledger_.FreeDevices(node_index) + DevicesOn(w.s.allocation, node_index);
    if (devices <= node.devices && available >= devices) return RoomPlan{};
    if (available >= node.devices) ++free_whole;
    const int reachable = available + reclaimable[n];
    if (devices <= node.devices && reachable >= devices) {
      fits.emplace_back(devices - available, node_index);
    }
    if (reachable >= node.devices) whole.emplace_back(node.devices - available, node_index);
  }
  if (!fits.empty()) return RoomPlan{{std::min_element(fits.begin(), fits.end())->second, devices}};
  if (free_whole * type.per_node >= devices) return RoomPlan{};
  std::sort(whole.begin(), whole.end());
  RoomPlan plan;
  int left = devices;
  for (auto it = whole.begin(); it != whole.end() && left > 0; ++it) {
    const int here = std::min(cluster_.nodes[it->second].devices, left);
    plan.emplace_back(it->second, here);
    left -= here;
  }
  if (left > 0) return std::nullopt;
  return plan;
}

// Frees devices for job i on the fewest nodes (PlanCompactRoom): on each planned node, jobs above
// their floor give devices back, lowest slope first, then best-effort jobs are preempted. Returns
// whether the room is there; each step is logged in `undo` (the caller rolls back on false).
bool Engine::MakeCompactRoom(size_t i, const TypeInfo& type, int devices,
                             std::vector<Undo>& undo) {
  const bool may_preempt = options_.preempt_best_effort && preempt_allowed_;
  const std::optional<RoomPlan> plan = PlanCompactRoom(i, type, devices, may_preempt);
  if (!plan) return false;
  const Work& w = work_[i];
  Reclaimed tally;
  for (const auto& [node, wanted] : *plan) {
    std::vector<size_t> refused;
    while (ledger_.FreeDevices(node) + DevicesOn(w.s.allocation, node) < wanted) {
      bool preempt = false;
      std::optional<size_t> victim = VictimOn(i, node, may_preempt, refused, preempt);
      if (!victim) return false;
      Fit smaller = Current(work_[*victim]);
      smaller.allocation = preempt ? Allocation{} : WithoutOneOn(smaller.allocation, node);
      if (!SetFit(*victim, smaller, undo)) {
        refused.push_back(*victim);
        continue;
      }
      Note(*victim, (preempt ? "preempted for " : "shrunk for ") + w.s.id);
      ++(preempt ? tally.preempted : tally.devices);
    }
  }
  if (tally.devices + tally.preempted > 0) {
    Note(i, "room on " + std::to_string(plan->size()) + " node(s): " +
                std::to_string(tally.devices) + " reclaimed, " + std::to_string(tally.preempted) +
                " preempted");
  }
  return true;
}

// OwedSpeedup, memoised per job (the profile does not change within a Decide call).
double Engine::OwedSpeed(const Work& w) const {
  if (w.owed_speed < 0.0) w.owed_speed = OwedSpeedup(w.s, options_, cluster_.environment);
  return w.owed_speed;
}

// A protected running job slower than owed at its size (spread over nodes: it started as
// best-effort, over quota, and was protected when quota freed) is moved onto room on the fewest
// nodes, taken as for its admission, when that makes it faster; otherwise nothing changes.
void Engine::Repack(size_t i) {
  Work& w = work_[i];
  const int count = DeviceCount(w.s.allocation);
  std::vector<Undo> undo;
  if (!MakeCompactRoom(i, Type(w.type), count, undo)) {
    Rollback(undo);
    return;
  }
  std::optional<Fit> moved = Replace(w, w.type, count);
  if (!moved || !(moved->speed > Speed(w, w.s.allocation) + kEpsilon) ||
      !SetFit(i, *moved, undo)) {
    Rollback(undo);
    return;
  }
  Note(i, "re-placed on fewer nodes for its owed speed");
}

}  // namespace elastic::policy::rubick
