// Rubick Algorithm 1 with optional EASY backfill-awareness (see rubick_policy.h).
#include "scheduler/policy/rubick_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <queue>

#include "scheduler/policy/placement.h"
#include "scheduler/policy/reservation.h"

namespace elastic::policy {
namespace {

constexpr double kEpsilon = 1e-9;

struct TypeInfo {
  std::string name;
  double capability = 1.0;
  int per_node = 1;  // largest node of the type
  int total = 0;
};

struct Work {
  JobState s;
  Allocation original;
  bool was_running = false;
  bool started = false;        // started in this round
  bool touched = false;        // resized in this round (one resize however many steps)
  bool protected_sla = false;  // guaranteed and within its tenant's quota
  std::string type;            // device type it runs on ("" while pending)
  double work = 0.0;           // reference-GPU-seconds left
  int version = 0;
  std::string reason;
  bool running() const { return !s.allocation.empty(); }
};

// One heap entry of phase 2: job `job` wants `devices` more at `slope` speedup per device.
struct Growth {
  double slope = 0.0;
  int devices = 0;
  size_t job = 0;
  int version = 0;
};

// Undo record for a tentative acquisition that may have to be rolled back.
struct Undo {
  size_t job;
  Allocation allocation;
  bool touched;
  int held;
};

class Engine {
 public:
  Engine(const ClusterState& cluster, const std::vector<JobState>& jobs, double now_s,
         const PolicyOptions& options, bool backfill_aware)
      : cluster_(cluster), now_(now_s), options_(options), aware_(backfill_aware),
        ledger_(cluster) {
    for (const std::string& name : TypesByCapability(cluster)) {
      TypeInfo info{name, 1.0, 1, 0};
      for (const NodeState& node : cluster.nodes) {
        if (node.device_type != name) continue;
        info.capability = node.capability;
        info.per_node = std::max(info.per_node, node.devices);
        info.total += node.devices;
      }
      free_[name] = ledger_.FreeDevicesOfType(name);
      types_.push_back(info);
    }
    for (const JobState& job : jobs) {
      Work w;
      w.s = job;
      w.original = job.allocation;
      w.was_running = job.running();
      if (w.was_running) w.type = cluster.nodes[job.allocation.front().node].device_type;
      w.work = RemainingWork(w);
      index_[job.id] = work_.size();
      work_.push_back(std::move(w));
    }
    held_.assign(work_.size(), 0);
  }

  PolicyOutput Run() {
    AssignProtection();
    if (aware_) RigidFirst();
    Privileged();
    BySlope();
    Consolidate();
    PolicyOutput output;
    if (head_) output.reservations.push_back(head_->reservation);
    std::vector<size_t> changed;
    for (size_t i = 0; i < work_.size(); ++i) {
      if (work_[i].started || (work_[i].was_running && work_[i].s.allocation != work_[i].original)) {
        changed.push_back(i);
      }
    }
    for (size_t i : ApplicableOrder(changed)) {
      const Work& w = work_[i];
      output.decisions.push_back({w.started ? DecisionKind::kStart : DecisionKind::kResize, w.s.id,
                                  w.s.allocation, w.reason});
    }
    return output;
  }

 private:
  // Decisions are applied one by one, so a job growing into devices another job gives back must
  // come after it: repeatedly emit the first change whose per-node growth fits what is free.
  // Re-placed jobs (a resize may move a job) can form cycles (a takes b's old node while b takes
  // a's); what never fits is dropped, leaving those jobs where they are, which is always valid.
  std::vector<size_t> ApplicableOrder(std::vector<size_t> changed) const {
    std::vector<int> free;
    for (const NodeState& node : cluster_.nodes) free.push_back(node.free_devices);
    std::vector<size_t> order;
    while (!changed.empty()) {
      std::optional<size_t> fitting;
      for (size_t k = 0; k < changed.size() && !fitting; ++k) {
        bool fits = true;
        for (const auto& [node, devices] : Delta(work_[changed[k]])) fits &= devices <= free[node];
        if (fits) fitting = k;
      }
      if (!fitting) break;
      size_t pick = *fitting;
      for (const auto& [node, devices] : Delta(work_[changed[pick]])) free[node] -= devices;
      order.push_back(changed[pick]);
      changed.erase(changed.begin() + static_cast<long>(pick));
    }
    return order;
  }
  static std::map<int, int> Delta(const Work& w) {
    std::map<int, int> delta;
    for (const Slice& slice : w.s.allocation) delta[slice.node] += slice.devices;
    for (const Slice& slice : w.original) delta[slice.node] -= slice.devices;
    return delta;
  }

