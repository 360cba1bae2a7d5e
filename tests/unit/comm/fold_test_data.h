// Gradient-like slots that make a fold's association and rounding visible: mixed magnitudes
// (so adds round), signed zeros in every slot pattern (-0 + -0 stays -0, -0 + +0 is +0),
// subnormals and exact cancellations. Shared by the host and GPU slot fold tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace elastic::test {

inline std::vector<float> FoldTestSlots(std::int64_t count, std::int64_t numel,
                                        std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-30, 30);
  std::uniform_int_distribution<int> kind(0, 15);
  std::vector<float> slots(static_cast<std::size_t>(count * numel));
  for (std::int64_t i = 0; i < numel; ++i) {
    const bool all_negative_zero = i % 97 == 0;  // the one element whose fold stays -0
    for (std::int64_t k = 0; k < count; ++k) {
      float& v = slots[static_cast<std::size_t>(k * numel + i)];
      if (all_negative_zero) {
        v = -0.0f;
        continue;
      }
      switch (kind(rng)) {
        case 0: v = -0.0f; break;
        case 1: v = 0.0f; break;
        case 2: v = std::numeric_limits<float>::denorm_min() * static_cast<float>(1 + kind(rng));
                break;
        case 3: v = -slots[static_cast<std::size_t>((k > 0 ? k - 1 : 0) * numel + i)]; break;
        default: v = std::ldexp(mantissa(rng), exponent(rng)); break;
      }
    }
  }
  return slots;
}

}  // namespace elastic::test
