// Trace rows to policy jobs (see workload.h).
#include "scheduler/sim/workload.h"

#include <algorithm>
#include <cmath>

#include "perf/rubick/memory.h"

namespace elastic::sim {
namespace {

constexpr std::uint64_t kMemorySalt = 0x6d656d6f;      // "memo"
constexpr std::uint64_t kPlanSalt = 0x706c616e;        // "plan"
constexpr std::uint64_t kRigidSalt = 0x72696769;       // "rigi"
constexpr std::uint64_t kGuaranteedSalt = 0x67756172;  // "guar"
constexpr std::uint64_t kCpuSalt = 0x63707573;         // "cpus"
// Device memory that memory_need = 1 stands for (MiB): the trace's reference GPU, a 32 GB V100.
constexpr double kReferenceDeviceMemoryMb = 32.0 * 1024.0;

std::string TenantOf(const TraceJob& row) { return row.tenant.empty() ? "default" : row.tenant; }

bool Guaranteed(const TraceJob& row, const SimOptions& options) {
  return UnitHash(row.id, kGuaranteedSalt) < options.guaranteed_fraction;
}

// Policies that grow past the request: max = gpus x the largest factor kept within the caps.
int GrowthMax(int gpus, int largest, const SimOptions& options) {
  for (int factor : {options.max_growth_factor, 2, 1}) {
    if (factor >= 1 && gpus * factor <= std::max(gpus, std::min(options.max_growth_cap, largest))) {
      return gpus * factor;
    }
  }
  return gpus;
}

// Quotas in proportion to each tenant's guaranteed GPU-seconds (see SimOptions).
std::map<std::string, int> Quotas(const std::vector<TraceJob>& trace, int total_devices,
                                  const SimOptions& options) {
  std::map<std::string, double> demand;
  double total = 0.0;
  for (const TraceJob& row : trace) {
    if (!Guaranteed(row, options)) continue;
    double gpu_seconds = static_cast<double>(row.gpus) * static_cast<double>(row.duration_s);
    demand[TenantOf(row)] += gpu_seconds;
    total += gpu_seconds;
  }
  std::map<std::string, int> quota;
  if (total <= 0.0) return quota;
  for (const auto& [tenant, gpu_seconds] : demand) {
    quota[tenant] = static_cast<int>(
        std::floor(options.quota_fraction * total_devices * gpu_seconds / total));
  }
  return quota;
}

double Draw(const std::string& id, std::uint64_t salt, double low, double high,
            const SimOptions& options) {
  SimOptions draw = options;
  draw.min_comm_ratio = low;
  draw.max_comm_ratio = high;
  draw.seed = options.seed ^ salt;
  return CommRatioFor(id, draw);
}

// ZeRO-Offload's host memory for the job's model states (perf/rubick's memory estimator):
// states are half of memory_need device memories at 16 bytes per parameter.
double OffloadHostMb(double memory_need) {
  perf::ModelDesc model;
  model.params = 0.5 * memory_need * kReferenceDeviceMemoryMb * 1024.0 * 1024.0 /
                 (model.weight_bytes + model.grad_bytes + model.optimizer_bytes);
  perf::ExecutionPlan plan;
  plan.zero_stage = 2;
  plan.offload = true;
  plan.cpu_threads = 1;
  return perf::EstimateMemory(model, plan).host_total / (1024.0 * 1024.0);
}

// Memory need, the user's plan, and (for policies that keep it) the fixed plan with the
// smallest size it fits at as the job's minimum. Returns the user's plan.
model::Plan AssignPlan(const TraceJob& row, policy::JobState& job, const policy::Policy& policy,
                       const SimOptions& options) {
  if (options.memory_need_max <= 0.0) return model::Plan::kDp;
  double need = Draw(row.id, kMemorySalt, 0.0, options.memory_need_max, options);
  // Largest need some plan (ZeRO-DP + GC) fits at the requested size: need*(0.5/d + 0.25) <= 1.
  need = std::min(need, 1.0 / (0.5 / row.gpus + 0.25));
  job.profile.memory_need = need;
  if (options.cpu_need_max > 0.0) job.profile.offload_host_mb = OffloadHostMb(need);
  std::vector<model::Plan> fitting;
  for (model::Plan plan : model::kUserPlans) {
    if (model::PlanFits(plan, need, row.gpus)) fitting.push_back(plan);
  }
  model::Plan user = fitting[static_cast<size_t>(UnitHash(row.id, kPlanSalt) *
                                                 static_cast<double>(fitting.size()))];
  job.profile.submitted = user;
  if (!policy.ReconfiguresPlans()) job.profile.plan = user;
  int smallest = job.requested_devices;
  for (int d = job.requested_devices - 1; d >= 1; --d) {
    bool fits = false;
    for (model::Plan plan : model::kUserPlans) {
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

// CPUs per device: the fixed share, or (policies that schedule CPUs) a range up to what feeds the
// fastest device type.
void AssignCpus(const TraceJob& row, policy::JobState& job, const policy::ClusterState& cluster,
                const policy::Policy& policy, const SimOptions& options) {
  job.cpus_per_device = FixedCpusPerGpu(cluster, options);
  job.min_cpus_per_device = job.max_cpus_per_device = job.cpus_per_device;
  job.memory_mb_per_device = options.memory_mb_per_gpu;
  if (options.cpu_need_max <= 0.0) return;
  job.profile.cpu_need =
      Draw(row.id, kCpuSalt, options.cpu_need_min, options.cpu_need_max, options);
  if (!policy.SchedulesCpus()) return;
  double fastest = 0.0;
  int most_cpus = 1;
  for (const policy::NodeState& node : cluster.nodes) {
    fastest = std::max(fastest, node.capability);
    most_cpus = std::max(most_cpus, node.cpus);
  }
  job.min_cpus_per_device = 1;
  job.max_cpus_per_device = std::clamp(
      static_cast<int>(std::ceil(job.profile.cpu_need * fastest - 1e-9)), 1, most_cpus);
}

// --live, nodes of `per_node` devices: a job of a node or more gets its sizes rounded up to whole
// nodes (elasticd resizes whole nodes); a smaller one runs rigid at its request, sharing a node
// (Slurm cannot resize a job's devices within a node).
void ShapeForWholeNodes(policy::JobState& job, int per_node) {
  if (job.requested_devices < per_node) {
    job.elastic = false;
    job.min_devices = job.max_devices = job.requested_devices;
    return;
  }
  auto round_up = [per_node](int devices) { return (devices + per_node - 1) / per_node * per_node; };
  job.requested_devices = round_up(job.requested_devices);
  job.min_devices = round_up(job.min_devices);
  job.max_devices = round_up(job.max_devices);
}

}  // namespace

int FixedCpusPerGpu(const policy::ClusterState& cluster, const SimOptions& options) {
  if (options.cpus_per_gpu > 0) return options.cpus_per_gpu;
  int fewest = 0;
  for (const policy::NodeState& node : cluster.nodes) {
    if (node.devices <= 0) continue;
    int share = node.cpus / node.devices;
    if (fewest == 0 || share < fewest) fewest = share;
  }
  return std::max(fewest, 0);
}

Result<Workload> PrepareWorkload(const policy::ClusterState& cluster,
                                 const std::vector<TraceJob>& trace, const policy::Policy& policy,
                                 const SimOptions& options) {
  Workload workload;
  std::map<std::string, int> per_type;
  int total = 0;
  for (const auto& node : cluster.nodes) {
    per_type[node.device_type] += node.devices;
    total += node.devices;
  }
  int largest = 0;
  for (const auto& entry : per_type) largest = std::max(largest, entry.second);
  bool wants_elastic = policy.WantsElasticJobs();
  bool grows = policy.GrowsBeyondRequest();
  workload.tenant_quota = Quotas(trace, total, options);
  for (const TraceJob& row : trace) {
    PreparedJob prepared;
    policy::JobState& job = prepared.state;
    job.id = row.id;
    bool rigid = UnitHash(row.id, kRigidSalt) < options.rigid_fraction;
    bool elastic = wants_elastic && !rigid;
    job.elastic = elastic;
    job.tenant = TenantOf(row);
    job.sla_class = Guaranteed(row, options) ? SlaClass::kGuaranteed : SlaClass::kBestEffort;
    job.requested_devices = row.gpus;
    job.max_devices = elastic && grows ? GrowthMax(row.gpus, largest, options) : row.gpus;
    job.min_devices =
        elastic ? std::max(1, static_cast<int>(std::ceil(options.elastic_min_fraction * row.gpus)))
                : row.gpus;
    if (options.whole_node_devices > 0) ShapeForWholeNodes(job, options.whole_node_devices);
    job.submit_time_s = static_cast<double>(row.submit_time_s);
    job.profile.ests = job.max_devices;
    job.profile.comm_ratio = CommRatioFor(row.id, options);
    AssignCpus(row, job, cluster, policy, options);
    prepared.user_plan = AssignPlan(row, job, policy, options);
    job.expected_runtime_s = static_cast<double>(row.duration_s);
    // The trace duration is the run time at the recorded size under the user's plan, with CPUs
    // that keep the devices fed (the recorded cluster was not CPU-bound by assumption).
    model::JobProfile as_submitted = job.profile;
    as_submitted.plan = prepared.user_plan;
    as_submitted.cpu_need = 0.0;
    prepared.work = static_cast<double>(row.duration_s) *
                    model::CompactSpeedup(as_submitted, row.gpus,
                                          options.reference_devices_per_node, cluster.environment);
    if (job.min_devices > largest) {
      return Result<Workload>::Fail(
          "elastic-sim: job " + row.id + " needs " + std::to_string(job.min_devices) +
          " devices of one type but the largest device type in the cluster has " +
          std::to_string(largest));
    }
    workload.jobs.push_back(std::move(prepared));
  }
  return Result<Workload>::Ok(std::move(workload));
}

bool IsGuaranteed(const TraceJob& row, const SimOptions& options) {
  return Guaranteed(row, options);
}

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

}  // namespace elastic::sim
