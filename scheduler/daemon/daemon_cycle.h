// One elasticd cycle over a fresh Slurm view, pure: reconcile the registry with Slurm (drop jobs
// that ended, take node sets from Slurm, expire orders a silent supervisor never carried out),
// run the resize planner over the jobs free to move, issue its orders, and say which
// AdminComments to rewrite. The daemon does the I/O around it (daemon.cc).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/daemon/daemon_state.h"
#include "scheduler/policy/resize_planner.h"
#include "scheduler/policy/slurm_view.h"

namespace elastic::daemon {

struct CycleOptions {
  policy::ResizePlannerOptions planner;
  std::int64_t order_timeout_s = 300;  // an order not carried out by then is dropped
  bool resize = true;                  // false: observe and report only
};

struct CycleResult {
  std::vector<std::pair<std::uint32_t, std::string>> admin_comments;  // job id, new text
};

CycleResult RunCycle(DaemonState& state, const policy::SlurmView& view,
                     const CycleOptions& options);

}  // namespace elastic::daemon
