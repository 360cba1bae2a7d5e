// Mechanics of one Rubick/elastic Decide call (see rubick_engine.h): model views, the ledger,
// undo and the order decisions apply in (placement: rubick_placement.cc).
#include "scheduler/policy/rubick_engine.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "scheduler/policy/rubick_policy.h"

namespace elastic::policy::rubick {

Engine::Engine(const ClusterState& cluster, const std::vector<JobState>& jobs, double now_s,
               const PolicyOptions& options, const EngineOptions& engine)
    : cluster_(cluster), now_(now_s), options_(options), engine_(engine), ledger_(cluster) {
  for (const std::string& name : TypesByCapability(cluster)) {
    TypeInfo info{name, 1.0, 1, 0, 0, true};
    bool first = true;
    for (const NodeState& node : cluster.nodes) {
      if (node.device_type != name) continue;
      info.one_shape &= node.devices <= 1 && (first || node.capability == info.capability);
      first = false;
      info.capability = node.capability;
      info.per_node = std::max(info.per_node, node.devices);
      info.total += node.devices;
      int share = node.devices > 0 ? node.cpus / node.devices : 0;
      if (info.cpus_per_device == 0 || share < info.cpus_per_device) info.cpus_per_device = share;
    }
    free_[name] = ledger_.FreeDevicesOfType(name);
    types_.push_back(info);
  }
  node_type_.reserve(cluster.nodes.size());
  for (const NodeState& node : cluster.nodes) {
    const size_t t = TypeIndex(node.device_type);
    const bool known = t < types_.size() && types_[t].name == node.device_type;
    node_type_.push_back(known ? static_cast<int>(t) : -1);
  }
  work_.reserve(jobs.size());
  for (const JobState& job : jobs) {
    Work w;
    w.s = job;
    w.original = &job;
    w.was_running = job.running();
    if (w.was_running) w.type = MainType(job.allocation);
    w.cpu_adaptive = engine_.cpus && job.profile.cpu_need > 0.0 &&
                     job.max_cpus_per_device > job.min_cpus_per_device;
    w.work = RemainingWork(w);
    work_.push_back(std::move(w));
    TrackRunning(work_.size() - 1);
  }
  for (const JobState* job : QueueOrder(jobs)) {
    queue_.push_back(static_cast<size_t>(job - jobs.data()));
  }
  if (engine_.rank_by_work) WeighByWork();
  held_.assign(work_.size(), {});
  no_shrink_at_.assign(types_.size(), -1);
  slopes_ = SlopeIndex(types_.size());
}

PolicyOutput Engine::Run() {
  AssignProtection();
  if (engine_.backfill_aware) RigidFirst();
  Privileged();
  BySlope();
  Consolidate();
  PolicyOutput output;
  if (head_) output.reservations.push_back(head_->reservation);
  std::vector<size_t> changed;
  for (size_t i = 0; i < work_.size(); ++i) {
    if (Changed(work_[i])) changed.push_back(i);
  }
  output.decisions.reserve(changed.size());
  for (size_t i : ApplicableOrder(changed)) {
    const Work& w = work_[i];
    DecisionKind kind = w.started    ? DecisionKind::kStart
                        : w.running() ? DecisionKind::kResize
                                      : DecisionKind::kPreempt;
    output.decisions.push_back({kind, w.s.id, w.s.allocation, w.reason, w.s.cpus_per_device,
                                w.s.offload_mb_per_device});
  }
  return output;
}

bool Engine::Changed(const Work& w) const {
  if (w.started) return true;
  return w.was_running &&
         (w.s.allocation != w.original->allocation ||
          w.s.cpus_per_device != w.original->cpus_per_device ||
          w.s.offload_mb_per_device != w.original->offload_mb_per_device);
}

// ---- model views ------------------------------------------------------------------------------

const TypeInfo& Engine::Type(const std::string& name) const { return types_[TypeIndex(name)]; }

size_t Engine::TypeIndex(const std::string& name) const {
  for (size_t t = 0; t < types_.size(); ++t) {  // most callers pass a TypeInfo's own name
    if (&types_[t].name == &name || types_[t].name == name) return t;
  }
  return 0;
}

// CPUs per device that keep `type`'s devices fed (model::FedShape), within the job's range.
int Engine::IdealCpus(const Work& w, const TypeInfo& type) const {
  if (!w.cpu_adaptive) return w.s.cpus_per_device;
  int ideal = static_cast<int>(std::ceil(w.s.profile.cpu_need * type.capability - 1e-9));
  return std::clamp(ideal, w.s.min_cpus_per_device, w.s.max_cpus_per_device);
}

// Speed on `devices` packed devices of `type` with the CPUs the job would ask for there (the
// slopes of Algorithm 1; host memory is not limited here, the placement checks it).
// Memoised per job, type and CPUs (SpeedCurve): the slope scans (BestGrowth, ShrinkSlope over
// every job for each device reclaimed) ask for the same few points again and again.
double Engine::CompactSpeed(const Work& w, const TypeInfo& type, int devices) const {
  if (devices <= 0) return 0.0;
  const int cpus = IdealCpus(w, type);
  auto curve = std::find_if(w.curves.begin(), w.curves.end(), [&](const SpeedCurve& c) {
    return c.capability == type.capability && c.per_node == type.per_node &&
           c.cpus_per_device == cpus;
  });
  if (curve == w.curves.end()) {
    w.curves.push_back({type.capability, type.per_node, cpus, {}});
    curve = std::prev(w.curves.end());
    // Sized once for every size the job may take (its MAX, or the type's devices).
    curve->speed.assign(static_cast<size_t>(std::max(std::min(w.s.max_devices, type.total), 0)) + 1,
                        -1.0);
  }
  if (static_cast<int>(curve->speed.size()) <= devices) curve->speed.resize(devices + 1, -1.0);
  double& speed = curve->speed[devices];
  if (speed < 0.0) {
    model::Shape shape{{{type.capability, devices}}, (devices + type.per_node - 1) / type.per_node};
    shape.cpus_per_device = cpus;
    speed = model::Speedup(w.s.profile, shape, cluster_.environment);
  }
  return speed;
}

double Engine::Speed(const JobState& job, const Allocation& allocation) const {
  return model::Speedup(job.profile, ShapeOf(cluster_, allocation, job), cluster_.environment);
}

double Engine::Speed(const Work& w, const Allocation& allocation) const {
  return Speed(w.s, allocation);
}

double Engine::RemainingWork(const Work& w) const {
  if (w.s.remaining_work > 0.0) return w.s.remaining_work;
  if (w.was_running && w.s.expected_end_s != kNever) {
    return std::max(0.0, w.s.expected_end_s - now_) * Speed(w, w.s.allocation);
  }
  return w.s.expected_runtime_s * model::CompactSpeedup(w.s.profile, w.s.requested_devices,
                                                        options_.reference_devices_per_node,
                                                        cluster_.environment);
}

// MinResDevices for the job on `type`, memoised per job and type (MinResEntry): it reads only
// the job's profile and bounds, which no step of a Decide call changes.
int Engine::MinRes(const Work& w, const TypeInfo& type) const {
  for (const MinResEntry& entry : w.min_res) {
    if (entry.capability == type.capability && entry.per_node == type.per_node) {
      return entry.devices;
    }
  }
  const int devices =
      MinResDevices(w.s, type.capability, type.per_node, options_, cluster_.environment);
  w.min_res.push_back({type.capability, type.per_node, devices});
  return devices;
}

// The job's minimum on `type`: minRes for a protected guaranteed job, else min_devices; rigid
// jobs never change size.
int Engine::Floor(const Work& w, const TypeInfo& type) const {
  if (!w.s.elastic) return w.s.requested_devices;
  int floor = w.s.min_devices;
  if (w.protected_sla) floor = std::max(floor, MinRes(w, type));
  return std::min(floor, w.s.max_devices);
}

// Rubick §5.3: (T - N*delta)/T >= threshold, counting the resize being considered.
bool Engine::PenaltyAllows(const Work& w) const {
  double elapsed = now_ - w.s.started_s;
  if (!(elapsed > 0.0)) return false;
  double n = static_cast<double>(w.s.resizes + 1);
  return (elapsed - n * options_.resize_cost_s) / elapsed >= options_.reconfigure_threshold;
}

// Jobs started in this round, or already resized in it, change size at no further cost.
bool Engine::MayResize(const Work& w) const {
  return !w.was_running || w.touched || PenaltyAllows(w);
}

// When the job would release `allocation` with w.s's CPUs (the simulator's own formula when it
// supplies work).
double Engine::EndEstimate(const Work& w, const Allocation& allocation) const {
  if (allocation.empty()) return now_;
  if (w.was_running && allocation == w.original->allocation &&
      w.s.cpus_per_device == w.original->cpus_per_device) {
    return w.s.expected_end_s;
  }
  double speed = Speed(w, allocation);
  if (speed <= 0.0) return kNever;
  // A running job pays a resize; so does one resuming after a preemption (it has started
  // before: started_s is set), which restarts from its checkpoint.
  bool resumes = w.was_running || w.s.started_s != kNever;
  return now_ + (resumes ? options_.resize_cost_s : 0.0) + w.work / speed;
}

// ---- ledger and undo --------------------------------------------------------------------------

// The ledger after giving `from` back and taking `to`. With the same CPUs and memory per device
// on both sides only the nodes whose device count changes are touched (a shrink by one device
// re-buckets one node, not every node of the job twice); the ledger ends the same either way.
void Engine::Move(const JobState& from, const JobState& to) {
  if (from.cpus_per_device != to.cpus_per_device ||
      from.HostMemoryPerDevice() != to.HostMemoryPerDevice()) {
    ledger_.Give(from.allocation, from);
    ledger_.Take(to.allocation, to);
    for (const Slice& slice : from.allocation) {
      free_[cluster_.nodes[slice.node].device_type] += slice.devices;
    }
    for (const Slice& slice : to.allocation) {
      free_[cluster_.nodes[slice.node].device_type] -= slice.devices;
    }
    return;
  }
  Allocation net = from.allocation;  // devices given back per node (< 0: taken)
  for (const Slice& slice : to.allocation) net.push_back({slice.node, -slice.devices});
  std::sort(net.begin(), net.end(), [](const Slice& a, const Slice& b) { return a.node < b.node; });
  Allocation given, taken;
  for (size_t k = 0; k < net.size();) {
    int devices = 0;
    const int node = net[k].node;
    for (; k < net.size() && net[k].node == node; ++k) devices += net[k].devices;
    if (devices > 0) given.push_back({node, devices});
    if (devices < 0) taken.push_back({node, -devices});
    if (devices != 0) free_[cluster_.nodes[node].device_type] += devices;
  }
  ledger_.Give(given, from);
  ledger_.Take(taken, to);
}

// Gives job i these resources if the guard allows it; logs the old state for rollback.
bool Engine::SetFit(size_t i, const Fit& next, std::vector<Undo>& undo) {
  Work& w = work_[i];
  JobState after = w.s;
  after.allocation = next.allocation;
  after.cpus_per_device = next.cpus_per_device;
  after.offload_mb_per_device = next.offload_mb_per_device;
  bool is_head = head_ && i == head_job_;
  Holds held;
  if (head_ && !is_head) {
    Work probe = w;
    probe.s = after;
    held = HeldAtReservation(probe, next.allocation);
    if (!GuardAllows(held_[i], held)) return false;
  }
  undo.push_back({i, w.s.allocation, w.s.cpus_per_device, w.s.offload_mb_per_device, w.touched,
                  held_[i]});
  NoteResize(i);
  Move(w.s, after);
  w.s = std::move(after);
  ++w.revision;
  TrackRunning(i);
  if (w.was_running) w.touched = true;
  if (w.running()) w.type = MainType(w.s.allocation);
  if (head_ && !is_head) Hold(i, std::move(held));
  if (is_head) head_.reset();  // the head starts now: nothing left to protect this round
  return true;
}

// Records job i's device count before its first change since BySlope last cleared resized_.
void Engine::NoteResize(size_t i) {
  for (const auto& [job, count] : resized_) {
    if (job == i) return;
  }
  resized_.emplace_back(i, DeviceCount(work_[i].s.allocation));
}

void Engine::Rollback(std::vector<Undo>& undo) {
  for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
    Work& w = work_[it->job];
    JobState before = w.s;
    before.allocation = it->allocation;
    before.cpus_per_device = it->cpus_per_device;
    before.offload_mb_per_device = it->offload_mb_per_device;
    NoteResize(it->job);
    Move(w.s, before);
    w.s = std::move(before);
    ++w.revision;
    TrackRunning(it->job);
    w.touched = it->touched;
    if (w.running()) w.type = MainType(w.s.allocation);
    if (head_) Hold(it->job, it->held);
  }
  undo.clear();
}

