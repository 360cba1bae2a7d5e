// Local context (srun): the same submission checks as sbatch, since srun may create a job.
#include "spank/context.h"

namespace elastic::spank {

int LocalInitPostOpt(spank_t /*sp*/) { return ValidateSubmission(); }

}  // namespace elastic::spank