  // ---- model views --------------------------------------------------------------------------
  const TypeInfo& Type(const std::string& name) const {
    for (const TypeInfo& info : types_) {
      if (info.name == name) return info;
    }
    return types_.front();
  }

  double CompactSpeed(const Work& w, const TypeInfo& type, int devices) const {
    if (devices <= 0) return 0.0;
    model::Shape shape{{{type.capability, devices}}, (devices + type.per_node - 1) / type.per_node};
    return model::Speedup(w.s.profile, shape, cluster_.environment);
  }

  double RemainingWork(const Work& w) const {
    if (w.s.remaining_work > 0.0) return w.s.remaining_work;
    if (w.was_running && w.s.expected_end_s != kNever) {
      return std::max(0.0, w.s.expected_end_s - now_) *
             model::Speedup(w.s.profile, ShapeOf(cluster_, w.s.allocation), cluster_.environment);
    }
    return w.s.expected_runtime_s * model::CompactSpeedup(w.s.profile, w.s.requested_devices,
                                                          options_.reference_devices_per_node,
                                                          cluster_.environment);
  }

  // The job's minimum on `type`: minRes for a protected guaranteed job, else min_devices; rigid
  // jobs never change size.
  int Floor(const Work& w, const TypeInfo& type) const {
    if (!w.s.elastic) return w.s.requested_devices;
    int floor = w.s.min_devices;
    if (w.protected_sla) {
      floor = std::max(floor, MinResDevices(w.s, type.capability, type.per_node, options_,
                                            cluster_.environment));
    }
    return std::min(floor, w.s.max_devices);
  }
  int Floor(const Work& w) const { return Floor(w, Type(w.type)); }

  // Rubick §5.3: (T - N*delta)/T >= threshold, counting the resize being considered.
  bool PenaltyAllows(const Work& w) const {
    double elapsed = now_ - w.s.started_s;
    if (!(elapsed > 0.0)) return false;
    double n = static_cast<double>(w.s.resizes + 1);
    return (elapsed - n * options_.resize_cost_s) / elapsed >= options_.reconfigure_threshold;
  }
  // Jobs started in this round, or already resized in it, change size at no further cost.
  bool MayResize(const Work& w) const {
    return !w.was_running || w.touched || PenaltyAllows(w);
  }

  // When the job would release `allocation` (the simulator's own formula when it supplies work).
  double EndEstimate(const Work& w, const Allocation& allocation) const {
    if (allocation.empty()) return now_;
    if (w.was_running && allocation == w.original) return w.s.expected_end_s;
    double speed = model::Speedup(w.s.profile, ShapeOf(cluster_, allocation), cluster_.environment);
    if (speed <= 0.0) return kNever;
    return now_ + (w.was_running ? options_.resize_cost_s : 0.0) + w.work / speed;
  }

  // ---- backfill-awareness guard (elastic only) ----------------------------------------------
  int HeldAtReservation(const Work& w, const Allocation& allocation) const {
    if (!head_ || allocation.empty()) return 0;
    if (EndEstimate(w, allocation) <= head_->reservation.start_s + kEpsilon) return 0;
    int devices = 0;
    for (const Slice& slice : allocation) {
      if (cluster_.nodes[slice.node].device_type == head_->reservation.device_type) {
        devices += slice.devices;
      }
    }
    return devices;
  }

  void ActivateGuard(size_t head_job) {
    head_job_ = head_job;
    int need = work_[head_job].s.requested_devices;
    slack_ = Type(head_->reservation.device_type).total - need;
    for (size_t i = 0; i < work_.size(); ++i) {
      held_[i] = HeldAtReservation(work_[i], work_[i].s.allocation);
      slack_ -= held_[i];
    }
  }

