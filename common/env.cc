// getenv-backed EnvLookup and the rank-0 test.
#include "common/env.h"

#include <cstdlib>

namespace elastic::agent {

EnvLookup ProcessEnv() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

bool IsPrimaryRank(const EnvLookup& env) {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "SLURM_PROCID"}) {
    if (auto rank = env(name)) return *rank == "0";
  }
  return true;
}

}  // namespace elastic::agent
