// Per-context entry points of the SPANK plugin and the state they share within one process.
// Each Slurm process (sbatch, srun, slurmstepd) loads its own copy, so plain globals are safe;
// none of these functions may throw (they run behind the C ABI).
#pragma once

extern "C" {
#include <slurm/spank.h>
}

#include "spank/elastic_flags.h"
#include "spank/plugin_args.h"

namespace elastic::spank {

ElasticSettings& Settings();
PluginArgs& Args();

// sbatch / salloc, after options: cross-checks, env fallback, settings into the job's control env.
int AllocatorInitPostOpt(spank_t sp);
// srun, after options: the same checks (srun may start a job itself).
int LocalInitPostOpt(spank_t sp);
// slurmstepd as root, after options: prepares the job's checkpoint directory for its user.
int RemoteInitPostOpt(spank_t sp);
// slurmstepd, before tasks start: hands the settings to every task's environment.
int RemoteUserInit(spank_t sp);

// Reports a failure the way this context should: in sbatch/salloc/srun (as the user) by
// returning -1, so the command refuses; in slurmstepd (remote, as root) by remembering it and
// returning 0, because an error from a remote init or option callback makes slurmstepd fail
// the step launch and slurmctld drain the node for a batch job — something a user could
// otherwise trigger at will (e.g. a file planted where their job's checkpoint directory goes).
// The remembered failure fails the job's tasks in slurm_spank_task_init instead.
int Refuse(const std::string& message);
// The first remote failure, or "" (see Refuse).
const std::string& DeferredRemoteError();

// Shared by allocator and local contexts: env fallback then consistency, errors reported.
int ValidateSubmission();
// Shared by allocator and local contexts: refuses a new --elastic-class=background job the
// cluster cannot place (background_class.h), reported with slurm_error. 0 = go on.
int RefuseUnplaceableBackground(bool is_srun);

}  // namespace elastic::spank
