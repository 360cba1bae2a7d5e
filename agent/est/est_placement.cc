// HostedEsts: the balanced contiguous EST blocks.
#include "agent/est/est_placement.h"

#include "common/toml_reader.h"

namespace elastic::agent {

EstRange HostedEsts(std::int64_t ests, int rank, int ranks) {
  if (ranks < 1 || rank < 0 || rank >= ranks) {
    throw ConfigError("EST placement: rank " + std::to_string(rank) + " of " +
                      std::to_string(ranks) + " is out of range");
  }
  if (ranks > ests) {
    throw ConfigError("train.ests: " + std::to_string(ests) + " ESTs cannot be spread over " +
                      std::to_string(ranks) +
                      " ranks: expected at most one rank per EST (start fewer ranks, or raise "
                      "train.ests or --elastic-est)");
  }
  return EstRange{ests * rank / ranks, ests * (rank + 1) / ranks};
}

}  // namespace elastic::agent
