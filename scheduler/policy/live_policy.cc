// Slurm partition <-> Policy input and decisions (see live_policy.h).
#include "scheduler/policy/live_policy.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <string_view>
#include <utility>

namespace elastic::policy {
namespace {

// A job without a time limit is ranked (elastic's shortest-remaining-work order) as if it had
// this much work left (reference-device seconds: a year on one device), whatever its size: long,
// but finite so its slope still counts, and equal among such jobs so they rank by slope alone.
constexpr double kNoLimitWork = 365.0 * 86400.0;

// Ascending, without repeats, each an index below `count`.
bool AreValid(const std::vector<int>& nodes, std::size_t count) {
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    if (nodes[k] < 0 || static_cast<std::size_t>(nodes[k]) >= count) return false;
    if (k > 0 && nodes[k - 1] >= nodes[k]) return false;
  }
  return true;
}

// A job's nodes as the partition numbers them: ascending, without repeats, in range.
std::vector<int> ValidNodes(std::vector<int> nodes, std::size_t count) {
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  std::erase_if(nodes, [count](int n) { return n < 0 || static_cast<std::size_t>(n) >= count; });
  return nodes;
}

bool Has(const std::vector<int>& nodes, int node) {
  return std::binary_search(nodes.begin(), nodes.end(), node);
}

// The job's slices: every device of each of its nodes (each once). An index outside the
// partition counts as one device, as a node the cluster did not show always has.
Allocation AllocationOf(const LiveJob& live, const ClusterState& cluster, int& devices) {
  std::vector<int> nodes = live.nodes;
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  Allocation allocation;
  devices = 0;
  for (int n : nodes) {
    if (n < 0 || static_cast<std::size_t>(n) >= cluster.nodes.size()) {
      ++devices;
      continue;
    }
    const int held = cluster.nodes[n].devices;
    allocation.push_back({n, held});
    devices += held;
  }
  return allocation;
}

// nodes x per_node, saturated: MAX comes from the AdminComment record and is not trusted.
int DevicesOn(int nodes, int per_node) {
  const std::int64_t product = static_cast<std::int64_t>(nodes) * per_node;
  return static_cast<int>(std::clamp<std::int64_t>(product, 0, std::numeric_limits<int>::max()));
}

// Sizes in devices: MIN and MAX in nodes times the job's devices per node, never excluding its
// current size; a job held this cycle is rigid at it.
void SetSizes(const LiveJob& live, int devices, int per_node, JobState& job) {
  job.elastic = live.may_resize;
  job.min_devices =
      live.may_resize ? std::min(DevicesOn(live.min_nodes, per_node), devices) : devices;
  job.max_devices =
      live.may_resize ? std::max(DevicesOn(live.max_nodes, per_node), devices) : devices;
  job.requested_devices = devices;
}

JobState ToJobState(const LiveJob& live, const ClusterState& cluster, const LiveOptions& options) {
  JobState job;
  job.id = std::to_string(live.job_id);
  int devices = 0;
  job.allocation = AllocationOf(live, cluster, devices);
  const int nodes = std::max(static_cast<int>(live.nodes.size()), 1);
  const int per_node = std::max((devices + nodes - 1) / nodes, 1);
  SetSizes(live, devices, per_node, job);
  job.cpus_per_device = 0;  // the whole node is the job's: CPUs never constrain live
  job.min_cpus_per_device = 0;
  job.submit_time_s = static_cast<double>(live.start_time);
  job.sla_class = SlaClass::kBestEffort;
  job.profile.ests = std::max(live.ests, 1);
  job.profile.comm_ratio = options.comm_ratio;
  job.profile.measured_speedup = DeviceSpeedups(live.speed_curve, per_node);
  job.last_resize_s = live.last_resize > 0 ? static_cast<double>(live.last_resize) : -kNever;
  job.started_s = static_cast<double>(live.start_time);
  job.resizes = live.resizes;
  if (live.end_time > 0) {
    job.expected_end_s = static_cast<double>(live.end_time);  // work = time left x speed
  } else {
    job.expected_end_s = kNever;
    job.remaining_work = kNoLimitWork;  // the same for every such job, whatever its size
  }
  return job;
}

}  // namespace

