// Which rank owns which parameters under ZeRO (and which host thread updates which under
// ZeRO-Offload): contiguous runs of whole parameters in named_parameters() order, balanced by
// size. Pure and torch-free.
//
// Why whole parameters, not an even split of the flat vector at arbitrary floats: the owner then
// updates each parameter with the very tensor operations SGD applies to that tensor on a
// replica, so LibTorch's vectorised loops split it identically (the vector body and the scalar
// tail of `p += -lr * buf` need not round alike) and the shard's bits equal the replica's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace elastic::agent {

struct ParameterShard {
  std::size_t first = 0;  // parameter indices [first, last)
  std::size_t last = 0;
  std::int64_t begin = 0;  // float offsets [begin, end) in the flat parameter vector
  std::int64_t end = 0;
  std::int64_t size() const { return end - begin; }
};

// `parts` shards of parameters with element counts `numels`: shard k starts at the parameter
// boundary nearest to k/parts of the total (the first such boundary on a tie), so a shard can be
// empty when one parameter dominates. Deterministic: a function of (numels, parts) only.
// REQUIRES: parts >= 1.
std::vector<ParameterShard> SplitParameters(std::span<const std::int64_t> numels, int parts);

}  // namespace elastic::agent
