// SplitParameters: parameter-aligned shards balanced by element count.
#include "agent/plan/parameter_shards.h"

namespace elastic::agent {

std::vector<ParameterShard> SplitParameters(std::span<const std::int64_t> numels, int parts) {
  std::vector<std::int64_t> offsets{0};  // offsets[i]: where parameter i starts; back(): total
  for (std::int64_t n : numels) offsets.push_back(offsets.back() + n);
  const std::int64_t total = offsets.back();
  std::vector<std::size_t> bounds{0};
  for (int k = 1; k < parts; ++k) {
    // Exact integer target k * total / parts, compared as distance * parts to stay integral.
    const std::int64_t target = static_cast<std::int64_t>(k) * total;
    std::size_t best = bounds.back();
    for (std::size_t j = bounds.back(); j < offsets.size(); ++j) {
      const auto distance = [&](std::size_t i) {
        const std::int64_t d = offsets[i] * parts - target;
        return d < 0 ? -d : d;
      };
      if (distance(j) < distance(best)) best = j;
    }
    bounds.push_back(best);
  }
  bounds.push_back(numels.size());
  std::vector<ParameterShard> shards;
  for (int k = 0; k < parts; ++k) {
    const std::size_t first = bounds[static_cast<std::size_t>(k)];
    const std::size_t last = bounds[static_cast<std::size_t>(k) + 1];
    shards.push_back({first, last, offsets[first], offsets[last]});
  }
  return shards;
}

}  // namespace elastic::agent