  // ---- ledger -------------------------------------------------------------------------------
  void Move(const Allocation& from, const Allocation& to, const JobState& job) {
    ledger_.Give(from, job);
    ledger_.Take(to, job);
    for (const Slice& slice : from) free_[cluster_.nodes[slice.node].device_type] += slice.devices;
    for (const Slice& slice : to) free_[cluster_.nodes[slice.node].device_type] -= slice.devices;
  }

  // Sets job i's allocation if the guard allows it; logs the old state for rollback.
  bool SetAllocation(size_t i, const Allocation& next, std::vector<Undo>& undo) {
    Work& w = work_[i];
    int held = HeldAtReservation(w, next);
    bool is_head = head_ && i == head_job_;
    if (head_ && !is_head && held - held_[i] > slack_) return false;
    undo.push_back({i, w.s.allocation, w.touched, held_[i]});
    Move(w.s.allocation, next, w.s);
    w.s.allocation = next;
    if (w.was_running) w.touched = true;
    if (head_ && !is_head) {
      slack_ -= held - held_[i];
      held_[i] = held;
    }
    if (is_head) head_.reset();  // the head starts now: nothing left to protect this round
    return true;
  }

  void Rollback(std::vector<Undo>& undo) {
    for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
      Work& w = work_[it->job];
      Move(w.s.allocation, it->allocation, w.s);
      w.s.allocation = it->allocation;
      w.touched = it->touched;
      if (head_) {
        slack_ += held_[it->job] - it->held;
        held_[it->job] = it->held;
      }
    }
    undo.clear();
  }

  // ---- Algorithm 1 pieces -------------------------------------------------------------------
  // Loss of speed per device if the job gives one device back.
  double ShrinkSlope(const Work& w) const {
    int count = DeviceCount(w.s.allocation);
    const TypeInfo& type = Type(w.type);
    return CompactSpeed(w, type, count) - CompactSpeed(w, type, count - 1);
  }

  // GetLowestSlopeOverMinJob (line 13) over the device type: ties go to the later submission.
  std::optional<size_t> LowestSlopeOverMin(const std::string& type, size_t grower,
                                           const std::vector<size_t>& refused) const {
    std::optional<size_t> best;
    double best_slope = 0.0;
    for (size_t i = 0; i < work_.size(); ++i) {
      const Work& w = work_[i];
      if (i == grower || !w.running() || w.type != type || !w.s.elastic) continue;
      if (DeviceCount(w.s.allocation) <= Floor(w) || !MayResize(w)) continue;
      if (std::find(refused.begin(), refused.end(), i) != refused.end()) continue;
      double slope = ShrinkSlope(w);
      if (!best || slope < best_slope - kEpsilon ||
          (std::abs(slope - best_slope) <= kEpsilon &&
           work_[*best].s.submit_time_s < w.s.submit_time_s)) {
        best = i;
        best_slope = slope;
      }
    }
    return best;
  }

  // One device fewer: taken from the job's smallest slice (later node on ties).
  static Allocation WithoutOne(const Allocation& allocation) {
    Allocation next = allocation;
    size_t pick = 0;
    for (size_t k = 1; k < next.size(); ++k) {
      if (next[k].devices <= next[pick].devices) pick = k;
    }
    if (--next[pick].devices == 0) next.erase(next.begin() + static_cast<long>(pick));
    return next;
  }

  // ScheduleJob (lines 9-35) for `devices` more devices of `type`: free ones first, then
  // reclaimed one at a time from the lowest-slope job above its minimum while its slope is
  // below `slope` (case 1) or always when `below_minimum` (case 2). All or nothing.
  bool Acquire(size_t i, const TypeInfo& type, int devices, double slope, bool below_minimum,
               const char* why) {
    std::vector<Undo> undo;
    std::vector<size_t> refused;  // victims the guard would not let shrink
    int victims = 0;
    while (free_[type.name] < devices) {
      std::optional<size_t> victim = LowestSlopeOverMin(type.name, i, refused);
      if (!victim) break;
      if (!below_minimum && !(ShrinkSlope(work_[*victim]) < slope - kEpsilon)) break;
      if (SetAllocation(*victim, WithoutOne(work_[*victim].s.allocation), undo)) {
        ++victims;
      } else {
        refused.push_back(*victim);
      }
    }
    Work& w = work_[i];
    std::optional<Allocation> next;
    if (free_[type.name] >= devices) next = PlaceGrowth(w, type.name, devices);
    if (!next || !SetAllocation(i, *next, undo)) {
      Rollback(undo);
      return false;
    }
    for (const Undo& step : undo) {
      if (step.job != i) Note(step.job, "shrunk for " + w.s.id);
    }
    if (!w.was_running && !w.started) {
      w.started = true;
      w.type = type.name;
    }
    char text[160];
    std::snprintf(text, sizeof text, "%s +%d %s (slope %.3f/device, %d reclaimed)", why, devices,
                  type.name.c_str(), slope, victims);
    Note(i, text);
    return true;
  }

