// Block layouts of gathered buffers and the NCCL calls an unequal all-gather is cut into.
#include "agent/comm/collective_layout.h"

#include <stdexcept>
#include <unordered_map>

namespace elastic::agent {

BlockLayout BlocksOfCounts(std::span<const std::int64_t> counts) {
  BlockLayout layout;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] < 0) {
      throw std::invalid_argument("block layout: rank " + std::to_string(r) + " has count " +
                                  std::to_string(counts[r]) + ": expected >= 0");
    }
    layout.counts.push_back(counts[r]);
    layout.offsets.push_back(layout.total);
    layout.total += counts[r];
  }
  return layout;
}

BlockLayout BlocksOfItems(std::span<const std::int64_t> items_per_rank, std::int64_t item_numel) {
  if (item_numel < 0) {
    throw std::invalid_argument("block layout: item size " + std::to_string(item_numel) +
                                ": expected >= 0");
  }
  std::vector<std::int64_t> counts;
  for (std::size_t r = 0; r < items_per_rank.size(); ++r) {
    if (items_per_rank[r] < 0) {
      throw std::invalid_argument("block layout: rank " + std::to_string(r) + " has " +
                                  std::to_string(items_per_rank[r]) + " items: expected >= 0");
    }
    counts.push_back(items_per_rank[r] * item_numel);
  }
  return BlocksOfCounts(counts);
}

std::vector<BroadcastCall> AllGatherBroadcasts(const BlockLayout& layout) {
  std::vector<BroadcastCall> calls;
  for (std::size_t r = 0; r < layout.counts.size(); ++r) {
    if (layout.counts[r] == 0) continue;
    calls.push_back({static_cast<int>(r), layout.offsets[r], layout.counts[r]});
  }
  return calls;
}

std::optional<std::pair<int, int>> FirstSharedDevice(std::span<const std::string> devices) {
  std::unordered_map<std::string, int> first_rank;
  for (std::size_t r = 0; r < devices.size(); ++r) {
    const auto [it, inserted] = first_rank.emplace(devices[r], static_cast<int>(r));
    if (!inserted) return std::pair{it->second, static_cast<int>(r)};
  }
  return std::nullopt;
}

}  // namespace elastic::agent
