// Plain values the scheduling policies read and return: cluster state, jobs, decisions.
// Time is a value (seconds on the caller's clock); nothing here touches Slurm or the OS.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "common/job_options.h"
#include "scheduler/model/throughput_model.h"

namespace elastic::policy {

struct NodeState {
  std::string name;
  std::string device_type;
  double capability = 1.0;  // model::DeviceCapability(device_type)
  int devices = 0;
  int free_devices = 0;
  int cpus = 0;
  int free_cpus = 0;
  std::int64_t memory_mb = 0;
  std::int64_t free_memory_mb = 0;
};

struct ClusterState {
  std::vector<NodeState> nodes;
  model::Environment environment;
  // Devices each tenant's guaranteed jobs may hold (Rubick §3: guaranteed jobs consume quota).
  // A tenant missing here has no quota, so its guaranteed jobs run best-effort.
  std::map<std::string, int> tenant_quota;
};

// Devices a job holds on one node; `node` indexes ClusterState::nodes.
struct Slice {
  int node = 0;
  int devices = 0;
  bool operator==(const Slice&) const = default;
};
// Sorted by node, each slice with devices > 0.
// Inline for up to eight nodes: a decision copies allocations at every tentative step (JobState
// copies, undo records, fits), and most jobs hold few nodes.
using Allocation = boost::container::small_vector<Slice, 8>;

int DeviceCount(const Allocation& allocation);
// The model's view of an allocation on this cluster (capability groups, nodes spanned).
model::Shape ShapeOf(const ClusterState& cluster, const Allocation& allocation);

inline constexpr double kNever = std::numeric_limits<double>::infinity();

struct JobState {
  std::string id;
  bool elastic = false;  // rigid jobs always run at requested_devices
  int min_devices = 1;
  int max_devices = 1;
  int requested_devices = 1;
  // CPUs and host memory the job holds (running) or asks for (pending) with each device.
  // Policies that schedule CPUs (rubick, elastic: profile.cpu_need > 0) change cpus_per_device
  // between min_cpus_per_device and max_cpus_per_device; the others keep it fixed.
  int cpus_per_device = 0;
  int min_cpus_per_device = 1;
  int max_cpus_per_device = 0;  // 0 = cpus_per_device (fixed)
  std::int64_t memory_mb_per_device = 0;
  // Extra host memory per device held for ZeRO-Offload's states (model::Plan::kOffload), set by
  // policies that choose plans; counted with memory_mb_per_device in every node's accounting.
  std::int64_t offload_mb_per_device = 0;
  double submit_time_s = 0.0;
  int priority = 0;  // higher runs first
  SlaClass sla_class = SlaClass::kBestEffort;
  model::JobProfile profile;
  Allocation allocation;  // empty while pending
  double last_resize_s = -kNever;
  // Estimates the caller supplies (Slurm: time limits; simulator: its model):
  double expected_runtime_s = 0.0;  // pending: run time at requested_devices
  double expected_end_s = kNever;   // running: when it will release its allocation
  // Reference-GPU-seconds of work left (1.0 = one capability-1 device, no communication), when
  // the caller's model knows it; 0 means derive it from the expected times above.
  double remaining_work = 0.0;
  std::string tenant;              // owner of the quota a guaranteed job consumes
  double started_s = kNever;       // first start (also set while queued after a preemption)
  int resizes = 0;                 // running: resizes so far (Rubick's N)

  bool running() const { return !allocation.empty(); }
  std::int64_t HostMemoryPerDevice() const { return memory_mb_per_device + offload_mb_per_device; }
};

// ShapeOf plus the job's CPUs and offload host memory (what the model needs to price CPUs).
model::Shape ShapeOf(const ClusterState& cluster, const Allocation& allocation,
                     const JobState& job);

// kPreempt (Rubick §5: "shrinking a job to 0 results in a preemption (possible only for
// best-effort jobs), which will return to the queue"): the running job checkpoints, gives back
// its whole allocation and waits in the queue again, keeping its progress; Slurm: a requeue.
enum class DecisionKind { kStart, kResize, kPreempt };

struct Decision {
  DecisionKind kind = DecisionKind::kStart;
  std::string job_id;
  Allocation allocation;  // the job's complete new allocation (empty for kPreempt)
  std::string reason;
  // The job's CPUs and offload memory per device with that allocation; < 0 = unchanged.
  int cpus_per_device = -1;
  std::int64_t offload_mb_per_device = -1;
};

// Planned start of a blocked job (EASY backfill's head-of-queue reservation).
struct Reservation {
  std::string job_id;
  double start_s = kNever;
  std::string device_type;
};

struct PolicyOutput {
  std::vector<Decision> decisions;
  std::vector<Reservation> reservations;
};

}  // namespace elastic::policy