  double Speed(const Work& w, const Allocation& allocation) const {
    return model::Speedup(w.s.profile, ShapeOf(cluster_, allocation), cluster_.environment);
  }

  // The job's whole allocation after `devices` more of `type`, placed by the model (Rubick §5.2:
  // the curves see the inter-node bandwidth, so a job spread over nodes is slower). A running job
  // is restarted by any resize (checkpoint-resume, §5.3), so besides growing in place it may be
  // re-placed from scratch; the faster of the two wins (in place on ties). A growth that would
  // not make a running job faster (it spreads the job) is refused.
  std::optional<Allocation> PlaceGrowth(const Work& w, const std::string& type, int devices) {
    std::optional<Allocation> delta = PickDevices(cluster_, ledger_, w.s, type, devices);
    std::optional<Allocation> best;
    if (delta) best = Merge(w.s.allocation, *delta);
    if (!w.running()) return best;
    std::optional<Allocation> moved = Replace(w, type, DeviceCount(w.s.allocation) + devices);
    double current = Speed(w, w.s.allocation);
    double best_speed = best ? Speed(w, *best) : 0.0;
    if (moved && Speed(w, *moved) > best_speed + kEpsilon) {
      best = moved;
      best_speed = Speed(w, *moved);
    }
    if (!best || best_speed <= current + kEpsilon) return std::nullopt;
    return best;
  }

  // A fresh placement of `count` devices of `type` for w, as if it gave its own back first.
  std::optional<Allocation> Replace(const Work& w, const std::string& type, int count) {
    for (const Slice& slice : w.s.allocation) {
      if (cluster_.nodes[slice.node].device_type != type) return std::nullopt;
    }
    JobState fresh = w.s;
    fresh.allocation.clear();
    ledger_.Give(w.s.allocation, w.s);
    std::optional<Allocation> whole = PickDevices(cluster_, ledger_, fresh, type, count);
    ledger_.Take(w.s.allocation, w.s);
    return whole;
  }

  void Note(size_t i, const std::string& text) {
    Work& w = work_[i];
    if (w.reason.empty()) {
      w.reason = aware_ ? "elastic:" : "rubick:";
    } else if (w.reason.size() > 400) {
      return;  // long growth chains: the first steps say why
    }
    w.reason += " " + text + ";";
  }

  // Start a pending job at its minimum on the best type that works (types by speed).
  bool StartAtFloor(size_t i, bool below_minimum, const char* why) {
    for (const TypeInfo& type : types_) {
      int floor = Floor(work_[i], type);
      if (floor > type.total) continue;
      double slope = CompactSpeed(work_[i], type, floor) / floor;
      if (Acquire(i, type, floor, slope, below_minimum, why)) return true;
    }
    return false;
  }

  // Guaranteed jobs within quota (§5.2): running ones in start order keep their protection
  // while the tenant's quota (counted in minRes) lasts; pending ones are admitted in Privileged.
  void AssignProtection() {
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
      w.protected_sla = true;
      int floor = Floor(w);
      if (floor <= quota->second) {
        quota->second -= floor;
      } else {
        w.protected_sla = false;
      }
    }
  }

