// Submission-time validation shared by the allocator (sbatch/salloc) and local (srun) contexts.
#include <cstdlib>
#include <string>

#include "spank/context.h"

namespace elastic::spank {

int ValidateSubmission() {
  std::string error =
      ApplyEnvironmentFallback(Settings(), [](const char* name) { return std::getenv(name); });
  if (error.empty()) error = CheckConsistency(Settings());
  if (!error.empty()) {
    slurm_error("%s", error.c_str());
    return -1;
  }
  return 0;
}

}  // namespace elastic::spank
