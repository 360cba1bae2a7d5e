// The process environment behind a seam, so configuration and rank logic are testable without
// setenv (which is not thread-safe and leaks between tests).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace elastic::agent {

// Returns the value of a variable, or nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

// Reads the real environment (getenv).
EnvLookup ProcessEnv();

// Whether this process is rank 0 of its job, the one that prints progress and the final line.
// OMPI_COMM_WORLD_RANK wins over SLURM_PROCID: under `mpirun` inside an allocation every rank
// inherits the batch step's SLURM_PROCID, while Open MPI's variable is the true rank.
// A process with neither variable (a plain run) is rank 0.
bool IsPrimaryRank(const EnvLookup& env);

}  // namespace elastic::agent
