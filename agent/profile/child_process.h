// Runs a child command (mpirun with its ranks) to completion and captures its stdout and stderr
// together, with the job's SLURM_ELASTIC_* variables removed so they cannot override the
// configuration a profile run sets. Errors: std::system_error when pipe/fork fails; an exec
// failure shows as exit status 127.
#pragma once

#include <string>
#include <vector>

namespace elastic::agent {

struct ChildResult {
  int status = -1;     // exit status; 128 + N when killed by signal N
  std::string output;  // stdout and stderr interleaved
};

// Starts argv[0] (searched in PATH) and waits for it.
ChildResult RunChild(const std::vector<std::string>& argv);

}  // namespace elastic::agent
