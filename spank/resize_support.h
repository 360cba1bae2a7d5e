// Whether the cluster can resize an --elastic job, decided at submission so a job that could
// never grow (or could shrink only once) is refused with a fix instead of failing later.
// Pure C++ (no spank.h, no libslurm): GoogleTest covers the decision. The Slurm call that feeds
// it is RefuseUnsupportedResize in allocator.cc. Error model: "" means supported, else one
// complete message for the user.
#pragma once

#include <string>
#include <string_view>

namespace elastic::spank {

// `sched_params` is SchedulerParameters, `accounting_storage_type` AccountingStorageType, as
// slurm_load_ctl_conf reports them (either may be empty).
std::string CheckResizeSupport(std::string_view sched_params,
                               std::string_view accounting_storage_type);

// Whether this submission asks for a new allocation that must be checked: --elastic given, and
// either sbatch (always a new job) or salloc/srun outside any job. Steps and expansion sallocs
// inside a running job inherit --elastic and must never be refused.
bool ShouldCheckResizeSupport(bool elastic, bool inside_job, bool is_sbatch);

// The thin Slurm shell over the two functions above, defined in allocator.cc (plugin only):
// reads the controller's configuration and reports a refusal with slurm_error. Returns 0 to go
// on, -1 to refuse. Never refuses because the controller could not be asked.
int RefuseUnsupportedResize();

}  // namespace elastic::spank
