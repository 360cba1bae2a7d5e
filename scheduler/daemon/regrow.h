// Requeues and node counts: growth by requeue for jobs holding GPUs as gres
// (policy::ResizeProposal::via_requeue; Slurm does not merge an expansion into such a job) — the
// requeue, then the start on the new node count once Slurm shows the job pending — and a requeued
// elastic job's own node range given back to its Slurm record. Pure steps of RunCycle
// (daemon_cycle.h); the daemon does the writes.
#pragma once

#include <cstdint>
#include <map>

#include "scheduler/daemon/daemon_cycle.h"
#include "scheduler/daemon/daemon_state.h"
#include "scheduler/policy/resize_decision.h"
#include "scheduler/policy/slurm_view.h"

namespace elastic::daemon {

using SlurmJobsById = std::map<std::uint32_t, const policy::SlurmJob*>;

// A grow of a job holding GPUs as gres: requeued now (result.regrow_requeues), started again on
// the new node count by a later cycle's StartRegrownJobs.
void RequeueToGrow(DaemonState& state, const policy::ResizeProposal& order, std::int64_t now,
                   CycleResult& result);

// Jobs requeued to grow that Slurm shows pending, kRequeueSettleS after their requeue: started on
// their new node count (result.regrow_starts; state.regrow_started until Slurm runs them). One gone
// from Slurm, or not pending within kRegrowTimeoutS, is given up (it starts by itself after Slurm's
// requeue delay, on its own bounds).
void StartRegrownJobs(DaemonState& state, const SlurmJobsById& slurm, std::int64_t now,
                      CycleResult& result);

// Slurm pins a requeued job's record to the node count it last held (Slurm 22.05: NumNodes=N
// once the requeue has ended), so an elastic job requeued by elasticd (preempted, grown by
// requeue) or by anyone else (scontrol requeue, a failed node) would wait for N nodes, not its
// MIN. Each elastic job pending after a requeue (Restarts > 0) whose record differs from the
// MIN-MAX job_submit.lua recorded at submission (AdminComment "nodes=K/MIN-MAX") gets that range
// back (result.range_restores), once per requeue. Left alone: a job requeued to grow, and one
// StartRegrownJobs started, until Slurm has run it or kRegrowTimeoutS has passed.
void RestoreNodeRanges(DaemonState& state, const SlurmJobsById& slurm, std::int64_t now,
                       CycleResult& result);

// The decision's view with each requeued-to-grow job shown waiting for its new node count, so that
// no other job grows into the nodes it gave back (its reason is BeginTime until it starts).
policy::SlurmView WithRegrowsWaiting(policy::SlurmView view,
                                     const std::map<std::uint32_t, Regrow>& regrows);

}  // namespace elastic::daemon
