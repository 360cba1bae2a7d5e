// elasticd's administrators: root always, plus SlurmUser when slurmctld can say who that is.
#pragma once

#include <sys/types.h>

#include <functional>
#include <set>
#include <string>

namespace elastic::daemon {

// Adds the uid `slurm_user_id` returns to `admins` (which holds root already). When it throws
// (Slurm unreachable at start-up), `admins` is left as it is and the warning to log is returned;
// "" on success.
std::string AddSlurmUser(std::set<uid_t>& admins, const std::function<uid_t()>& slurm_user_id);

}  // namespace elastic::daemon
