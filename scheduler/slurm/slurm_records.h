// Conversion of libslurm records (node_info_t, slurm_job_info_t, reserve_info_t) into the plain
// values of policy/slurm_view.h. Pure: no RPC, no slurm_init, no clock, so unit tests build the
// records by hand. Hostlist expansion and reason strings use libslurm's own tables.
// Error model: nothing here fails; absent strings become empty values.
#pragma once

extern "C" {
#include <slurm/slurm.h>
}

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "scheduler/policy/slurm_view.h"

namespace elastic::slurm {

// Whether a node can take new work: base state IDLE or MIXED (ALLOCATED with CPUs left is what
// scontrol prints as MIXED) and none of the flags that keep the scheduler away from it
// (DRAIN, DOWN, FAIL, MAINT, power saving or powering, NOT_RESPONDING, COMPLETING, reboot).
bool NodeStateAvailable(std::uint32_t node_state, int cpus, int alloc_cpus);

// PENDING / RUNNING; everything else (suspended, completing, ended) is kOther.
policy::SlurmJobState JobStateOf(std::uint32_t job_state);
// Ended (COMPLETED, FAILED, CANCELLED, TIMEOUT, ...) and no longer completing on its nodes.
bool JobFinished(std::uint32_t job_state);

// "n[1-3],m7" -> {"n1","n2","n3","m7"} in hostlist order; null or "" -> {}.
std::vector<std::string> ExpandHostlist(const char* hostlist);
// "a,b,,c" -> {"a","b","c"}; null -> {}.
std::vector<std::string> SplitCommaList(const char* list);

// Slurm's name for a pending reason code ("Resources", "Priority", "Dependency", ...).
std::string ReasonName(std::uint16_t state_reason);
// Whether a pending job with this reason is waiting for nodes (slurm_view.h).
using policy::WaitsForNodes;

// `alloc_cpus` comes from the node's select plugin data (slurm_get_select_nodeinfo); devices
// from the node's gres (gres.h: its GPUs, else 1).
policy::SlurmNode ToNode(const node_info_t& node, int alloc_cpus);
policy::SlurmJob ToJob(const slurm_job_info_t& job);
// Slurm's time limit in minutes as seconds; 0 for none (INFINITE) or unset (NO_VAL).
std::int64_t TimeLimitSeconds(std::uint32_t minutes);
// `all_nodes` replaces a node list of "ALL".
policy::SlurmReservation ToReservation(const reserve_info_t& reservation,
                                       const std::vector<std::string>& all_nodes);

// Ids of jobs Slurm knows that have not finished (pending, running, suspended, completing):
// their checkpoint directories must be kept.
std::set<std::uint32_t> UnfinishedJobIds(const policy::SlurmView& view);

}  // namespace elastic::slurm
