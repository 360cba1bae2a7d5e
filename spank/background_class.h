// Submission side of --elastic-class=background (DeepPool §5 co-location, docs/admin.md
// "Background jobs"). SPANK cannot change a job's partition (its API sets environment
// variables, not job fields), so the plugin refuses a background job the cluster cannot place
// and otherwise records the admin's background partition in the job's control environment,
// where job_submit.lua moves the job into it. Pure C++ (no spank.h): GoogleTest covers it.
// Error model: "" means go on, else one complete message for the user.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spank/elastic_flags.h"

namespace elastic::spank {

// Refuses --elastic-class=background when `background_partition` (plugstack argument) is empty,
// and from an srun that would create the job (srun cannot record the partition for
// job_submit.lua). `new_job`: sbatch, or salloc/srun outside a job (as ShouldCheckResizeSupport);
// steps and expansion sallocs inside a running job are never refused.
std::string CheckBackgroundClass(const ElasticSettings& settings,
                                 std::string_view background_partition, bool new_job,
                                 bool is_srun);

// The job control variables for job_submit.lua: ELASTIC_BACKGROUND_PARTITION=<partition> for a
// background job, nothing otherwise (Slurm shows it to job_submit.lua in spank_job_env).
std::vector<std::pair<std::string, std::string>> BackgroundControlEnvironment(
    const ElasticSettings& settings, std::string_view background_partition);

// Whether `name` may be a Slurm partition name here: 1-64 of letters, digits, '_', '-', '.'.
bool IsPartitionName(std::string_view name);

}  // namespace elastic::spank
