// Rubick Algorithm 1's phases with optional EASY backfill-awareness (see rubick_policy.h); the
// mechanics they use (placement, ledger, guard) are in rubick_engine.cc.
#include "scheduler/policy/rubick_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <queue>

#include "scheduler/policy/rubick_engine.h"

namespace elastic::policy {
namespace rubick {

// What a slope is worth when ranking jobs. rubick: the slope itself (SortBySlope). elastic: the
// slope times the job's weight by remaining work (WeighByWork).
double Engine::Rank(const Work& w, double slope) const {
  if (!engine_.rank_by_work) return slope;
  return slope * w.rank_weight;
}

// heSRPT (Berg, Vesilo, Harchol-Balter, SIGMETRICS 2020): for mean flow time of jobs with
// speedup k^p, the optimal shares finish jobs in order of remaining work yet keep every job
// running; the job i-th from the largest gets (i/m)^(1/(1-p)) - ((i-1)/m)^(1/(1-p)). A greedy
// that grants each device to the highest weighted slope reaches those shares with weight i^p.
// So a job's weight is (jobs with at least its remaining work)^p: it depends on the order of
// remaining work, not on its ratios. The ratios (Smith's rule, slope / work) gave a short job's
// growth in its flat part priority over a long job's first device, which costs throughput
// wherever jobs' lengths are close (docs/evaluation.md, "Where elastic loses").
void Engine::WeighByWork() {
  std::vector<double> works;  // of the jobs whose shares the ranking sets: elastic ones
  works.reserve(work_.size());
  for (const Work& w : work_) {
    if (w.s.elastic) works.push_back(w.work);
  }
  std::sort(works.begin(), works.end());
  for (Work& w : work_) {
    const auto at_least = works.end() - std::lower_bound(works.begin(), works.end(), w.work);
    w.rank_weight = std::pow(static_cast<double>(at_least), kRankExponent);
  }
}

// Rubick §5.2's starvation threshold. Under elastic's ranking a long job waits behind shorter
// ones by design, so it counts as starving only once it has waited elastic_starvation_slowdown
// times as long as it would run (default 1: a slowdown of 2), and never before the threshold.
double Engine::StarvationThreshold(const Work& w) const {
  if (!engine_.rank_by_work) return options_.starvation_threshold_s;
  return std::max(options_.starvation_threshold_s,
                  options_.elastic_starvation_slowdown * w.s.expected_runtime_s);
}

// Start a pending job at its minimum on the best type that works (types by speed). A job that
// may preempt longer ones (MayPreemptLonger) tries every type without preempting first, as a
// guaranteed job does (AdmitGuaranteed): a free slower type beats sending a job back to the queue.
bool Engine::StartAtFloor(size_t i, bool below_minimum, const char* why) {
  const bool started = WithoutPreemption([&] { return StartOnSomeType(i, below_minimum, why); });
  if (started || !MayPreemptLonger(work_[i])) return started;
  return StartOnSomeType(i, below_minimum, why);
}

bool Engine::StartOnSomeType(size_t i, bool below_minimum, const char* why) {
  for (const TypeInfo& type : types_) {
    int floor = Floor(work_[i], type);
    if (floor > type.total) continue;
    double slope = Rank(work_[i], CompactSpeed(work_[i], type, floor) / floor);
    if (Acquire(i, type, floor, slope, below_minimum, why)) return true;
  }
  return false;
}

// Guaranteed jobs within quota (§5.2): running ones in start order keep their protection
// while the tenant's quota (counted in minRes) lasts; pending ones are admitted in Privileged.
void Engine::AssignProtection() {
  quota_left_ = cluster_.tenant_quota;
  std::vector<size_t> running;
  for (size_t i = 0; i < work_.size(); ++i) {
    if (work_[i].was_running && work_[i].s.sla_class == SlaClass::kGuaranteed) {
      running.push_back(i);
    }
  }
  std::sort(running.begin(), running.end(), [this](size_t a, size_t b) {
    if (work_[a].s.started_s != work_[b].s.started_s) {
      return work_[a].s.started_s < work_[b].s.started_s;
    }
    return work_[a].s.id < work_[b].s.id;
  });
  for (size_t i : running) {
    Work& w = work_[i];
    auto quota = quota_left_.find(w.s.tenant);
    if (quota == quota_left_.end()) continue;
    SetProtected(w, true);
    int floor = Floor(w);
    if (floor <= quota->second) {
      quota->second -= floor;
    } else {
      SetProtected(w, false);
    }
  }
}

// Algorithm 1 lines 1-3: privileged = guaranteed jobs whose minRes fits the tenant's quota
// left; they may reclaim devices whatever the slopes (the victim stays above its minimum).
void Engine::Privileged() {
  for (size_t i = 0; i < work_.size(); ++i) {  // running but below minRes (e.g. quota freed)
    Work& w = work_[i];
    if (!w.protected_sla || !w.running() || w.touched) continue;
    int missing = Floor(w) - DeviceCount(w.s.allocation);
    if (missing > 0 && MayResize(w)) {
      Acquire(i, Type(w.type), missing, 0.0, true, "guaranteed, up to minRes");
    } else if (MayResize(w) && Speed(w, w.s.allocation) + kEpsilon < OwedSpeed(w)) {
      Repack(i);  // e.g. started spread as best-effort, protected since
    }
  }
  for (size_t i : PrivilegedOrder()) {
    Work& w = work_[i];
    if (w.running() || w.s.sla_class != SlaClass::kGuaranteed) continue;
    if (engine_.backfill_aware && !w.s.elastic) continue;  // rigid jobs went first
    auto quota = quota_left_.find(w.s.tenant);
    if (quota == quota_left_.end()) continue;
    // Within quota on some type: it is owed its SLA, so it waits rather than start smaller as
    // best-effort; over quota everywhere: it runs best-effort (protected_sla false).
    bool within_quota = false;
    bool started = false;
    if (engine_.preempt_last) {  // every type without preemption first (see AdmitGuaranteed)
      started = WithoutPreemption([&] { return AdmitGuaranteed(i, quota->second, within_quota); });
    }
    if (!started && (within_quota || !engine_.preempt_last)) {
      AdmitGuaranteed(i, quota->second, within_quota);
    }
    SetProtected(w, within_quota);
  }
}

// The order pending guaranteed jobs claim their tenant's quota. rubick: queue order. elastic:
// least remaining work first, as best-effort jobs are ranked, except that jobs past
// their starvation threshold go first in queue order.
std::vector<size_t> Engine::PrivilegedOrder() const {
  std::vector<size_t> order = Queue();
  if (!engine_.rank_by_work) return order;
  auto starving = [this](size_t i) {
    return now_ - work_[i].s.submit_time_s >= StarvationThreshold(work_[i]);
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    bool sa = starving(a), sb = starving(b);
    if (sa != sb) return sa;
    if (sa) return false;  // both starving: queue order
    return work_[a].work < work_[b].work;
  });
  return order;
}

// Starts pending guaranteed job `i` at its minRes on the first type (fastest first) where that
// fits `quota_left` and Acquire succeeds; `within_quota` is set if some type's minRes fits.
// elastic calls it twice, first with preemption off. minRes on any type gives the job the
// speed it is owed (Rubick §5.1), so the SLA is met either way, while a preemption sends a
// best-effort job back to the queue to pay a restart and wait (ranked by remaining work, a long
// victim may wait long): it is the last resort after every type's free devices and jobs above
// their minimum (Rubick §5: preemption exists "to avoid SLA violations for guaranteed jobs";
// EasyScale §3.4: any device type can host the job's ESTs).
bool Engine::AdmitGuaranteed(size_t i, int& quota_left, bool& within_quota) {
  Work& w = work_[i];
  for (const TypeInfo& type : types_) {
    SetProtected(w, true);
    int floor = Floor(w, type);
    if (floor > quota_left || floor > type.total) continue;
    within_quota = true;
    std::vector<Undo> room;
    const bool compact = MakeCompactRoom(i, type, floor, room);
    // elastic's first pass (no preemption) does not settle for a spread placement that a
    // preemption could avoid: the second pass may preempt for room on few nodes.
    if (!compact && !preempt_allowed_) {
      Rollback(room);
      continue;
    }
    if (!Acquire(i, type, floor, 0.0, true, "guaranteed within quota")) {
      Rollback(room);
      continue;
    }
    quota_left -= floor;
    return true;
  }
  return false;
}

// elastic only: rigid jobs in queue order, EASY style. Until one cannot start, each may reclaim
// elastic devices above minimum; the first that cannot start becomes the head with backfill's
// reservation, and every later action is checked against it (SetFit).
void Engine::RigidFirst() {
  for (size_t i : Queue()) {
    const JobState* job = &work_[i].s;
    if (work_[i].s.elastic) continue;
    int need = job->requested_devices;
    bool started = false;
    for (const TypeInfo& type : types_) {
      if (need > type.total) continue;
      double slope = Rank(work_[i], CompactSpeed(work_[i], type, need) / need);
      if (!head_ ? Acquire(i, type, need, slope, true, "rigid, queue order")
                 : (free_[type.name] >= need &&
                    Acquire(i, type, need, slope, false, "rigid, backfilled"))) {
        started = true;
        break;
      }
    }
    if (started || head_) continue;
    ReserveForHead(i);
  }
}

// Algorithm 1 lines 5-7: SortBySlope over best-effort (pending) and running jobs, re-sorted
// after every grant (a heap keyed by slope; entries go stale when a job's size changes).
void Engine::BySlope() {
  for (size_t i : Queue()) {  // starving best-effort jobs first
    const Work& w = work_[i];
    if (w.running() || (engine_.backfill_aware && !w.s.elastic) || w.protected_sla) continue;
    if (now_ - w.s.submit_time_s >= StarvationThreshold(w)) {
      StartAtFloor(i, true, "starving best-effort");
    }
  }
  auto less = [this](const Growth& a, const Growth& b) {
    if (a.slope != b.slope) return a.slope < b.slope;
    const JobState& ja = work_[a.job].s;
    const JobState& jb = work_[b.job].s;
    if (ja.submit_time_s != jb.submit_time_s) return ja.submit_time_s > jb.submit_time_s;
    return ja.id > jb.id;
  };
  std::priority_queue<Growth, std::vector<Growth>, decltype(less)> heap(less);
  auto push = [&](size_t i) {
    if (std::optional<Growth> growth = BestGrowth(i)) heap.push(*growth);
  };
  for (size_t i = 0; i < work_.size(); ++i) push(i);
  long budget = 4L * (static_cast<long>(work_.size()) + TotalDevices());
  while (!heap.empty() && budget-- > 0) {
    Growth best = heap.top();
    heap.pop();
    Work& w = work_[best.job];
    if (best.version != w.version) continue;
    resized_.clear();
    bool ok = w.running() ? Acquire(best.job, types_[best.type], best.devices, best.slope,
                                    false, "grow by slope",
                                    engine_.growth_placement_floor * best.gain)
                          : StartAtFloor(best.job, false, "start by slope");
    if (!ok) continue;  // nothing to take at this slope: the job is done for this round
    std::sort(resized_.begin(), resized_.end());  // re-ranked in index order, as jobs are
    for (const auto& [k, before] : resized_) {
      if (before != DeviceCount(work_[k].s.allocation)) {
        ++work_[k].version;
        push(k);
      }
    }
  }
}

// Re-places running elastic jobs when that makes them faster by more than the checkpoint-resume
// costs: jobs spread over more nodes than needed go on fewer (Rubick §4.1: the inter-node
// bandwidth is the bottleneck), and jobs holding fewer CPUs than feed their devices get more
// where nodes have them (Rubick §5: CPUs are grown like devices). A reconfiguration like any
// other, so §5.3's penalty applies.
void Engine::Consolidate() {
  for (size_t i = 0; i < work_.size(); ++i) {
    Work& w = work_[i];
    if (!w.running() || !w.s.elastic || w.started || !MayResize(w)) continue;
    bool spread = w.s.allocation.size() >= 2;
    bool starved = w.cpu_adaptive && w.s.cpus_per_device < IdealCpus(w, Type(w.type));
    if (!spread && !starved) continue;
    if (!starved && PlacementIsMoot(w, w.type)) continue;  // on fewer nodes it cannot be
    std::optional<Fit> moved = Replace(w, w.type, DeviceCount(w.s.allocation));
    if (!moved) continue;
    double before = Speed(w, w.s.allocation);
    if (!(moved->speed > before + kEpsilon)) continue;
    if (w.work / before - w.work / moved->speed <= options_.resize_cost_s) continue;
    std::vector<Undo> undo;
    if (SetFit(i, *moved, undo)) {
      Note(i, moved->allocation.size() < w.original->allocation.size()
                  ? "re-placed on fewer nodes"
                  : "re-placed with more CPUs");
    }
  }
}

// The job's most valuable next step: pending -> start at its minimum on its best type;
// running -> the increment (1, 2, 4, ... devices) with the highest speedup gain per device.
std::optional<Engine::Growth> Engine::BestGrowth(size_t i) const {
  const Work& w = work_[i];
  if (engine_.backfill_aware && !w.s.elastic) return std::nullopt;
  if (!w.running()) {
    if (w.protected_sla) return std::nullopt;  // privileged job that did not fit
    if (w.was_running) return std::nullopt;    // preempted this round: back in the queue next
    std::optional<Growth> best;
    for (const TypeInfo& type : types_) {
      int floor = Floor(w, type);
      if (floor > type.total) continue;
      double slope = Rank(w, CompactSpeed(w, type, floor) / floor);
      if (!best || slope > best->slope) {
        best = Growth{slope, floor, i, w.version, TypeIndex(type.name)};
      }
    }
    return best;
  }
  if (!w.s.elastic || !MayResize(w)) return std::nullopt;
  const TypeInfo& type = Type(w.type);
  int count = DeviceCount(w.s.allocation);
  double speed = CompactSpeed(w, type, count);
  std::optional<Growth> best;
  for (int d = 1; count + d <= std::min(w.s.max_devices, type.total); d *= 2) {
    const double gain = (CompactSpeed(w, type, count + d) - speed) / d;
    const double slope = Rank(w, gain);
    if (slope > kEpsilon && (!best || slope >= best->slope)) {
      best = Growth{slope, d, i, w.version, TypeIndex(type.name), gain};
    }
  }
  if (engine_.hetero) AddOtherTypes(w, i, best);
  return best;
}

// elastic: a job may also grow onto another device type (EasyScale §3.4, heterogeneous devices).
// The mixed allocation is priced by the intra-job planner (model::PlanEsts, Eq. 1a-1d): faster
// devices host more ESTs, so the slowest type does not bound the job; spanning types means
// spanning nodes, so the inter-node all-reduce is priced too.
void Engine::AddOtherTypes(const Work& w, size_t i, std::optional<Growth>& best) const {
  if (free_.at(w.type) > 0) return;  // its own type first: mixing spans nodes and types
  int count = DeviceCount(w.s.allocation);
  model::Shape now = ShapeOf(cluster_, w.s.allocation, w.s);
  double speed = model::Speedup(w.s.profile, now, cluster_.environment);
  if (speed <= 0.0) return;
  for (size_t t = 0; t < types_.size(); ++t) {
    const TypeInfo& other = types_[t];
    if (other.name == w.type || free_.at(other.name) <= 0) continue;
    for (int d = 1; count + d <= w.s.max_devices && d <= free_.at(other.name); d *= 2) {
      model::Shape grown = now;
      grown.groups.emplace_back(other.capability, d);
      grown.nodes += (d + other.per_node - 1) / other.per_node;
      double faster = model::Speedup(w.s.profile, grown, cluster_.environment);
      // Worth it only if it saves more than the resize now and one to consolidate later.
      if (w.work / speed - w.work / std::max(faster, 1e-12) <= 2 * options_.resize_cost_s) {
        continue;
      }
      const double gain = (faster - speed) / d;
      const double slope = Rank(w, gain);
      if (slope > kEpsilon && (!best || slope > best->slope)) {
        best = Growth{slope, d, i, w.version, t, gain};
      }
    }
  }
}

}  // namespace rubick

