// Allocator context (sbatch, salloc): refuse bad flags before anything is queued and record
// the settings in the job's control environment, where prolog/epilog see them as SPANK_ELASTIC_*.
#include <string>

#include "spank/context.h"

namespace elastic::spank {

int AllocatorInitPostOpt(spank_t sp) {
  if (ValidateSubmission() != 0) return -1;
  for (const auto& [name, value] : TaskEnvironment(Settings())) {
    // SLURM_ELASTIC_EST -> ELASTIC_EST: Slurm adds its own SPANK_ / SLURM_SPANK_ prefixes.
    std::string control_name = name.substr(std::string("SLURM_").size());
    if (spank_job_control_setenv(sp, control_name.c_str(), value.c_str(), 1) != ESPANK_SUCCESS) {
      slurm_error("elastic: cannot record %s for the job", control_name.c_str());
      return -1;
    }
  }
  return 0;
}

}  // namespace elastic::spank
