// Local context (srun): the same submission checks as sbatch, since srun may create a job.
#include "spank/context.h"

namespace elastic::spank {

int LocalInitPostOpt(spank_t /*sp*/) {
  if (ValidateSubmission() != 0) return -1;
  return RefuseUnplaceableBackground(/*is_srun=*/true);
}

}  // namespace elastic::spank
