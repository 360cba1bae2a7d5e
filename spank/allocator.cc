// Allocator context (sbatch, salloc): refuse bad flags before anything is queued and record
// the settings in the job's control environment, where prolog/epilog see them as SPANK_ELASTIC_*.
// Also the Slurm shell of resize_support.h, shared with the local context (srun).
extern "C" {
#include <slurm/slurm.h>
}

#include <errno.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "spank/background_class.h"
#include "spank/context.h"
#include "spank/resize_support.h"

namespace elastic::spank {

int RefuseUnsupportedResize() {
  bool inside_job = std::getenv("SLURM_JOB_ID") != nullptr;
  bool is_sbatch = std::strcmp(program_invocation_short_name, "sbatch") == 0;
  // Only --elastic submissions pay for the RPC; everything else returns here.
  if (!ShouldCheckResizeSupport(Settings().elastic, inside_job, is_sbatch)) return 0;
  slurm_conf_t* conf = nullptr;
  // Controller unreachable: not our call to make, the submission itself fails with Slurm's error.
  if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS || conf == nullptr) return 0;
  std::string error =
      CheckResizeSupport(conf->sched_params ? conf->sched_params : "",
                         conf->accounting_storage_type ? conf->accounting_storage_type : "");
  slurm_free_ctl_conf(conf);
  if (error.empty()) return 0;
  slurm_error("%s", error.c_str());
  return -1;
}

int RefuseUnplaceableBackground(bool is_srun) {
  const bool inside_job = std::getenv("SLURM_JOB_ID") != nullptr;
  const bool is_sbatch = std::strcmp(program_invocation_short_name, "sbatch") == 0;
  std::string error = CheckBackgroundClass(Settings(), Args().background_partition,
                                           is_sbatch || !inside_job, is_srun);
  if (error.empty()) return 0;
  slurm_error("%s", error.c_str());
  return -1;
}

int AllocatorInitPostOpt(spank_t sp) {
  if (ValidateSubmission() != 0) return -1;
  if (RefuseUnsupportedResize() != 0) return -1;
  if (RefuseUnplaceableBackground(/*is_srun=*/false) != 0) return -1;
  // job_submit.lua moves a background job into this partition (SPANK cannot set it).
  for (const auto& [name, value] :
       BackgroundControlEnvironment(Settings(), Args().background_partition)) {
    if (spank_job_control_setenv(sp, name.c_str(), value.c_str(), 1) != ESPANK_SUCCESS) {
      slurm_error("elastic: cannot record %s for the job", name.c_str());
      return -1;
    }
  }
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
