// The rubick engine's placement of one job (see rubick_engine.h): its resource choices, a fresh
// placement as if it gave its own devices back first, and growth in place or re-placed.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/policy/rubick_engine.h"

namespace elastic::policy::rubick {

Fit Engine::Current(const Work& w) const {
  return {w.s.allocation, w.s.cpus_per_device, w.s.offload_mb_per_device,
          Speed(w, w.s.allocation)};
}

// (CPUs, offload MiB) per device to try for `count` devices of `type`, fewest resources first so
// that ties in speed keep resources free. CPUs (Rubick §5, a second dimension): just enough to
// feed the devices, the node type's even share, or one (also for guaranteed jobs: the SLA
// covers devices, CPUs come as nodes have them); offload memory only where the best plan
// with unlimited host memory is ZeRO-Offload (the estimator's host_total over the devices).
std::vector<std::pair<int, std::int64_t>> Engine::ResourceChoices(const Work& w,
                                                                  const TypeInfo& type,
                                                                  int count) const {
  std::vector<int> cpus{w.s.cpus_per_device};
  if (w.cpu_adaptive) {
    int ideal = IdealCpus(w, type);
    int share = std::clamp(type.cpus_per_device, w.s.min_cpus_per_device, ideal);
    cpus = {w.s.min_cpus_per_device, share, ideal};
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  }
  std::vector<std::int64_t> offload{w.s.offload_mb_per_device};
  const model::JobProfile& profile = w.s.profile;
  if (profile.plan == model::Plan::kAuto && profile.offload_host_mb > 0.0 && count > 0) {
    model::Shape shape{{{type.capability, count}}, (count + type.per_node - 1) / type.per_node};
    shape.cpus_per_device = cpus.back();
    offload = {0};
    if (model::BestPlan(profile, shape, cluster_.environment) == model::Plan::kOffload) {
      offload.push_back(static_cast<std::int64_t>(std::ceil(profile.offload_host_mb / count)));
    }
  }
  std::vector<std::pair<int, std::int64_t>> choices;
  for (int c : cpus) {
    for (std::int64_t mb : offload) choices.emplace_back(c, mb);
  }
  return choices;
}

// A fresh placement of `count` devices of `type` for w, as if it gave its own back first (all of
// them, also those of other types: a job spread over types may come back to one), with the
// fastest of its resource choices (fewest resources on ties). A running job is restarted by any
// resize (checkpoint-resume, §5.3), so moving it costs nothing more than resizing it.
std::optional<Fit> Engine::Replace(const Work& w, const std::string& type, int count) {
  ledger_.Give(w.s.allocation, w.s);
  std::optional<Fit> best;
  for (const auto& [cpus, offload] : ResourceChoices(w, Type(type), count)) {
    JobState fresh = w.s;
    fresh.allocation.clear();
    fresh.cpus_per_device = cpus;
    fresh.offload_mb_per_device = offload;
    std::optional<Allocation> whole = PickDevices(cluster_, ledger_, fresh, type, count);
    if (!whole) continue;
    double speed = Speed(fresh, *whole);
    if (!best || speed > best->speed + kEpsilon) best = Fit{*whole, cpus, offload, speed};
  }
  ledger_.Take(w.s.allocation, w.s);
  return best;
}

// Whether every placement of w on n devices of `type` runs at one speed, so that re-placing it
// can never beat growing it in place or leaving it: the type has one shape (TypeInfo), w holds
// only devices of it, and w has one resource choice, its own (ResourceChoices). Live jobs on
// one-device nodes are all like that; re-placing each every cycle was ~10 % of its CPU time.
bool Engine::PlacementIsMoot(const Work& w, const std::string& type) const {
  if (!Type(type).one_shape || Type(type).name != type || w.cpu_adaptive) return false;
  const model::JobProfile& profile = w.s.profile;
  if (profile.plan == model::Plan::kAuto && profile.offload_host_mb > 0.0) return false;
  return std::all_of(w.s.allocation.begin(), w.s.allocation.end(), [&](const Slice& slice) {
    return cluster_.nodes[slice.node].device_type == type;
  });
}

// The job's whole allocation after `devices` more of `type`, placed by the model (Rubick §5.2:
// the curves see the inter-node bandwidth, so a job spread over nodes is slower): grown in place
// with its CPUs, or re-placed from scratch with any of its resource choices, whichever is faster
// (in place on ties). A growth that would not make a running job faster is refused.
std::optional<Fit> Engine::PlaceGrowth(const Work& w, const std::string& type, int devices) {
  if (!w.running()) return Replace(w, type, devices);
  std::optional<Fit> best;
  if (std::optional<Allocation> delta = PickDevices(cluster_, ledger_, w.s, type, devices)) {
    Allocation grown = Merge(w.s.allocation, *delta);
    best = Fit{grown, w.s.cpus_per_device, w.s.offload_mb_per_device, Speed(w, grown)};
  }
  // Re-placed, it would run exactly as fast as grown in place: in place wins ties.
  if (best && PlacementIsMoot(w, type)) {
    if (best->speed <= Speed(w, w.s.allocation) + kEpsilon) return std::nullopt;
    return best;
  }
  std::optional<Fit> moved = Replace(w, type, DeviceCount(w.s.allocation) + devices);
  if (moved && (!best || moved->speed > best->speed + kEpsilon)) best = moved;
  if (!best || best->speed <= Speed(w, w.s.allocation) + kEpsilon) return std::nullopt;
  return best;
}

}  // namespace elastic::policy::rubick