double OwedSpeedup(const JobState& job, const PolicyOptions& options,
                   const model::Environment& env) {
  model::JobProfile as_submitted = job.profile;
  as_submitted.plan = job.profile.submitted;
  return model::CompactSpeedup(as_submitted, job.requested_devices,
                               options.reference_devices_per_node, env);
}

int MinResDevices(const JobState& job, double capability, int devices_per_node,
                  const PolicyOptions& options, const model::Environment& env) {
  if (!job.elastic) return job.requested_devices;
  const double owed = OwedSpeedup(job, options, env);
  int per_node = std::max(devices_per_node, 1);
  for (int k = std::max(job.min_devices, 1); k < job.requested_devices; ++k) {
    model::Shape shape{{{capability, k}}, (k + per_node - 1) / per_node};
    if (model::Speedup(job.profile, shape, env) >= owed - rubick::kEpsilon) return k;
  }
  return job.requested_devices;
}

std::string_view RubickPolicy::Name() const {
  if (backfill_aware_) return "elastic";
  switch (variant_) {
    case RubickVariant::kPlansOnly: return "rubick-e";
    case RubickVariant::kResourcesOnly: return "rubick-r";
    case RubickVariant::kNeither: return "rubick-n";
    case RubickVariant::kFull: break;
  }
  return "rubick";
}

PolicyOutput RubickPolicy::Decide(const ClusterState& cluster, const std::vector<JobState>& jobs,
                                  double now_s) const {
  if (cluster.nodes.empty()) return {};
  rubick::EngineOptions engine;
  engine.backfill_aware = backfill_aware_;
  engine.cpus = SchedulesCpus();
  engine.hetero = backfill_aware_ && options_.elastic_mixed_types;
  engine.rank_by_work = backfill_aware_ && options_.elastic_shortest_work_first;
  engine.preempt_last = backfill_aware_;
  engine.preempt_longer = backfill_aware_ && options_.elastic_preempt_longer;
  if (backfill_aware_ && options_.elastic_compact_growth) {
    engine.growth_placement_floor = rubick::kGrowthPlacementFloor;
  }
  return rubick::Engine(cluster, jobs, now_s, options_, engine).Run();
}

}  // namespace elastic::policy
