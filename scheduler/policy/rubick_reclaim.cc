// Rubick Algorithm 1's ScheduleJob (lines 9-35): taking resources for one job from free ones or
// from others, per resource type — devices above a job's minimum, best-effort preemption, CPUs
// above a job's minimum — all or nothing.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/policy/rubick_engine.h"

namespace elastic::policy::rubick {
namespace {

bool HoldsType(const ClusterState& cluster, const Allocation& allocation, const std::string& type) {
  for (const Slice& slice : allocation) {
    if (cluster.nodes[slice.node].device_type == type) return true;
  }
  return false;
}

// The candidate with the lowest slope, ties to the later submission: the rule of
// GetLowestSlopeOverMinJob (Algorithm 1 line 13), shared by its preemption and CPU variants.
// `slope_of` gives a job's slope, or nothing when the job is not a candidate. Every variant's
// candidates run and are elastic, so only `running_elastic` (indices, ascending: the order ties
// are seen in) is scanned.
template <class SlopeOf>
std::optional<size_t> LowestSlope(const std::vector<Work>& work,
                                  const std::vector<size_t>& running_elastic, size_t grower,
                                  const std::vector<size_t>& refused, SlopeOf slope_of) {
  std::optional<size_t> best;
  double best_slope = 0.0;
  for (size_t i : running_elastic) {
    if (i == grower || std::find(refused.begin(), refused.end(), i) != refused.end()) continue;
    const std::optional<double> slope = slope_of(work[i]);
    if (!slope) continue;
    if (!best || *slope < best_slope - kEpsilon ||
        (std::abs(*slope - best_slope) <= kEpsilon &&
         work[*best].s.submit_time_s < work[i].s.submit_time_s)) {
      best = i;
      best_slope = *slope;
    }
  }
  return best;
}

// "<why> +<devices> <type> (slope <%.3g>/device, ...)", as snprintf into a 240-byte buffer wrote
// it, built without snprintf: it formatted one note per grant and was ~4 % of a live cycle.
std::string GrantNote(const char* why, int devices, const std::string& type, double slope,
                      const Reclaimed& tally, int cpus_per_device) {
  char number[64];
  const std::to_chars_result end =  // %.3g exactly (as if by printf, C locale)
      std::to_chars(number, number + sizeof number, slope, std::chars_format::general, 3);
  std::string text = std::string(why) + " +" + std::to_string(devices) + " " + type.c_str() +
                     " (slope " + std::string(number, end.ptr) + "/device, " +
                     std::to_string(tally.devices) + " reclaimed, " +
                     std::to_string(tally.preempted) + " preempted, " +
                     std::to_string(tally.cpus) + " CPU steps taken, " +
                     std::to_string(cpus_per_device) + " CPUs/device)";
  if (text.size() > 239) text.resize(239);
  return text;
}

}  // namespace

// Loss of speed per device if the job gives one device back, ranked (see Rank).
double Engine::ShrinkSlope(const Work& w) const {
  int count = DeviceCount(w.s.allocation);
  const TypeInfo& type = Type(w.type);
  return Rank(w, CompactSpeed(w, type, count) - CompactSpeed(w, type, count - 1));
}

// Loss of speed per device if the job gives all its devices back (a preemption), ranked.
double Engine::PreemptSlope(const Work& w) const {
  int count = DeviceCount(w.s.allocation);
  return Rank(w, CompactSpeed(w, Type(w.type), count) / std::max(count, 1));
}

// The job's ShrinkView, recomputed only when it was resized or its protection changed since.
const ShrinkView& Engine::ShrinkViewOf(const Work& w) const {
  ShrinkView& view = w.shrink;
  if (view.revision == w.revision && view.protected_sla == w.protected_sla) return view;
  view.revision = w.revision;
  view.protected_sla = w.protected_sla;
  view.candidate = w.running() && w.s.elastic && DeviceCount(w.s.allocation) > Floor(w) &&
                   MayResize(w);
  view.slope = view.candidate ? ShrinkSlope(w) : 0.0;
  view.holds_type.assign(types_.size(), false);
  for (const Slice& slice : w.s.allocation) {
    view.holds_type[std::max(node_type_[slice.node], 0)] = true;  // TypeIndex's 0 for none
  }
  return view;
}

// Brings slopes_ up to date with the jobs changed since it was last read (all of them at first).
void Engine::RefreshSlopes() const {
  if (!slopes_built_) {
    slopes_built_ = true;
    slopes_dirty_ = running_elastic_;
  }
  for (size_t i : slopes_dirty_) UpdateSlope(i);
  slopes_dirty_.clear();
}

void Engine::UpdateSlope(size_t i) const {
  if (!std::binary_search(running_elastic_.begin(), running_elastic_.end(), i)) {
    slopes_.Erase(i);
    return;
  }
  const ShrinkView& view = ShrinkViewOf(work_[i]);
  if (view.candidate) {
    slopes_.Set(i, view.slope, -work_[i].s.submit_time_s, view.holds_type);  // later first
  } else {
    slopes_.Erase(i);
  }
}

// The lowest ShrinkSlope of any job that could give a device of `type` back (infinity if none):
// a lower bound for every GetLowestSlopeOverMinJob pick until a job changes.
double Engine::LowestShrinkSlope(const TypeInfo& type) const {
  const size_t t = TypeIndex(type.name);
  RefreshSlopes();
  if (!slopes_.has_nan()) return slopes_.Lowest(t);
  double lowest = std::numeric_limits<double>::infinity();
  for (size_t i : running_elastic_) {
    const ShrinkView& view = ShrinkViewOf(work_[i]);
    if (view.candidate && view.holds_type[t]) lowest = std::min(lowest, view.slope);
  }
  return lowest;
}

// GetLowestSlopeOverMinJob (line 13) among jobs holding devices of the type: ties go to the
// later submission. When the jobs it could pick (SlopeIndex::LowestChain) share one slope, the
// pick is the index's first; else the scan visits only those, or every running elastic job
// while some slope is NaN.
std::optional<size_t> Engine::LowestSlopeOverMin(const std::string& type, size_t grower,
                                                 const std::vector<size_t>& refused) const {
  const size_t t = TypeIndex(type);
  if (types_[t].name != type) return std::nullopt;  // no job holds an unknown type
  if (no_shrink_at_[t] == epoch_) return std::nullopt;
  RefreshSlopes();
  auto skip = [&](size_t i) {
    return i == grower || std::find(refused.begin(), refused.end(), i) != refused.end();
  };
  std::optional<size_t> lowest;
  if (!slopes_.has_nan()) lowest = slopes_.LowestOfOneSlope(t, kEpsilon, skip);
  if (!lowest) {
    const std::vector<size_t> scanned =
        slopes_.has_nan() ? running_elastic_ : slopes_.LowestChain(t, kEpsilon, skip);
    lowest = LowestSlope(work_, scanned, grower, refused,
                         [&](const Work& w) -> std::optional<double> {
      const ShrinkView& view = ShrinkViewOf(w);
      if (!view.candidate || !view.holds_type[t]) return {};
      return view.slope;
    });
  }
  const bool any = lowest.has_value();  // a candidate other than the grower and refused jobs
  if (!any && refused.empty() &&
      !std::binary_search(running_elastic_.begin(), running_elastic_.end(), grower)) {
    no_shrink_at_[t] = epoch_;
  }
  return lowest;
}

// Rubick §5: "shrinking a job to 0 results in a preemption (possible only for best-effort jobs)".
// Candidates: elastic best-effort jobs that ran when Decide was called and may be reconfigured
// (§5.3), holding devices of the type; lowest loss per device first, ties to the later
// submission. Rigid jobs are never preempted: backfill-awareness promises them their start, and
// a requeued rigid job would jump ahead of the head it was backfilled behind.
// With `min_time_left` > 0, only jobs whose remaining time at their size is at least that.
std::optional<size_t> Engine::LowestSlopePreemptable(const std::string& type, size_t grower,
                                                     const std::vector<size_t>& refused,
                                                     double min_time_left) const {
  return LowestSlope(work_, running_elastic_, grower, refused,
                     [&](const Work& w) -> std::optional<double> {
    if (!Preemptable(w) || !HoldsType(cluster_, w.s.allocation, type)) return {};
    if (min_time_left > 0.0 &&
        w.work / std::max(Speed(w, w.s.allocation), kEpsilon) < min_time_left) {
      return {};
    }
    return PreemptSlope(w);
  });
}

// An elastic best-effort job that ran when Decide was called and may be reconfigured (§5.3).
bool Engine::Preemptable(const Work& w) const {
  if (!w.was_running || !w.running() || !w.s.elastic) return false;
  return w.s.sla_class == SlaClass::kBestEffort && !w.protected_sla && MayResize(w);
}

// Frees devices of `type` until `devices` are free: one at a time from the lowest-slope job above
// its minimum while its slope is below `slope` (case 1) or always when `below_minimum` (case 2);
// a protected guaranteed job below its SLA minimum then preempts best-effort jobs, lowest slope
// first. Each step is logged in `undo`.
void Engine::ReclaimDevices(size_t i, const TypeInfo& type, int devices, double slope,
                            bool below_minimum, std::vector<Undo>& undo, Reclaimed& tally) {
  std::vector<size_t> refused;  // victims the guard would not let shrink
  const bool may_preempt =
      below_minimum && work_[i].protected_sla && options_.preempt_best_effort && preempt_allowed_;
  while (free_[type.name] < devices) {
    // Case 1 takes only from jobs whose slope is below the grower's: when none is (the lowest
    // at this epoch), the scan below would pick one and stop.
    if (!below_minimum && LowestShrinkSlope(type) >= slope - kEpsilon) break;
    bool preempt = false;
    std::optional<size_t> victim = LowestSlopeOverMin(type.name, i, refused);
    if (!victim && may_preempt) {
      victim = LowestSlopePreemptable(type.name, i, refused);
      preempt = victim.has_value();
    }
    if (!victim) break;
    if (!below_minimum && !(ShrinkSlope(work_[*victim]) < slope - kEpsilon)) break;
    if (!TakeFrom(*victim, type.name, preempt, undo, tally)) refused.push_back(*victim);
  }
  if (free_[type.name] < devices && MayPreemptLonger(work_[i])) {
    PreemptLonger(i, type, devices, undo, tally);
  }
}

// elastic: a pending job no SLA protects (best-effort, or guaranteed over its tenant's quota) may
// preempt best-effort jobs that would still run far longer than it (shortest remaining time
// first between jobs no SLA protects).
bool Engine::MayPreemptLonger(const Work& w) const {
  return engine_.preempt_longer && options_.preempt_best_effort && preempt_allowed_ &&
         !w.running() && !w.was_running && w.s.elastic && !w.protected_sla;
}

// Preempts, lowest PreemptSlope first, best-effort jobs whose remaining time at their size is at
// least kPreemptLongerFactor x (job i's run time on `devices` of `type` + a resize), until
// `devices` are free or none is left. Each step is logged in `undo`.
void Engine::PreemptLonger(size_t i, const TypeInfo& type, int devices, std::vector<Undo>& undo,
                           Reclaimed& tally) {
  const Work& w = work_[i];
  const double run = w.work / std::max(CompactSpeed(w, type, devices), kEpsilon);
  const double bound = kPreemptLongerFactor * (run + options_.resize_cost_s);
  std::vector<size_t> refused;
  while (free_[type.name] < devices) {
    std::optional<size_t> victim = LowestSlopePreemptable(type.name, i, refused, bound);
    if (!victim) return;
    if (!TakeFrom(*victim, type.name, /*preempt=*/true, undo, tally)) refused.push_back(*victim);
  }
}

// Takes one device of `type` from `victim`, or all of them (`preempt`); false when SetFit refuses.
bool Engine::TakeFrom(size_t victim, const std::string& type, bool preempt, std::vector<Undo>& undo,
                      Reclaimed& tally) {
  Fit smaller = Current(work_[victim]);
  smaller.allocation = preempt ? Allocation{} : WithoutOne(smaller.allocation, cluster_, type);
  if (!SetFit(victim, smaller, undo)) return false;
  ++(preempt ? tally.preempted : tally.devices);
  return true;
}

// Loss of speed per CPU if the job gives one CPU per device back, ranked (Algorithm 1's slope for
// the CPU dimension; a job holding more CPUs than feed its devices loses nothing).
double Engine::CpuShrinkSlope(const Work& w) const {
  JobState fewer = w.s;
  fewer.cpus_per_device -= 1;
  double loss = Speed(w.s, w.s.allocation) - Speed(fewer, w.s.allocation);
  return Rank(w, loss / std::max(DeviceCount(w.s.allocation), 1));
}

// The job whose CPUs are cheapest to take for a grant on `type`: running elastic jobs that choose
// their CPUs (cpu_adaptive), above their minimum CPUs per device, that may be reconfigured and
// hold devices on a node of the type with free devices (only there can the grant use the CPUs
// they give back). Lowest CpuShrinkSlope first, ties to the later submission.
std::optional<size_t> Engine::LowestCpuSlopeOverMin(const std::string& type, size_t grower,
                                                    const std::vector<size_t>& refused) const {
  return LowestSlope(work_, running_elastic_, grower, refused,
                     [&](const Work& w) -> std::optional<double> {
    if (!w.running() || !w.s.elastic || !w.cpu_adaptive) return {};
    if (w.s.cpus_per_device <= w.s.min_cpus_per_device || !MayResize(w)) return {};
    bool useful = false;  // it holds a node of the type where a device is free
    for (const Slice& slice : w.s.allocation) {
      useful |=
          cluster_.nodes[slice.node].device_type == type && ledger_.FreeDevices(slice.node) > 0;
    }
    if (!useful) return {};
    return CpuShrinkSlope(w);
  });
}

// Places the grant; where CPUs on the nodes with free devices are what is short (it does not
// fit, or only with fewer CPUs per device than feed its devices), takes CPUs from other jobs one
// CPU per device at a time, lowest CPU slope first, never below a job's minimum: in case 1 only
// while the victim loses less per CPU than the grant gains (its slope over the CPUs per device it
// wants), in case 2 (`below_minimum`) whatever the slopes. Steps that did not make the placement
// faster are undone, so no job pays a resize for CPUs nobody uses.
std::optional<Fit> Engine::PlaceReclaimingCpus(size_t i, const TypeInfo& type, int devices,
                                               double slope, bool below_minimum,
                                               std::vector<Undo>& undo, Reclaimed& tally) {
  Work& w = work_[i];
  std::optional<Fit> best = PlaceGrowth(w, type.name, devices);
  if (!engine_.cpus) return best;
  const int want = w.cpu_adaptive ? IdealCpus(w, type) : w.s.cpus_per_device;
  const double gain_per_cpu = slope / std::max(want, 1);
  std::vector<size_t> refused;
  std::vector<Undo> steps;  // CPU steps since the last improvement
  int budget = kCpuReclaimSteps;
  while ((!best || best->cpus_per_device < want) && budget-- > 0) {
    std::optional<size_t> victim = LowestCpuSlopeOverMin(type.name, i, refused);
    if (!victim) break;
    if (!below_minimum && !(CpuShrinkSlope(work_[*victim]) < gain_per_cpu - kEpsilon)) break;
    Fit fewer = Current(work_[*victim]);
    fewer.cpus_per_device -= 1;
    if (!SetFit(*victim, fewer, steps)) {
      refused.push_back(*victim);
      continue;
    }
    std::optional<Fit> retry = PlaceGrowth(w, type.name, devices);
    if (retry && (!best || retry->speed > best->speed + kEpsilon)) {
      best = retry;
      tally.cpus += static_cast<int>(steps.size());
      undo.insert(undo.end(), steps.begin(), steps.end());
      steps.clear();
    }
  }
  Rollback(steps);
  return best;
}

// A note on each job a grant to job i took from (one per job however many steps it gave).
void Engine::NoteVictims(size_t i, const std::vector<Undo>& undo) {
  std::vector<size_t> noted;
  for (const Undo& step : undo) {
    if (step.job == i || !Notes(step.job) ||
        std::find(noted.begin(), noted.end(), step.job) != noted.end()) {
      continue;
    }
    noted.push_back(step.job);
    const Work& victim = work_[step.job];
    const char* what = !victim.running() ? "preempted for "
                       : DeviceCount(victim.s.allocation) < DeviceCount(step.allocation)
                           ? "shrunk for "
                           : "CPUs shrunk for ";
    Note(step.job, what + work_[i].s.id);
  }
}

// ScheduleJob (lines 9-35) for `devices` more devices of `type`: reclaimed as ReclaimDevices
// says, then placed (taking CPUs as PlaceReclaimingCpus says). All or nothing.
bool Engine::Acquire(size_t i, const TypeInfo& type, int devices, double slope, bool below_minimum,
                     const char* why, double min_gain) {
  std::vector<Undo> undo;
  Reclaimed tally;
  ReclaimDevices(i, type, devices, slope, below_minimum, undo, tally);
  Work& w = work_[i];
  std::optional<Fit> next;
  if (free_[type.name] >= devices) {
    next = PlaceReclaimingCpus(i, type, devices, slope, below_minimum, undo, tally);
  }
  // A growth ranked by the compact placement's gain that lands spread over nodes gains less; it
  // waits (EngineOptions::growth_placement_floor).
  if (next && min_gain > 0.0 && w.running() &&
      (next->speed - Speed(w, w.s.allocation)) / devices < min_gain) {
    next.reset();
  }
  if (!next || !SetFit(i, *next, undo)) {
    Rollback(undo);
    return false;
  }
  NoteVictims(i, undo);
  if (!w.was_running && !w.started) {
    w.started = true;
    w.type = type.name;
    ++w.revision;
    ++epoch_;
    slopes_dirty_.push_back(i);
  }
  if (!Notes(i)) return true;
  Note(i, GrantNote(why, devices, type.name, slope, tally, w.s.cpus_per_device));
  model::Shape shape = ShapeOf(cluster_, w.s.allocation, w.s);
  if (shape.groups.size() > 1) {  // spread over device types: say how Eq. 1 placed the ESTs
    char text[240];
    model::EstPlan ests = model::PlanEsts(model::FedShape(w.s.profile, shape), w.s.profile.ests);
    std::string placed = "ESTs per device";
    for (size_t g = 0; g < shape.groups.size() && g < ests.ests_per_device.size(); ++g) {
      std::snprintf(text, sizeof text, " %d on %d x C=%.2g", ests.ests_per_device[g],
                    shape.groups[g].second, shape.groups[g].first);
      placed += text;
    }
    Note(i, placed);
  }
  return true;
}

}  // namespace elastic::policy::rubick