// The device type holding most of the allocation's devices (the fastest on ties): the type a
// job spread over several is ranked, shrunk and re-placed on.
const std::string& Engine::MainType(const Allocation& allocation) const {
  static const std::string kNone;
  boost::container::small_vector<int, 4> per_type(types_.size(), 0);
  for (const Slice& slice : allocation) {
    const int t = node_type_[slice.node];
    if (t >= 0) per_type[t] += slice.devices;
  }
  const std::string* main = &kNone;
  int most = 0;
  for (size_t t = 0; t < types_.size(); ++t) {  // fastest first
    if (per_type[t] > most) {
      main = &types_[t].name;
      most = per_type[t];
    }
  }
  return *main;
}

// One device of `type` fewer: taken from the job's smallest slice of that type (later node on
// ties).
Allocation Engine::WithoutOne(const Allocation& allocation, const ClusterState& cluster,
                              const std::string& type) {
  Allocation next = allocation;
  std::optional<size_t> pick;
  for (size_t k = 0; k < next.size(); ++k) {
    if (cluster.nodes[next[k].node].device_type != type) continue;
    if (!pick || next[k].devices <= next[*pick].devices) pick = k;
  }
  if (!pick) return next;
  if (--next[*pick].devices == 0) next.erase(next.begin() + static_cast<long>(*pick));
  return next;
}

