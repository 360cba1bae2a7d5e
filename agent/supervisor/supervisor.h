// `elastic-agent run`: the job's supervisor inside the batch script (design.md §3). Registers the
// job with elasticd, runs the training step with srun on the current node set, with the plan
// chosen for that node set on every launch (plan_selection.h, docs/plans.md), and carries out
// resize orders through ResizeStateMachine: stop the step at a mini-batch boundary (its
// on-demand checkpoint), resize the allocation, refresh SLURM_*, relaunch, report. If elasticd
// is unreachable the job simply trains at its current size and keeps trying to register.
#pragma once

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "agent/supervisor/job_shape.h"

namespace elastic::agent {

struct SupervisorOptions {
  std::string config_path;     // handed to `elastic-agent train --config`
  std::string agent_path;      // this binary
  std::string elasticd_socket;
  std::string munge_socket;    // empty: libmunge's default
  int ests = 1;
  std::string ests_origin;     // for the log: who chose `ests` (job_shape.h's EstCount)
  RanksPerNode ranks_per_node;  // each generation runs nodes x this many ranks
  std::string plan = "auto";
  std::string sla_class = "best-effort";
  std::chrono::milliseconds poll_interval{1000};
  int grow_wait_s = 20;        // how long an expansion salloc may wait for its nodes
  int max_restarts = 2;        // failed steps relaunched from the newest checkpoint, per job
};

// Returns the exit status for the batch script: 0 when training completed, else the failing
// step's status. Throws std::runtime_error outside a Slurm job.
int RunSupervisor(const SupervisorOptions& options, std::ostream& out, std::ostream& err);

}  // namespace elastic::agent
