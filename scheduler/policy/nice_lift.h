// Which waiting elastic jobs elasticd gives back the priority etc/job_submit.lua's ELASTIC_NICE
// took, because they have waited long behind the rigid queue (design.md §3 step 0). Pure.
//
// job_submit.lua nices every foreground elastic job so that it starts only on nodes no rigid job
// in the queue can use (docs/evaluation.md, "Elastic jobs yield Slurm's queue"). Behind a steady
// stream of smaller rigid jobs a whole-node elastic job is then never the head Slurm plans nodes
// for, and waits for a node to empty by chance. The lift bounds that wait: once a job has waited
// `after_time_limits` times its own time limit, its nice goes back to the submitter's own, and
// Slurm orders it as the rigid job it would otherwise be (by age and its other factors).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/policy/slurm_view.h"

namespace elastic::policy {

struct NiceLiftOptions {
  // etc/job_submit.lua's ELASTIC_NICE: what the script added to the job's nice.
  std::int64_t elastic_nice = 1'000'000;
  // The wait, in multiples of the job's time limit, after which the nice goes; 0 = never.
  double after_time_limits = 6.0;
};

struct NiceLift {
  std::uint32_t job_id = 0;
  std::int64_t nice = 0;  // the job's new nice value: its own, ELASTIC_NICE taken back
  std::string reason;
};

// Pending elastic jobs (job_submit.lua's bounds record) waiting for nodes, not background (their
// partition orders them, not the nice), whose nice still holds ELASTIC_NICE on top of a
// submitter's own below it (elastic_nice <= nice < 2 * elastic_nice: a job whose owner already
// took the nice back, or asked for a larger one, is left as it is), that have a time limit and
// have waited at least after_time_limits of it since submission. In the view's job order.
std::vector<NiceLift> ChooseNiceLifts(const SlurmView& view, const NiceLiftOptions& options);

}  // namespace elastic::policy