void Engine::Note(size_t i, const std::string& text) {
  Work& w = work_[i];
  if (w.reason.empty()) {
    w.reason = engine_.backfill_aware ? "elastic:" : "rubick:";
  } else if (!Notes(i)) {
    return;  // long growth chains: the first steps say why
  }
  w.reason.append(" ").append(text).append(";");
}

// Whether Note(i, ...) would still add to the job's reason (building a note costs more than
// keeping it).
bool Engine::Notes(size_t i) const { return work_[i].reason.size() <= 400; }

void Engine::SetProtected(Work& w, bool on) {
  w.protected_sla = on;
  ++epoch_;
  slopes_dirty_.push_back(static_cast<size_t>(&w - work_.data()));
}

// Keeps running_elastic_ in step with job i's allocation (and epoch_ with any change of a job).
void Engine::TrackRunning(size_t i) {
  ++epoch_;
  slopes_dirty_.push_back(i);
  const bool in = work_[i].running() && work_[i].s.elastic;
  auto at = std::lower_bound(running_elastic_.begin(), running_elastic_.end(), i);
  const bool was = at != running_elastic_.end() && *at == i;
  if (in && !was) running_elastic_.insert(at, i);
  if (!in && was) running_elastic_.erase(at);
}

long Engine::TotalDevices() const {
  long total = 0;
  for (const TypeInfo& type : types_) total += type.total;
  return total;
}

}  // namespace elastic::policy::rubick
