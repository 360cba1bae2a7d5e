// Discrete-event replay of a trace through a policy (see simulator.h).
#include "scheduler/sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "scheduler/policy/placement.h"

namespace elastic::sim {
namespace {

using policy::Allocation;
using policy::ClusterState;
using policy::Decision;
using policy::DecisionKind;
using policy::JobState;
using policy::kNever;

constexpr double kEpsilon = 1e-9;

struct LiveJob {
  JobState state;
  double remaining_work = 0.0;  // reference-GPU seconds
  double rate = 0.0;            // current speedup
  double paused_until = 0.0;
  bool done = false;
  size_t open_segment = SIZE_MAX;
};

class Replay {
 public:
  Replay(const ClusterState& cluster, const std::vector<TraceJob>& trace,
         const policy::Policy& policy, const SimOptions& options)
      : cluster_(cluster), trace_(trace), policy_(policy), options_(options) {}

  SimResult Run() {
    result_.policy = std::string(policy_.Name());
    for (const auto& node : cluster_.nodes) result_.total_devices += node.devices;
    if (!Prepare()) return result_;
    double now = trace_.empty() ? 0.0 : static_cast<double>(trace_.front().submit_time_s);
    size_t next_arrival = 0;
    while (true) {
      double next = next_arrival < trace_.size()
                        ? static_cast<double>(trace_[next_arrival].submit_time_s)
                        : kNever;
      for (size_t r : running_) next = std::min(next, FinishTime(jobs_[r], now));
      if (next == kNever) break;
      Advance(now, next);
      now = next;
      ++result_.events;
      std::vector<size_t> finished;
      for (size_t r : running_) {
        if (FinishTime(jobs_[r], now) <= now + kEpsilon) finished.push_back(r);
      }
      for (size_t r : finished) Finish(r, now);
      while (next_arrival < trace_.size() &&
             static_cast<double>(trace_[next_arrival].submit_time_s) <= now) {
        pending_.push_back(next_arrival++);
      }
      if (!CallPolicy(now) || !CheckInvariants(now)) return result_;
    }
    if (!pending_.empty()) {
      Fail(now, "job " + jobs_[pending_.front()].state.id + " (and " +
                    std::to_string(pending_.size() - 1) + " more) never started: nothing left "
                    "to free devices for it");
      return result_;
    }
    Summarize();
    return result_;
  }

 private:
  bool Prepare() {
    std::map<std::string, int> per_type;
    for (const auto& node : cluster_.nodes) per_type[node.device_type] += node.devices;
    int largest = 0;
    for (const auto& entry : per_type) largest = std::max(largest, entry.second);
    bool wants_elastic = policy_.WantsElasticJobs();
    bool grows = policy_.GrowsBeyondRequest();
    SetQuotas();
    for (size_t i = 0; i < trace_.size(); ++i) {
      const TraceJob& row = trace_[i];
      LiveJob live;
      JobState& job = live.state;
      job.id = row.id;
      bool rigid = UnitHash(row.id, kRigidSalt) < options_.rigid_fraction;
      bool elastic = wants_elastic && !rigid;
      job.elastic = elastic;
      job.tenant = TenantOf(row);
      job.sla_class = Guaranteed(row) ? SlaClass::kGuaranteed
                                      : SlaClass::kBestEffort;
      job.requested_devices = row.gpus;
      job.max_devices = elastic && grows ? GrowthMax(row.gpus, largest) : row.gpus;
      job.min_devices = elastic ? std::max(1, static_cast<int>(std::ceil(
                                                  options_.elastic_min_fraction * row.gpus)))
                                : row.gpus;
      job.submit_time_s = static_cast<double>(row.submit_time_s);
      job.profile = {job.max_devices, CommRatioFor(row.id, options_)};
      model::Plan user_plan = AssignPlan(row, job);
      job.expected_runtime_s = static_cast<double>(row.duration_s);
      model::JobProfile as_submitted = job.profile;
      as_submitted.plan = user_plan;
      live.remaining_work =
          static_cast<double>(row.duration_s) *
          model::CompactSpeedup(as_submitted, row.gpus, options_.reference_devices_per_node,
                                cluster_.environment);
      if (job.min_devices > largest) {
        result_.error = "elastic-sim: job " + row.id + " needs " +
                        std::to_string(job.min_devices) + " devices of one type but the " +
                        "largest device type in the cluster has " + std::to_string(largest);
        return false;
      }
      JobRecord record;
      record.id = row.id;
      record.submit_s = job.submit_time_s;
      record.requested_devices = row.gpus;
      record.min_devices = job.min_devices;
      record.max_devices = job.max_devices;
      record.rigid = !job.elastic;
      record.guaranteed = job.sla_class == SlaClass::kGuaranteed;
      record.plan = std::string(model::PlanName(user_plan));
      record.tenant = job.tenant;
      result_.jobs.push_back(record);
      index_[row.id] = i;
      jobs_.push_back(std::move(live));
    }
    return true;
  }

