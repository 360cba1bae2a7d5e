// Burst placement: which rank runs which EST of a block.
#include "agent/plan/burst_placement.h"

#include "agent/est/est_placement.h"

namespace elastic::agent {

EstRange BurstEstsOfRank(std::int64_t ests, std::int64_t workers, int rank) {
  if (rank >= workers) return {ests, ests};
  return HostedEsts(ests, rank, static_cast<int>(workers));
}

int BurstRankOfEst(std::int64_t ests, std::int64_t workers, std::int64_t est) {
  // Rank r starts at floor(r·E/g): the last start <= est.
  int rank = 0;
  while (rank + 1 < workers && (rank + 1) * ests / workers <= est) ++rank;
  return rank;
}

std::string DescribeBurstWorkers(const std::vector<std::int64_t>& workers) {
  std::string text;
  for (std::size_t b = 0; b < workers.size(); ++b) {
    text += (b == 0 ? "" : "/") + std::to_string(workers[b]);
  }
  return text;
}

}  // namespace elastic::agent
