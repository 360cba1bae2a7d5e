// Resize orders in elasticd's registry: issuing one (from the resize decision or by an admin's
// hand) and learning from a supervisor's poll whether it was carried out (design.md §3). Pure.
#pragma once

#include <cstdint>
#include <string>

#include "scheduler/daemon/daemon_state.h"
#include "scheduler/policy/resize_decision.h"

namespace elastic::daemon {

// Records `proposal` as job's order in flight with the next generation (generations only count up).
void IssueOrder(DaemonState& state, JobRecord& job, const policy::ResizeProposal& proposal,
                std::int64_t now);

// An admin's order to `nodes` nodes: shrinks keep the batch host and the first nodes, grows take
// idle nodes of the job's partition from the latest Slurm view. False with `error` if the job
// has an order in flight, is already that size, or not enough nodes are idle.
bool OrderByHand(DaemonState& state, JobRecord& job, int nodes, std::int64_t now,
                 std::string& error);

// A supervisor reports it runs `generation` and has seen orders up to `seen`. The order in flight
// is done once generation reaches it, failed if the supervisor saw it and is back to running
// (or failed) without reaching it. Returns true when the registry changed.
// The pause is reported later, once the relaunched step has done its first step (ApplyPause).
bool ApplyProgress(JobRecord& job, std::uint64_t generation, std::uint64_t seen,
                   std::int64_t now, DaemonState& state);

// A supervisor reports the pause (order received -> first step on the new node set) of the
// resize that brought it to `pause_generation`; recorded once per generation. Returns true
// when the registry changed.
bool ApplyPause(JobRecord& job, std::uint64_t pause_generation, double pause_s, std::int64_t now,
                DaemonState& state);

}  // namespace elastic::daemon