  // Memory need, the user's plan, and (for policies that keep it) the fixed plan with the
  // smallest size it fits at as the job's minimum. Returns the user's plan.
  model::Plan AssignPlan(const TraceJob& row, JobState& job) const {
    if (options_.memory_need_max <= 0.0) return model::Plan::kDp;
    SimOptions draw = options_;
    draw.min_comm_ratio = 0.0;
    draw.max_comm_ratio = options_.memory_need_max;
    draw.seed = options_.seed ^ kMemorySalt;
    double need = CommRatioFor(row.id, draw);
    // Largest need some plan (ZeRO-DP + GC) fits at the requested size: need*(0.5/d + 0.25) <= 1.
    need = std::min(need, 1.0 / (0.5 / row.gpus + 0.25));
    job.profile.memory_need = need;
    std::vector<model::Plan> fitting;
    for (model::Plan plan : model::kConcretePlans) {
      if (model::PlanFits(plan, need, row.gpus)) fitting.push_back(plan);
    }
    model::Plan user = fitting[static_cast<size_t>(UnitHash(row.id, kPlanSalt) *
                                                   static_cast<double>(fitting.size()))];
    job.profile.submitted = user;
    if (!policy_.ReconfiguresPlans()) job.profile.plan = user;
    int smallest = job.requested_devices;
    for (int d = job.requested_devices - 1; d >= 1; --d) {
      bool fits = false;
      for (model::Plan plan : model::kConcretePlans) {
        if (job.profile.plan == model::Plan::kAuto || plan == job.profile.plan) {
          fits |= model::PlanFits(plan, need, d);
        }
      }
      if (!fits) break;
      smallest = d;
    }
    job.min_devices = std::max(job.min_devices, smallest);
    return user;
  }

  static constexpr std::uint64_t kMemorySalt = 0x6d656d6f;    // "memo"
  static constexpr std::uint64_t kPlanSalt = 0x706c616e;      // "plan"
  static constexpr std::uint64_t kRigidSalt = 0x72696769;      // "rigi"
  static constexpr std::uint64_t kGuaranteedSalt = 0x67756172; // "guar"

  std::string TenantOf(const TraceJob& row) const {
    return row.tenant.empty() ? "default" : row.tenant;
  }
  bool Guaranteed(const TraceJob& row) const {
    return UnitHash(row.id, kGuaranteedSalt) < options_.guaranteed_fraction;
  }

  int GrowthMax(int gpus, int largest) const {
    for (int factor : {options_.max_growth_factor, 2, 1}) {
      if (factor >= 1 && gpus * factor <= std::max(gpus, std::min(options_.max_growth_cap, largest))) {
        return gpus * factor;
      }
    }
    return gpus;
  }

  // Quotas in proportion to each tenant's guaranteed GPU-seconds (see SimOptions).
  void SetQuotas() {
    std::map<std::string, double> demand;
    double total = 0.0;
    for (const TraceJob& row : trace_) {
      if (!Guaranteed(row)) continue;
      double gpu_seconds = static_cast<double>(row.gpus) * static_cast<double>(row.duration_s);
      demand[TenantOf(row)] += gpu_seconds;
      total += gpu_seconds;
    }
    cluster_.tenant_quota.clear();
    if (total <= 0.0) return;
    for (const auto& [tenant, gpu_seconds] : demand) {
      cluster_.tenant_quota[tenant] = static_cast<int>(
          std::floor(options_.quota_fraction * result_.total_devices * gpu_seconds / total));
    }
  }

  static double FinishTime(const LiveJob& job, double now) {
    if (job.rate <= 0.0) return kNever;
    return std::max(now, job.paused_until) + job.remaining_work / job.rate;
  }

  void Advance(double from, double to) {
    for (size_t r : running_) {
      LiveJob& job = jobs_[r];
      double active_from = std::max(from, job.paused_until);
      if (to > active_from) job.remaining_work -= job.rate * (to - active_from);
      result_.jobs[r].device_seconds += policy::DeviceCount(job.state.allocation) * (to - from);
    }
  }