PolicyOptions LivePolicyOptions(const LiveOptions& options) {
  PolicyOptions p;
  p.resize_cost_s = options.resize_cost_s;
  p.min_resize_interval_s = options.min_resize_interval_s;
  p.reconfigure_threshold = options.reconfig_penalty;
  // Only guaranteed jobs' SLA reads this, and the running jobs shown are best-effort.
  p.reference_devices_per_node = 1;
  p.elastic_mixed_types = false;  // the agent places ESTs evenly (live_policy.h)
  p.preempt_best_effort = false;  // step 1 of the resize decision preempts (resize_decision.h)
  return p;
}

std::vector<double> DeviceSpeedups(const std::vector<double>& speed_curve, int devices_per_node) {
  std::vector<double> speedups;
  if (speed_curve.empty() || !(speed_curve.front() > 0)) return speedups;
  const int d = std::max(devices_per_node, 1);
  const double first = speed_curve.front();
  // Bounded so a long curve on many-GPU nodes stays small; the speedup is flat past the end.
  constexpr std::size_t kMaxPoints = std::size_t{1} << 16;
  for (std::size_t n = 0; n < speed_curve.size() && speedups.size() < kMaxPoints; ++n) {
    const double below = n == 0 ? 0.0 : speed_curve[n - 1];  // n whole nodes
    for (int r = 1; r <= d; ++r) {  // n nodes and r devices of the next one
      // The whole node's point exactly (so d = 1 gives curve[n] / curve[0] to the last bit).
      const double rate = r == d ? speed_curve[n] : below + (speed_curve[n] - below) * r / d;
      speedups.push_back(d * rate / first);
    }
  }
  return speedups;
}

PolicyInput ToPolicyInput(const LivePartition& partition, const LiveOptions& options) {
  PolicyInput input;
  input.cluster.nodes.reserve(partition.nodes.size());
  for (std::size_t k = 0; k < partition.nodes.size(); ++k) {
    const LiveNode& node = partition.nodes[k];
    const bool free = k < partition.free.size() && partition.free[k];
    NodeState n;
    n.name = node.name;
    n.device_type = node.device_type;
    n.capability = node.capability > 0 ? node.capability : 1.0;
    n.devices = std::max(node.devices, 1);
    n.free_devices = free ? n.devices : 0;
    n.cpus = node.cpus;
    n.free_cpus = free ? node.cpus : 0;
    input.cluster.nodes.push_back(std::move(n));
  }
  input.jobs.reserve(partition.jobs.size());
  for (const LiveJob& live : partition.jobs) {
    input.jobs.push_back(ToJobState(live, input.cluster, options));
  }
  return input;
}

namespace {

// The partition's jobs by Slurm id (a decision names its job in decimal), for lookups.
class JobsById {
 public:
  explicit JobsById(const std::vector<LiveJob>& jobs) : jobs_(jobs) {
    ids_.reserve(jobs.size());
    for (std::size_t k = 0; k < jobs.size(); ++k) ids_.emplace_back(jobs[k].job_id, k);
    std::sort(ids_.begin(), ids_.end());
  }
  const LiveJob* Find(std::string_view id) const {
    std::uint32_t value = 0;
    const auto [end, error] = std::from_chars(id.data(), id.data() + id.size(), value);
    if (error != std::errc() || end != id.data() + id.size()) return nullptr;
    auto it = std::lower_bound(ids_.begin(), ids_.end(), std::make_pair(value, std::size_t{0}));
    return it != ids_.end() && it->first == value ? &jobs_[it->second] : nullptr;
  }