  // Algorithm 1 lines 1-3: privileged = guaranteed jobs whose minRes fits the tenant's quota
  // left; they may reclaim devices whatever the slopes (the victim stays above its minimum).
  void Privileged() {
    for (size_t i = 0; i < work_.size(); ++i) {  // running but below minRes (e.g. quota freed)
      Work& w = work_[i];
      if (!w.protected_sla || !w.running() || w.touched) continue;
      int missing = Floor(w) - DeviceCount(w.s.allocation);
      if (missing > 0 && MayResize(w)) {
        Acquire(i, Type(w.type), missing, 0.0, true, "guaranteed, up to minRes");
      }
    }
    for (size_t i : Queue()) {
      Work& w = work_[i];
      if (w.running() || w.s.sla_class != SlaClass::kGuaranteed) continue;
      if (aware_ && !w.s.elastic) continue;  // rigid jobs went first
      auto quota = quota_left_.find(w.s.tenant);
      if (quota == quota_left_.end()) continue;
      // Within quota on some type: it is owed its SLA, so it waits rather than start smaller as
      // best-effort; over quota everywhere: it runs best-effort (protected_sla false).
      bool within_quota = false;
      for (const TypeInfo& type : types_) {
        w.protected_sla = true;
        int floor = Floor(w, type);
        if (floor > quota->second || floor > type.total) continue;
        within_quota = true;
        if (!Acquire(i, type, floor, 0.0, true, "guaranteed within quota")) continue;
        quota->second -= floor;
        break;
      }
      w.protected_sla = within_quota;
    }
  }

  // elastic only: rigid jobs in queue order, EASY style. Until one cannot start, each may reclaim
  // elastic devices above minimum; the first that cannot start becomes the head with backfill's
  // reservation, and every later action is checked against it (SetAllocation).
  void RigidFirst() {
    for (size_t i : Queue()) {
      const JobState* job = &work_[i].s;
      if (work_[i].s.elastic) continue;
      int need = job->requested_devices;
      bool started = false;
      for (const TypeInfo& type : types_) {
        if (need > type.total) continue;
        double slope = CompactSpeed(work_[i], type, need) / need;
        if (!head_ ? Acquire(i, type, need, slope, true, "rigid, queue order")
                   : (free_[type.name] >= need &&
                      Acquire(i, type, need, slope, false, "rigid, backfilled"))) {
          started = true;
          break;
        }
      }
      if (started || head_) continue;
      std::map<std::string, Releases> releases;
      for (size_t k = 0; k < work_.size(); ++k) {
        const Work& w = work_[k];
        if (w.running()) AddReleases(cluster_, w.s.allocation, EndEstimate(w, w.s.allocation),
                                     releases);
      }
      head_ = Reserve(cluster_, ledger_, releases, *job, now_);
      if (head_) ActivateGuard(i);
    }
  }