  void Release(const Allocation& allocation, const JobState& job, int sign) {
    for (const auto& slice : allocation) {
      auto& node = cluster_.nodes[slice.node];
      node.free_devices += sign * slice.devices;
      node.free_cpus += sign * slice.devices * job.cpus_per_device;
      node.free_memory_mb += sign * slice.devices * job.memory_mb_per_device;
    }
  }

  void Finish(size_t r, double now) {
    LiveJob& job = jobs_[r];
    Release(job.state.allocation, job.state, +1);
    CloseSegment(r, now);
    job.state.allocation.clear();
    job.remaining_work = 0.0;
    job.rate = 0.0;
    job.done = true;
    result_.jobs[r].end_s = now;
    running_.erase(std::find(running_.begin(), running_.end(), r));
  }

  void CloseSegment(size_t r, double now) {
    LiveJob& job = jobs_[r];
    if (job.open_segment != SIZE_MAX) result_.timeline[job.open_segment].to_s = now;
    job.open_segment = SIZE_MAX;
  }

  void OpenSegment(size_t r, double now) {
    if (!options_.record_timeline) return;
    jobs_[r].open_segment = result_.timeline.size();
    result_.timeline.push_back({r, now, now, policy::DeviceCount(jobs_[r].state.allocation)});
  }

  bool CallPolicy(double now) {
    if (pending_.empty() && running_.empty()) return true;
    std::vector<JobState> view;
    std::vector<size_t> order(running_.begin(), running_.end());
    order.insert(order.end(), pending_.begin(), pending_.end());
    std::sort(order.begin(), order.end());
    for (size_t i : order) {
      view.push_back(jobs_[i].state);
      view.back().remaining_work = jobs_[i].remaining_work;
      view.back().started_s = result_.jobs[i].start_s < 0 ? kNever : result_.jobs[i].start_s;
      view.back().resizes = result_.jobs[i].resizes;
      if (jobs_[i].state.running()) view.back().expected_end_s = FinishTime(jobs_[i], now);
    }
    ++result_.policy_calls;
    policy::PolicyOutput output = policy_.Decide(cluster_, view, now);
    for (const auto& reservation : output.reservations) {
      auto it = index_.find(reservation.job_id);
      if (it == index_.end()) continue;
      double& first = result_.jobs[it->second].first_reservation_s;
      first = std::min(first, reservation.start_s);
    }
    for (const Decision& decision : output.decisions) {
      if (!Apply(decision, now)) return false;
    }
    return true;
  }

  std::string Validate(const Decision& decision, const LiveJob& job) const {
    bool running = job.state.running();
    if (job.done) return "job already finished";
    if (decision.kind == DecisionKind::kStart && running) return "start for a running job";
    if (decision.kind == DecisionKind::kResize && !running) return "resize for a pending job";
    if (std::find(pending_.begin(), pending_.end(), index_.at(job.state.id)) == pending_.end() &&
        !running) {
      return "job has not been submitted yet";
    }
    int count = policy::DeviceCount(decision.allocation);
    if (count < job.state.min_devices || count > job.state.max_devices) {
      return "size " + std::to_string(count) + " outside [" +
             std::to_string(job.state.min_devices) + "," + std::to_string(job.state.max_devices) +
             "]";
    }
    std::map<int, int> delta;
    for (const auto& slice : decision.allocation) {
      if (slice.node < 0 || slice.node >= static_cast<int>(cluster_.nodes.size()) ||
          slice.devices <= 0) {
        return "invalid slice (node " + std::to_string(slice.node) + ")";
      }
      delta[slice.node] += slice.devices;
    }
    for (const auto& slice : job.state.allocation) delta[slice.node] -= slice.devices;
    for (const auto& [node, devices] : delta) {
      const auto& state = cluster_.nodes[node];
      if (devices > state.free_devices ||
          devices * job.state.cpus_per_device > state.free_cpus ||
          devices * job.state.memory_mb_per_device > state.free_memory_mb) {
        return "over-allocates node " + state.name + " (+" + std::to_string(devices) +
               " devices, " + std::to_string(state.free_devices) + " free)";
      }
    }
    return "";
  }

