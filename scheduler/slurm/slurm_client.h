// elasticd's connection to slurmctld through libslurm: read the cluster into a SlurmView, write
// a job's AdminComment, look up SlurmUser. One process-wide libslurm (slurm_init on first use,
// from SLURM_CONF or the default slurm.conf); safe to call from one thread at a time.
// Error model: ReadSlurmView and SlurmUserId throw SlurmError whose text names the call and
// slurm_strerror's reason; SetAdminComment returns "" or such a message. Every libslurm message
// is freed on every path. A missing slurm.conf is an error (not libslurm's 60 s retry + exit);
// one that exists but does not parse still makes libslurm exit the process.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "scheduler/policy/slurm_view.h"

namespace elastic::slurm {

class SlurmError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Nodes, all jobs (SHOW_ALL|SHOW_DETAIL) and reservations, each sorted as slurm_view.h states.
policy::SlurmView ReadSlurmView();

// One job (slurm_load_job), for a request about it; nullopt if Slurm does not know it.
std::optional<policy::SlurmJob> ReadSlurmJob(std::uint32_t job_id);

// Sets job `job_id`'s AdminComment (only root or SlurmUser may). "" on success.
std::string SetAdminComment(std::uint32_t job_id, const std::string& text);

// Sets pending job `job_id`'s nice value (without Slurm's NICE_OFFSET; >= 0) to `nice`: a
// waiting elastic job given back the priority job_submit.lua's nice took (policy/nice_lift.h).
// "" on success.
std::string SetNice(std::uint32_t job_id, std::int64_t nice);

// A job elasticd requeued to grow it (daemon_cycle.h): sets its node count to exactly `nodes`
// and its begin time to now, so that it starts at once instead of after Slurm's requeue delay.
// "" on success.
std::string StartRequeuedJob(std::uint32_t job_id, int nodes);

// A pending job that StartRequeuedJob once started (daemon/regrow.h): gives its record back the
// node range `min_nodes`-`max_nodes` (job_submit.lua's record of its -N) instead of the count
// StartRequeuedJob set. "" on success.
std::string RestoreNodeRange(std::uint32_t job_id, int min_nodes, int max_nodes);

// The uid slurmctld runs as (SlurmUser), which elasticd treats as an administrator like root.
uid_t SlurmUserId();

}  // namespace elastic::slurm
