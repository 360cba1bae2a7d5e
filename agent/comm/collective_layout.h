// Where each rank's block lies in a gathered buffer, and how an unequal all-gather or an
// all-to-all is cut into NCCL calls: the host-side arithmetic of the NCCL communicator
// (nccl_communicator.h), torch-free and CUDA-free so it is tested everywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace elastic::agent {

// Rank r's block: `counts[r]` floats at `offsets[r]`, the blocks back to back in rank order.
struct BlockLayout {
  std::vector<std::int64_t> counts;
  std::vector<std::int64_t> offsets;
  std::int64_t total = 0;
};

// Blocks of the given float counts. Throws std::invalid_argument for a negative count.
BlockLayout BlocksOfCounts(std::span<const std::int64_t> counts);

// Blocks of `items_per_rank[r]` items of `item_numel` floats each: the EST slots of an unequal
// all-gather (E = 8 ESTs on W = 3 ranks host 3, 3, 2 slots of P floats). Throws
// std::invalid_argument for a negative item count or numel.
BlockLayout BlocksOfItems(std::span<const std::int64_t> items_per_rank, std::int64_t item_numel);

// One ncclBroadcast of an unequal all-gather: `root`'s block, `count` floats at `offset`.
struct BroadcastCall {
  int root = 0;
  std::int64_t offset = 0;
  std::int64_t count = 0;
};

// The broadcasts an unequal all-gather groups together: one per rank whose block is not empty
// (a rank hosting no EST sends nothing), in rank order.
std::vector<BroadcastCall> AllGatherBroadcasts(const BlockLayout& layout);

// The first two ranks whose device identities (e.g. PCI bus ids, one per rank) are equal, or
// nullopt when every rank has a device of its own. NCCL refuses two ranks on one GPU.
std::optional<std::pair<int, int>> FirstSharedDevice(std::span<const std::string> devices);

}  // namespace elastic::agent
