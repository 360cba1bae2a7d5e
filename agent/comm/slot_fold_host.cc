// The host reference of the slot fold (slot_fold.h): the GPU kernel's bits, computed on the CPU.
#include "agent/comm/slot_fold.h"

namespace elastic::agent {

void SlotFoldOnHost(const float* slots, std::int64_t count, std::int64_t numel, float divisor,
                    float* out) {
  for (std::int64_t i = 0; i < numel; ++i) {
    // One float add per slot, left to right; x86-64 float arithmetic is IEEE single (SSE), and
    // an add followed by a division leaves nothing for -ffp-contract to fuse.
    float sum = slots[i];
    for (std::int64_t k = 1; k < count; ++k) sum += slots[k * numel + i];
    out[i] = sum / divisor;
  }
}

}  // namespace elastic::agent
