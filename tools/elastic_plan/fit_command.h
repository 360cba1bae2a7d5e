// `elastic-plan fit --points P.json [--train-indices I,J,...|--train N] [--out fitted.json]`:
// fits Rubick's performance model (§4.3) to profiled points from `elastic-agent profile`,
// predicts the others and reports the relative errors (§7.1), writes a FittedModel.
#pragma once

#include <string>
#include <vector>

namespace elastic::burst {

// `args` follow "fit". Returns the exit status: 0, 2 for bad arguments or input (the message on
// stderr names what was wrong), 1 when the fit itself fails.
int FitCommand(const std::vector<std::string>& args);

}  // namespace elastic::burst