  // Algorithm 1 lines 5-7: SortBySlope over best-effort (pending) and running jobs, re-sorted
  // after every grant (a heap keyed by slope; entries go stale when a job's size changes).
  void BySlope() {
    for (size_t i : Queue()) {  // starving best-effort jobs first
      const Work& w = work_[i];
      if (w.running() || (aware_ && !w.s.elastic) || w.protected_sla) continue;
      if (now_ - w.s.submit_time_s >= options_.starvation_threshold_s) {
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
      std::vector<size_t> before = Sizes();
      bool ok = w.running() ? Acquire(best.job, Type(w.type), best.devices, best.slope, false,
                                      "grow by slope")
                            : StartAtFloor(best.job, false, "start by slope");
      if (!ok) continue;  // nothing to take at this slope: the job is done for this round
      std::vector<size_t> after = Sizes();
      for (size_t k = 0; k < work_.size(); ++k) {
        if (before[k] != after[k]) {
          ++work_[k].version;
          push(k);
        }
      }
    }
  }

  // Re-places running elastic jobs spread over more nodes than needed onto fewer, when the
  // speedup (Rubick §4.1: the inter-node bandwidth is the bottleneck) saves more time than the
  // checkpoint-resume costs; a reconfiguration like any other, so §5.3's penalty applies.
  void Consolidate() {
    for (size_t i = 0; i < work_.size(); ++i) {
      Work& w = work_[i];
      if (!w.running() || !w.s.elastic || w.started || w.s.allocation.size() < 2) continue;
      if (!MayResize(w)) continue;
      std::optional<Allocation> moved = Replace(w, w.type, DeviceCount(w.s.allocation));
      if (!moved || moved->size() >= w.s.allocation.size()) continue;
      double before = Speed(w, w.s.allocation);
      double after = Speed(w, *moved);
      if (w.work / before - w.work / after <= options_.resize_cost_s) continue;
      std::vector<Undo> undo;
      if (SetAllocation(i, *moved, undo)) Note(i, "re-placed on fewer nodes");
    }
  }

  // The job's most valuable next step: pending -> start at its minimum on its best type;
  // running -> the increment (1, 2, 4, ... devices) with the highest speedup gain per device.
  std::optional<Growth> BestGrowth(size_t i) const {
    const Work& w = work_[i];
    if (aware_ && !w.s.elastic) return std::nullopt;
    if (!w.running()) {
      if (w.protected_sla) return std::nullopt;  // privileged job that did not fit
      std::optional<Growth> best;
      for (const TypeInfo& type : types_) {
        int floor = Floor(w, type);
        if (floor > type.total) continue;
        double slope = CompactSpeed(w, type, floor) / floor;
        if (!best || slope > best->slope) best = Growth{slope, floor, i, w.version};
      }
      return best;
    }
    if (!w.s.elastic || !MayResize(w)) return std::nullopt;
    const TypeInfo& type = Type(w.type);
    int count = DeviceCount(w.s.allocation);
    double speed = CompactSpeed(w, type, count);
    std::optional<Growth> best;
    for (int d = 1; count + d <= std::min(w.s.max_devices, type.total); d *= 2) {
      double slope = (CompactSpeed(w, type, count + d) - speed) / d;
      if (slope > kEpsilon && (!best || slope >= best->slope)) best = Growth{slope, d, i, w.version};
    }
    return best;
  }

  std::vector<size_t> Sizes() const {
    std::vector<size_t> sizes;
    sizes.reserve(work_.size());
    for (const Work& w : work_) sizes.push_back(static_cast<size_t>(DeviceCount(w.s.allocation)));
    return sizes;
  }
  long TotalDevices() const {
    long total = 0;
    for (const TypeInfo& type : types_) total += type.total;
    return total;
  }
  // Pending jobs (as they were when Decide was called) in queue order, as indices.
  std::vector<size_t> Queue() const {
    std::vector<JobState> jobs;
    jobs.reserve(work_.size());
    for (const Work& w : work_) {
      jobs.push_back(w.s);
      jobs.back().allocation = w.original;
    }
    std::vector<size_t> queue;
    for (const JobState* job : QueueOrder(jobs)) queue.push_back(Index(job->id));
    return queue;
  }
  size_t Index(const std::string& id) const { return index_.at(id); }

  const ClusterState& cluster_;
  double now_;
  const PolicyOptions& options_;
  bool aware_;
  FreeLedger ledger_;
  std::map<std::string, int> free_;  // free devices per type, kept in step with ledger_
  std::vector<TypeInfo> types_;      // fastest first
  std::vector<Work> work_;
  std::map<std::string, size_t> index_;
  std::map<std::string, int> quota_left_;
  std::optional<HeadReservation> head_;  // elastic: the rigid head's reservation
  size_t head_job_ = 0;
  int slack_ = 0;          // devices of the head's type free at its start beyond what it needs
  std::vector<int> held_;  // per job: devices of that type it still holds at the reservation
};

}  // namespace

int MinResDevices(const JobState& job, double capability, int devices_per_node,
                  const PolicyOptions& options, const model::Environment& env) {
  if (!job.elastic) return job.requested_devices;
  model::JobProfile as_submitted = job.profile;
  as_submitted.plan = job.profile.submitted;
  double owed = model::CompactSpeedup(as_submitted, job.requested_devices,
                                      options.reference_devices_per_node, env);
  int per_node = std::max(devices_per_node, 1);
  for (int k = std::max(job.min_devices, 1); k < job.requested_devices; ++k) {
    model::Shape shape{{{capability, k}}, (k + per_node - 1) / per_node};
    if (model::Speedup(job.profile, shape, env) >= owed - kEpsilon) return k;
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
  return Engine(cluster, jobs, now_s, options_, backfill_aware_).Run();
}

}  // namespace elastic::policy
