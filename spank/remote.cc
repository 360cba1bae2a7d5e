// Remote context (slurmstepd, as root, before tasks exist): export the validated settings to
// the tasks as SLURM_ELASTIC_*, which elastic-agent reads (they override its config file).
#include "spank/context.h"

namespace elastic::spank {

int RemoteUserInit(spank_t sp) {
  // Values were parsed by the option callbacks in this process: only well-formed text remains.
  for (const auto& [name, value] : TaskEnvironment(Settings())) {
    if (spank_setenv(sp, name.c_str(), value.c_str(), 1) != ESPANK_SUCCESS) {
      slurm_error("elastic: cannot set %s for the job's tasks", name.c_str());
      return -1;
    }
  }
  return 0;
}

}  // namespace elastic::spank
