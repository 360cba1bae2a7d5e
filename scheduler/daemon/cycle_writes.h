// A cycle's Slurm writes (what RunCycle decided, daemon_cycle.h), run by the daemon on its Slurm
// worker thread: preemptions, nice lifts, grows by requeue and node ranges given back, background
// placement, AdminComments and checkpoint cleanup. Each write is logged with Slurm's answer; a
// failed one is logged and the rest go on.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/daemon/daemon_config.h"
#include "scheduler/daemon/daemon_cycle.h"
#include "scheduler/policy/background_placement.h"
#include "scheduler/policy/resize_decision.h"

namespace elastic::daemon {

void ApplyBackgroundPlan(const DaemonConfig& config,
                         const std::optional<std::vector<std::string>>& partition_nodes,
                         const std::vector<policy::GiveWay>& give_ways);
void ApplyPreemptions(const std::vector<policy::Preemption>& preemptions);
// Takes job_submit.lua's nice back from waiting elastic jobs (policy/nice_lift.h).
void ApplyNiceLifts(const std::vector<policy::NiceLift>& lifts);
void ApplyRegrows(const std::vector<std::uint32_t>& requeues,
                  const std::vector<std::pair<std::uint32_t, int>>& starts,
                  const std::vector<RangeRestore>& restores);
void WriteCycleResults(const DaemonConfig& config,
                       const std::vector<std::pair<std::uint32_t, std::string>>& comments,
                       const std::optional<std::set<std::uint32_t>>& live, std::int64_t now);

}  // namespace elastic::daemon