 private:
  const std::vector<LiveJob>& jobs_;
  std::vector<std::pair<std::uint32_t, std::size_t>> ids_;
};

// The nodes the decision leaves the job: slices with devices, in the partition, ascending.
std::vector<int> NodesOf(const Decision& decision, std::size_t count) {
  std::vector<int> next;
  next.reserve(decision.allocation.size());
  for (const Slice& slice : decision.allocation) {
    if (slice.devices > 0) next.push_back(slice.node);
  }
  return ValidNodes(std::move(next), count);
}

// Grows `target` (the job's nodes) by up to `wanted` of the nodes the policy picked that are free
// for growth now, taking them from `growable`; how many it could not have yet.
int Grow(const std::vector<int>& now, const std::vector<int>& next, int wanted,
         std::vector<bool>& growable, std::vector<int>& target) {
  int added = 0;
  for (int n : next) {
    if (added == wanted) break;
    if (Has(now, n) || !growable[n]) continue;
    target.push_back(n);
    growable[n] = false;  // one job per node, even if a policy were to double-book
    ++added;
  }
  std::sort(target.begin(), target.end());
  return wanted - added;
}

// Shrinks `target` by `count` nodes: those the policy dropped first, then the last of the rest;
// never the batch host.
void Shrink(const std::vector<int>& now, int batch_host, const std::vector<int>& next, int count,
            std::vector<int>& target) {
  std::vector<int> order;
  for (int n : now) {
    if (!Has(next, n) && n != batch_host) order.push_back(n);
  }
  std::vector<int> rest;
  for (int n : now) {
    if (Has(next, n) && n != batch_host) rest.push_back(n);
  }
  order.insert(order.end(), rest.rbegin(), rest.rend());
  for (int i = 0; i < count && i < static_cast<int>(order.size()); ++i) {
    target.erase(std::lower_bound(target.begin(), target.end(), order[i]));
  }
}

// "<policy>: <reason>", unless the policy wrote its name first (easyscale does).
std::string Reason(const std::string& reason, std::string_view policy_name, std::string_view note) {
  std::string text;
  const bool named = reason.size() > policy_name.size() &&
                     reason.compare(0, policy_name.size(), policy_name) == 0 &&
                     reason[policy_name.size()] == ':';
  text.reserve(policy_name.size() + 2 + reason.size() + note.size());
  if (!named) text.append(policy_name).append(": ");
  return text.append(reason).append(note);
}

}  // namespace

std::vector<LiveChange> ToLiveChanges(const LivePartition& partition, const PolicyOutput& output,
                                      std::string_view policy_name) {
  const std::size_t count = partition.nodes.size();
  const JobsById jobs(partition.jobs);
  std::vector<bool> growable(count, false);
  for (std::size_t k = 0; k < count && k < partition.free.size(); ++k) {
    growable[k] = partition.free[k];
  }
  std::vector<LiveChange> changes;
  changes.reserve(output.decisions.size());
  for (const Decision& decision : output.decisions) {
    if (decision.kind != DecisionKind::kResize) continue;  // no starts or requeues live
    const LiveJob* found = jobs.Find(decision.job_id);
    if (!found || !found->may_resize) continue;
    const LiveJob& job = *found;
    const bool valid = AreValid(job.nodes, count);
    std::vector<int> repaired;  // only for a job whose nodes break LiveJob's contract
    if (!valid) repaired = ValidNodes(job.nodes, count);
    const std::vector<int>& now = valid ? job.nodes : repaired;
    const std::vector<int> next = NodesOf(decision, count);
    const int from = static_cast<int>(now.size());
    const int to = std::clamp(static_cast<int>(next.size()), std::min(job.min_nodes, from),
                              std::max(job.max_nodes, from));
    if (to == from) continue;  // equal-size moves (re-placement) are not done live
    std::vector<int> target;
    target.reserve(std::max(from, to));
    target = now;
    std::string note;
    if (to > from) {
      if (const int later = Grow(now, next, to - from, growable, target); later > 0) {
        note = "; " + std::to_string(later) +
               " more once the nodes it takes from other jobs are released";
      }
    } else {
      Shrink(now, job.batch_host, next, from - to, target);
    }
    if (target == now) continue;  // nothing free to grow onto, or nothing it may release
    changes.push_back({job.job_id, std::move(target), Reason(decision.reason, policy_name, note)});
  }
  std::sort(changes.begin(), changes.end(),
            [](const LiveChange& a, const LiveChange& b) { return a.job_id < b.job_id; });
  return changes;
}

std::vector<LiveChange> DecideLive(const Policy& policy, const LivePartition& partition,
                                   const LiveOptions& options) {
  if (partition.jobs.empty()) return {};
  PolicyInput input = ToPolicyInput(partition, options);
  PolicyOutput output =
      policy.Decide(input.cluster, input.jobs, static_cast<double>(partition.now));
  return ToLiveChanges(partition, output, policy.Name());
}

}  // namespace elastic::policy