  bool Apply(const Decision& decision, double now) {
    auto it = index_.find(decision.job_id);
    if (it == index_.end()) return Fail(now, "decision for unknown job " + decision.job_id);
    size_t r = it->second;
    LiveJob& job = jobs_[r];
    std::string problem = Validate(decision, job);
    if (!problem.empty()) {
      return Fail(now, "decision for job " + decision.job_id + ": " + problem + " (reason: " +
                           decision.reason + ")");
    }
    JobRecord& record = result_.jobs[r];
    if (decision.kind == DecisionKind::kStart) {
      pending_.erase(std::find(pending_.begin(), pending_.end(), r));
      running_.push_back(r);
      record.start_s = now;
      job.state.last_resize_s = now;
    } else {
      Release(job.state.allocation, job.state, +1);
      CloseSegment(r, now);
      job.paused_until = now + options_.resize_cost_s;
      job.state.last_resize_s = now;
      ++record.resizes;
    }
    job.state.allocation = decision.allocation;
    Release(job.state.allocation, job.state, -1);
    job.rate = model::Speedup(job.state.profile, policy::ShapeOf(cluster_, job.state.allocation),
                              cluster_.environment);
    record.peak_devices = std::max(record.peak_devices, policy::DeviceCount(job.state.allocation));
    OpenSegment(r, now);
    return true;
  }

  bool CheckInvariants(double now) {
    std::vector<int> used(cluster_.nodes.size(), 0);
    long total = 0;
    for (size_t r : running_) {
      for (const auto& slice : jobs_[r].state.allocation) {
        used[slice.node] += slice.devices;
        total += slice.devices;
      }
    }
    for (size_t n = 0; n < used.size(); ++n) {
      const auto& node = cluster_.nodes[n];
      if (used[n] > node.devices || node.free_devices != node.devices - used[n]) {
        return Fail(now, "internal: node " + node.name + " accounting broken (" +
                             std::to_string(used[n]) + " used of " +
                             std::to_string(node.devices) + ")");
      }
    }
    result_.max_used_devices = std::max(result_.max_used_devices, total);
    return true;
  }

  bool Fail(double now, const std::string& what) {
    std::ostringstream message;
    message << "elastic-sim: policy " << policy_.Name() << " at t=" << now << ": " << what;
    result_.error = message.str();
    return false;
  }

  void Summarize() {
    std::vector<double> jcts;
    double queue_sum = 0.0;
    double device_seconds = 0.0;
    double first_submit = kNever;
    double last_end = 0.0;
    for (const JobRecord& job : result_.jobs) {
      jcts.push_back(job.end_s - job.submit_s);
      queue_sum += job.start_s - job.submit_s;
      device_seconds += job.device_seconds;
      first_submit = std::min(first_submit, job.submit_s);
      last_end = std::max(last_end, job.end_s);
    }
    if (jcts.empty()) return;
    double n = static_cast<double>(jcts.size());
    double sum = 0.0;
    for (double jct : jcts) sum += jct;
    std::sort(jcts.begin(), jcts.end());
    size_t rank = static_cast<size_t>(std::ceil(0.99 * n));  // nearest rank
    result_.avg_jct_s = sum / n;
    result_.p99_jct_s = jcts[std::max<size_t>(rank, 1) - 1];
    result_.makespan_s = last_end - first_submit;
    result_.avg_queue_s = queue_sum / n;
    if (result_.makespan_s > 0 && result_.total_devices > 0) {
      result_.gpu_utilization = device_seconds / (result_.total_devices * result_.makespan_s);
    }
  }

  ClusterState cluster_;  // the simulator's own copy: free counts change as jobs run
  const std::vector<TraceJob>& trace_;
  const policy::Policy& policy_;
  SimOptions options_;
  SimResult result_;
  std::vector<LiveJob> jobs_;
  std::map<std::string, size_t> index_;
  std::vector<size_t> pending_;  // arrival order
  std::vector<size_t> running_;
};

}  // namespace

double UnitHash(const std::string& job_id, std::uint64_t salt) {
  SimOptions options;
  options.seed = salt;
  options.min_comm_ratio = 0.0;
  options.max_comm_ratio = 1.0;
  return CommRatioFor(job_id, options);
}

double CommRatioFor(const std::string& job_id, const SimOptions& options) {
  std::uint64_t hash = 1469598103934665603ULL ^ (options.seed * 0x9E3779B97F4A7C15ULL);
  for (unsigned char c : job_id) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  hash ^= hash >> 33;  // finalizer so nearby ids spread over [0,1)
  hash *= 0xff51afd7ed558ccdULL;
  hash ^= hash >> 33;
  double unit = static_cast<double>(hash >> 11) / static_cast<double>(1ULL << 53);
  return options.min_comm_ratio + unit * (options.max_comm_ratio - options.min_comm_ratio);
}

SimResult Simulate(const ClusterState& cluster, const std::vector<TraceJob>& trace,
                   const policy::Policy& policy, const SimOptions& options) {
  return Replay(cluster, trace, policy, options).Run();
}

}  // namespace elastic::sim
