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

// Shared by allocator and local contexts: env fallback then consistency, errors reported.
int ValidateSubmission();

}  // namespace elastic::spank
