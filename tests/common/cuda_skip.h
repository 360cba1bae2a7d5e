// GPU suites skip cleanly without a device: any CUDA error while counting devices (no driver,
// no GPU, a container without /dev/nvidia*) counts as "no GPU here". Needs CUDA::cudart.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

namespace elastic::test {

inline int UsableCudaDevices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return 0;
  }
  return count;
}

}  // namespace elastic::test

// In a TEST body: skips the test (with the reason) where no CUDA device is usable.
#define ELASTIC_SKIP_WITHOUT_GPU()                                                  \
  do {                                                                              \
    if (::elastic::test::UsableCudaDevices() == 0) {                                \
      GTEST_SKIP() << "no usable CUDA device (cudaGetDeviceCount failed or found 0)"; \
    }                                                                               \
  } while (false)
