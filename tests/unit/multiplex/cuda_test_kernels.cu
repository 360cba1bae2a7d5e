// The CUDA executor tests' kernels (cuda_test_kernels.h).
#include <cuda_runtime_api.h>

#include "tests/unit/multiplex/cuda_test_kernels.h"

namespace elastic::test {
namespace {

__global__ void IncrementKernel(int* counter) { *counter += 1; }

__global__ void SpinKernel(std::int64_t cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

}  // namespace

void LaunchIncrement(int* counter, CUstream_st* stream) {
  IncrementKernel<<<1, 1, 0, stream>>>(counter);
}

void LaunchSpin(std::int64_t cycles, int blocks, CUstream_st* stream) {
  SpinKernel<<<blocks, 128, 0, stream>>>(cycles);
}

}  // namespace elastic::test
