// `elastic-agent export`: the trained model back to the user as the TorchScript module they
// brought, with the newest checkpoint's parameters and EST 0's buffers. Torch-free header.
#pragma once

#include <iosfwd>
#include <string>

#include "agent/config/job_config.h"

namespace elastic::agent {

// Writes model.torchscript's module, holding the newest checkpoint's parameters and buffers and
// in eval mode, to `out` (atomically). Returns the line to print. Throws ConfigError for a job
// without model.torchscript (the built-in models have no module to write) and as
// LoadTrainedModel (trained_model.h); FileError when `out` cannot be written.
std::string RunExportCommand(const JobConfig& config, const std::string& out, std::ostream& err);

}  // namespace elastic::agent
