// AddSlurmUser: SlurmUser joins root as an elasticd administrator, if Slurm can be read.
#include "scheduler/daemon/admins.h"

#include <exception>

namespace elastic::daemon {

std::string AddSlurmUser(std::set<uid_t>& admins, const std::function<uid_t()>& slurm_user_id) {
  try {
    admins.insert(slurm_user_id());
  } catch (const std::exception& e) {
    return std::string("SlurmUser unknown, only root is admin: ") + e.what();
  }
  return "";
}

}  // namespace elastic::daemon
