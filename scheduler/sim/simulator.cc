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
    if (!trace_.empty()) {
      first_submit_ = static_cast<double>(trace_.front().submit_time_s);
      last_submit_ = static_cast<double>(trace_.back().submit_time_s);
    }
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
    Result<Workload> workload = PrepareWorkload(cluster_, trace_, policy_, options_);
    if (!workload) {
      result_.error = workload.error;
      return false;
    }
    cluster_.tenant_quota = workload->tenant_quota;
    for (size_t i = 0; i < workload->jobs.size(); ++i) {
      PreparedJob& prepared = workload->jobs[i];
      const JobState& job = prepared.state;
      JobRecord record;
      record.id = job.id;
      record.submit_s = job.submit_time_s;
      record.requested_devices = job.requested_devices;
      record.min_devices = job.min_devices;
      record.max_devices = job.max_devices;
      record.rigid = !job.elastic;
      record.guaranteed = job.sla_class == SlaClass::kGuaranteed;
      record.plan = std::string(model::PlanName(prepared.user_plan));
      record.tenant = job.tenant;
      result_.jobs.push_back(record);
      index_[job.id] = i;
      LiveJob live;
      live.state = std::move(prepared.state);
      live.remaining_work = prepared.work;
      jobs_.push_back(std::move(live));
    }
    return true;
  }

  static double FinishTime(const LiveJob& job, double now) {
    if (job.rate <= 0.0) return kNever;
    return std::max(now, job.paused_until) + job.remaining_work / job.rate;
  }

  void Advance(double from, double to) {
    double held = 0.0;
    for (size_t r : running_) {
      LiveJob& job = jobs_[r];
      double active_from = std::max(from, job.paused_until);
      if (to > active_from) job.remaining_work -= job.rate * (to - active_from);
      int devices = policy::DeviceCount(job.state.allocation);
      result_.jobs[r].device_seconds += devices * (to - from);
      held += devices * (to - from);
      cpu_seconds_ += devices * job.state.cpus_per_device * (to - from);
    }
    if (!pending_.empty()) {
      queued_device_seconds_ += held;
      result_.queued_s += to - from;
    }
    double window_from = std::max(from, first_submit_);
    double window_to = std::min(to, last_submit_);
    if (window_to > window_from && to > from) {
      window_device_seconds_ += held * (window_to - window_from) / (to - from);
    }
  }

  void Release(const Allocation& allocation, const JobState& job, int sign) {
    for (const auto& slice : allocation) {
      auto& node = cluster_.nodes[slice.node];
      node.free_devices += sign * slice.devices;
      node.free_cpus += sign * slice.devices * job.cpus_per_device;
      node.free_memory_mb += sign * slice.devices * job.HostMemoryPerDevice();
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
    std::vector<size_t> order(running_.begin(), running_.end());
    order.insert(order.end(), pending_.begin(), pending_.end());
    std::sort(order.begin(), order.end());
    std::vector<JobState> view;
    view.reserve(order.size());  // a long queue would otherwise be moved again at every doubling
    for (size_t i : order) {
      view.push_back(jobs_[i].state);
      view.back().remaining_work = jobs_[i].remaining_work;
      view.back().started_s = result_.jobs[i].start_s < 0 ? kNever : result_.jobs[i].start_s;
      // Rubick's N counts every reconfiguration; a preemption is one (checkpoint, relaunch).
      view.back().resizes = result_.jobs[i].resizes + result_.jobs[i].preemptions;
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
    if (decision.kind == DecisionKind::kPreempt) {
      // Rubick §5: only best-effort jobs may be shrunk to 0; rigid jobs keep their start.
      if (!running) return "preemption of a pending job";
      if (job.state.sla_class != SlaClass::kBestEffort) return "preemption of a guaranteed job";
      if (!job.state.elastic) return "preemption of a rigid job";
      if (!decision.allocation.empty()) return "preemption with a non-empty allocation";
      return "";
    }
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
    JobState next = WithResources(job.state, decision);
    int most_cpus = std::max(job.state.max_cpus_per_device, job.state.min_cpus_per_device);
    if (next.cpus_per_device < job.state.min_cpus_per_device || next.cpus_per_device > most_cpus ||
        next.offload_mb_per_device < 0) {
      return "cpus per device " + std::to_string(next.cpus_per_device) + " outside [" +
             std::to_string(job.state.min_cpus_per_device) + "," +
             std::to_string(job.state.max_cpus_per_device) + "]";
    }
    struct Need {
      long devices = 0, cpus = 0;
      std::int64_t memory_mb = 0;
    };
    std::map<int, Need> delta;
    for (const auto& slice : decision.allocation) {
      if (slice.node < 0 || slice.node >= static_cast<int>(cluster_.nodes.size()) ||
          slice.devices <= 0) {
        return "invalid slice (node " + std::to_string(slice.node) + ")";
      }
      Need& need = delta[slice.node];
      need.devices += slice.devices;
      need.cpus += static_cast<long>(slice.devices) * next.cpus_per_device;
      need.memory_mb += slice.devices * next.HostMemoryPerDevice();
    }
    for (const auto& slice : job.state.allocation) {
      Need& need = delta[slice.node];
      need.devices -= slice.devices;
      need.cpus -= static_cast<long>(slice.devices) * job.state.cpus_per_device;
      need.memory_mb -= slice.devices * job.state.HostMemoryPerDevice();
    }
    for (const auto& [node, need] : delta) {
      const auto& state = cluster_.nodes[node];
      if (need.devices > state.free_devices || need.cpus > state.free_cpus ||
          need.memory_mb > state.free_memory_mb) {
        return "over-allocates node " + state.name + " (+" + std::to_string(need.devices) +
               " devices, " + std::to_string(state.free_devices) + " free; +" +
               std::to_string(need.cpus) + " CPUs, " + std::to_string(state.free_cpus) +
               " free; +" + std::to_string(need.memory_mb) + " MiB, " +
               std::to_string(state.free_memory_mb) + " free)";
      }
    }
    return "";
  }

  // The job with the decision's CPUs and offload memory per device (where it sets them).
  static JobState WithResources(const JobState& job, const Decision& decision) {
    JobState next = job;
    if (decision.cpus_per_device >= 0) next.cpus_per_device = decision.cpus_per_device;
    if (decision.offload_mb_per_device >= 0) {
      next.offload_mb_per_device = decision.offload_mb_per_device;
    }
    return next;
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
    if (decision.kind == DecisionKind::kPreempt) {
      Preempt(r, now);
      return true;
    }
    if (decision.kind == DecisionKind::kStart) {
      pending_.erase(std::find(pending_.begin(), pending_.end(), r));
      running_.push_back(r);
      if (record.preemptions == 0) {
        record.start_s = now;
      } else {
        job.paused_until = now + options_.resize_cost_s;  // resumes from its checkpoint
      }
      job.state.last_resize_s = now;
    } else {
      Release(job.state.allocation, job.state, +1);
      CloseSegment(r, now);
      job.paused_until = now + options_.resize_cost_s;
      job.state.last_resize_s = now;
      ++record.resizes;
    }
    JobState next = WithResources(job.state, decision);
    job.state.cpus_per_device = next.cpus_per_device;
    job.state.offload_mb_per_device = next.offload_mb_per_device;
    job.state.allocation = decision.allocation;
    Release(job.state.allocation, job.state, -1);
    job.rate = model::Speedup(job.state.profile,
                              policy::ShapeOf(cluster_, job.state.allocation, job.state),
                              cluster_.environment);
    record.peak_devices = std::max(record.peak_devices, policy::DeviceCount(job.state.allocation));
    OpenSegment(r, now);
    return true;
  }

  // The job checkpoints and gives everything back; it waits in the queue with its progress.
  void Preempt(size_t r, double now) {
    LiveJob& job = jobs_[r];
    Release(job.state.allocation, job.state, +1);
    CloseSegment(r, now);
    job.state.allocation.clear();
    job.state.last_resize_s = now;
    job.rate = 0.0;
    job.paused_until = 0.0;
    running_.erase(std::find(running_.begin(), running_.end(), r));
    pending_.push_back(r);
    if (result_.jobs[r].preemptions++ == 0) ++result_.preempted_jobs;
    ++result_.preemptions;
  }

  bool CheckInvariants(double now) {
    std::vector<int> used(cluster_.nodes.size(), 0);
    std::vector<long> cpus(cluster_.nodes.size(), 0);
    std::vector<std::int64_t> memory(cluster_.nodes.size(), 0);
    long total = 0;
    for (size_t r : running_) {
      const JobState& job = jobs_[r].state;
      for (const auto& slice : job.allocation) {
        used[slice.node] += slice.devices;
        cpus[slice.node] += static_cast<long>(slice.devices) * job.cpus_per_device;
        memory[slice.node] += slice.devices * job.HostMemoryPerDevice();
        total += slice.devices;
      }
    }
    for (size_t n = 0; n < used.size(); ++n) {
      const auto& node = cluster_.nodes[n];
      if (used[n] > node.devices || node.free_devices != node.devices - used[n] ||
          cpus[n] > node.cpus || node.free_cpus != node.cpus - cpus[n] ||
          memory[n] > node.memory_mb || node.free_memory_mb != node.memory_mb - memory[n]) {
        return Fail(now, "internal: node " + node.name + " accounting broken (" +
                             std::to_string(used[n]) + " of " + std::to_string(node.devices) +
                             " devices, " + std::to_string(cpus[n]) + " of " +
                             std::to_string(node.cpus) + " CPUs, " + std::to_string(memory[n]) +
                             " of " + std::to_string(node.memory_mb) + " MiB used)");
      }
      result_.max_used_cpus_per_node_share =
          std::max(result_.max_used_cpus_per_node_share,
                   node.cpus > 0 ? static_cast<double>(cpus[n]) / node.cpus : 0.0);
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
    double window = last_submit_ - first_submit_;
    if (window > 0 && result_.total_devices > 0) {
      result_.gpu_utilization_submission =
          window_device_seconds_ / (result_.total_devices * window);
    }
    if (result_.queued_s > 0 && result_.total_devices > 0) {
      result_.gpu_utilization_queued =
          queued_device_seconds_ / (result_.total_devices * result_.queued_s);
    }
    long cpus = 0;
    for (const auto& node : cluster_.nodes) cpus += node.cpus;
    if (result_.makespan_s > 0 && cpus > 0) {
      result_.cpu_utilization = cpu_seconds_ / (static_cast<double>(cpus) * result_.makespan_s);
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
  double queued_device_seconds_ = 0.0;  // device-seconds held while some job waited
  double window_device_seconds_ = 0.0;  // ... between the first and the last submission
  double first_submit_ = 0.0;
  double last_submit_ = 0.0;
  double cpu_seconds_ = 0.0;
};

}  // namespace

SimResult Simulate(const ClusterState& cluster, const std::vector<TraceJob>& trace,
                   const policy::Policy& policy, const SimOptions& options) {
  return Replay(cluster, trace, policy, options).Run();
}

}  // namespace elastic::sim
