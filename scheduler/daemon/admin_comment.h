// The elastic summary in a job's AdminComment (design.md §2), written by elasticd after every
// change, and the bounds record etc/job_submit.lua leaves there at submission: Slurm forgets a
// running job's -N MIN-MAX, and AdminComment is the one job field only admins can write.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/node_bounds.h"
#include "scheduler/daemon/daemon_state.h"

namespace elastic::daemon {

// elastic:est=8,nodes=3/1-4,plan=dp,gen=5,class=best-effort,last=<unix time>
// plan= is ShownPlan: what the step runs, once the supervisor has reported it. A guaranteed job
// has ",quota=within" or ",quota=over" after last= (its account's quota, sla_quota.h). When the job's
// nodes hold more devices than nodes (GPU nodes with several GPUs), ",devices=<total>" follows;
// on one-device nodes the text is exactly the one above.
std::string FormatAdminComment(const JobRecord& job);

// The devices= value the comment shows: JobRecord::devices when above the node count, else 0
// (not shown).
int ShownDevices(const JobRecord& job);

// The plan word running now (the supervisor's report), else the one the job asked for.
std::string ShownPlan(const JobRecord& job);

}  // namespace elastic::daemon
