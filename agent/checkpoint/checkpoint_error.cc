// CheckpointError: keeps the path and the reason apart so a fallback warning can quote both.
#include "agent/checkpoint/checkpoint_error.h"

namespace elastic::agent {

CheckpointError::CheckpointError(const std::filesystem::path& path, const std::string& reason)
    : std::runtime_error("checkpoint " + path.string() + ": " + reason),
      path_(path),
      reason_(reason) {}

CheckpointError::CheckpointError(const std::string& reason)
    : std::runtime_error("checkpoint: " + reason), reason_(reason) {}

}  // namespace elastic::agent
