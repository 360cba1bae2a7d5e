// The slot fold kernel (slot_fold.h): EST-order adds and the division by E, IEEE-rounded.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "agent/comm/slot_fold.h"

namespace elastic::agent {
namespace {

// __fadd_rn and __fdiv_rn are round-to-nearest whatever the compiler flags (no FMA contraction,
// no --use_fast_math approximation, no flush of subnormals): the host fold's operations.
__global__ void SlotFoldKernel(const float* __restrict__ slots, std::int64_t count,
                               std::int64_t numel, float divisor, float* __restrict__ out) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < numel; i += stride) {
    float sum = slots[i];
    for (std::int64_t k = 1; k < count; ++k) sum = __fadd_rn(sum, slots[k * numel + i]);
    out[i] = __fdiv_rn(sum, divisor);
  }
}

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 4096;  // grid-stride beyond: enough to fill an H100

}  // namespace

void SlotFoldOnDevice(const float* slots, std::int64_t count, std::int64_t numel, float divisor,
                      float* out, CUstream_st* stream) {
  if (numel == 0) return;
  const std::int64_t blocks = std::min(kMaxBlocks, (numel + kThreads - 1) / kThreads);
  SlotFoldKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(slots, count, numel,
                                                                         divisor, out);
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("slot fold: kernel launch: ") +
                             cudaGetErrorString(status));
  }
}

}  // namespace elastic::agent
