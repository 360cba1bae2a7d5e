// fork/exec of a Slurm command or the training step with its stdout (and optionally stderr) on
// a pipe the supervisor reads; one place for the argv and descriptor plumbing.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace elastic::agent {

struct Spawned {
  pid_t pid = -1;
  int out_fd = -1;  // read end, O_CLOEXEC; the caller closes it
};

struct SpawnOptions {
  bool merge_stderr = false;
  std::vector<std::string> unset_env;  // removed in the child only
  std::vector<std::pair<std::string, std::string>> set_env;  // set in the child only, after unset
};

// Starts argv[0] (searched in PATH). Throws std::system_error if pipe or fork fails; an exec
// failure shows as the child's exit status 127.
Spawned Spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {});

}  // namespace elastic::agent
