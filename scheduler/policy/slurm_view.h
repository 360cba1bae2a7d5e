// What elasticd sees of a Slurm cluster in one cycle, as plain values: nodes, jobs (running and
// pending, with Slurm's own plan for the pending ones) and reservations. Filled by the libslurm
// adapter (scheduler/slurm), read by the pure resize decision (resize_decision.h) and its tests.
// Times are unix seconds; nothing here talks to Slurm.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/job_options.h"

namespace elastic::policy {

struct SlurmNode {
  std::string name;
  std::vector<std::string> partitions;
  int cpus = 0;
  int alloc_cpus = 0;
  // Devices the node offers a job, one training rank each: its GPUs (from its gres), 1 on a node
  // without GPUs. Resizes move whole nodes; policies weigh jobs by the devices they hold.
  int devices = 1;
  std::string gpu_type;               // its gres GPU type ("a100"), "" if untyped or none
  std::vector<std::string> features;  // Slurm node features (a node type when no GPU type)
  // Usable for new work: IDLE or MIXED, and not DRAIN/DOWN/FAIL/MAINT/POWERED_DOWN/
  // NOT_RESPONDING/COMPLETING (a completing node is still cleaning up after a job).
  bool available = false;
  bool idle() const { return available && alloc_cpus == 0; }
};

enum class SlurmJobState { kPending, kRunning, kOther };

struct SlurmJob {
  std::uint32_t job_id = 0;
  uid_t uid = 0;
  std::string name;
  std::string partition;      // for a pending job submitted to several: the first
  std::string account;        // Slurm account: the tenant whose quota a guaranteed job uses
  // --elastic-class as job_submit.lua recorded it at submission (AdminComment "class=");
  // best-effort for every job without that record.
  SlaClass sla_class = SlaClass::kBestEffort;
  // Submitted with --elastic: job_submit.lua's bounds record is in its AdminComment. A job
  // without it is rigid, and step 1 may make room for it by preempting best-effort elastic jobs
  // (ResizeDecisionOptions::preempt_for_rigid).
  bool elastic = false;
  SlurmJobState state = SlurmJobState::kOther;
  std::vector<std::string> nodes;  // running: allocated nodes, sorted by name
  std::string batch_host;          // running: never shrunk away
  int min_nodes = 0;               // pending: requested minimum; running: allocated count
  int max_nodes = 0;               // pending: requested maximum (0 = none given)
  std::uint32_t priority = 0;
  // Pending: why it waits (Slurm's reason string, e.g. "Resources", "Priority", "Dependency",
  // "JobHeldUser", "BeginTime"). Only "Resources" and "Priority" jobs wait for nodes.
  std::string reason;
  std::int64_t submit_time = 0;   // unix seconds, as Slurm reports it
  std::int64_t time_limit_s = 0;  // the job's time limit; 0 = none (unlimited)
  // The nice value (Slurm's, without its NICE_OFFSET): the submitter's own plus, for a foreground
  // elastic job, job_submit.lua's ELASTIC_NICE until elasticd lifts it (nice_lift.h).
  std::int64_t nice = 0;
  std::int64_t start_time = 0;            // running: actual; pending: Slurm's expected (0 = none)
  std::int64_t end_time = 0;              // running: start + time limit (0 = unlimited)
  std::vector<std::string> sched_nodes;   // pending: nodes the backfill plan gave it (may be empty)
  std::string admin_comment;
  bool exclusive = false;                 // --exclusive (whole nodes)
  // Running: the GPUs Slurm allocated it (its gres total; 0 = none); -1 = unknown. On GPU nodes
  // a job that holds gres GPUs grows by a requeue (resize_decision.h).
  int gpus = -1;
  bool requeue = true;  // Slurm may requeue it (--requeue, or JobRequeue=1 by default)
  int restarts = 0;     // times Slurm requeued it (Restarts=)
  // Ended (COMPLETED, FAILED, CANCELLED, ...) and done completing: Slurm still lists it for
  // MinJobAge, but its checkpoint directory may be cleaned up (state is then kOther).
  bool finished = false;
};

// Pending with reason Resources or Priority: the only waiting jobs a grow can delay (the others
// wait for a dependency, a hold, a begin time, ...).
inline bool WaitsForNodes(const SlurmJob& job) {
  return job.state == SlurmJobState::kPending &&
         (job.reason == "Resources" || job.reason == "Priority");
}

struct SlurmReservation {
  std::string name;
  std::int64_t start_time = 0;
  std::int64_t end_time = 0;
  std::vector<std::string> nodes;
  std::vector<std::string> users;     // empty: accounts-only reservation
  std::vector<std::string> accounts;
};

struct SlurmView {
  std::int64_t now = 0;  // unix seconds when the view was read
  std::vector<SlurmNode> nodes;        // sorted by name
  std::vector<SlurmJob> jobs;          // sorted by job id
  std::vector<SlurmReservation> reservations;
};

}  // namespace elastic::policy
