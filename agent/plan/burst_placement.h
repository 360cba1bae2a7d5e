// Where burst parallelism (burst_parallel.h) runs each EST of a block: block b with g_b ranks
// spreads the E ESTs over ranks 0..g_b-1 in contiguous blocks, as the EST placement does for
// g_b ranks (rank r runs [floor(r·E/g_b), floor((r+1)·E/g_b))); ranks >= g_b run none. Pure and
// torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/common/est_range.h"

namespace elastic::agent {

// The ESTs rank `rank` runs for a block placed on `workers` ranks ({ests, ests}, none, for
// rank >= workers). REQUIRES: 1 <= workers <= ests.
EstRange BurstEstsOfRank(std::int64_t ests, std::int64_t workers, int rank);

// The rank that runs EST `est` of a block placed on `workers` ranks. REQUIRES: 0 <= est < ests.
int BurstRankOfEst(std::int64_t ests, std::int64_t workers, std::int64_t est);

// "2/1/1/2".
std::string DescribeBurstWorkers(const std::vector<std::int64_t>& workers);

}  // namespace elastic::agent
