// elasticd's background-placement step (DeepPool §5; scheduler/policy/background_placement.h):
// the registry's foreground elastic jobs, with the nodes their shrink orders release, handed to
// the pure rule. Pure; the daemon applies the plan (scheduler/slurm/background_calls.h).
#pragma once

#include <cstdint>

#include "scheduler/daemon/daemon_state.h"
#include "scheduler/policy/background_placement.h"
#include "scheduler/policy/slurm_view.h"

namespace elastic::daemon {

// The registry's jobs that host background work: running in Slurm outside the background
// partition and not of class background. Nodes of a shrink order in flight count as leaving.
std::vector<policy::ForegroundJob> ForegroundJobs(const DaemonState& state,
                                                  const policy::SlurmView& view,
                                                  const policy::BackgroundOptions& options);

// Whether `job_id` runs in the background partition (such jobs are never grown or shrunk by
// the resize decision: they are placed and requeued by the background step alone).
bool InBackgroundPartition(const policy::SlurmView& view, std::uint32_t job_id,
                           const policy::BackgroundOptions& options);

// `view` without the background partition's pending jobs: the resize decision makes room only
// for foreground work (a waiting background job never makes an elastic job shrink).
policy::SlurmView WithoutPendingBackground(const policy::SlurmView& view,
                                           const policy::BackgroundOptions& options);

}  // namespace elastic::daemon
