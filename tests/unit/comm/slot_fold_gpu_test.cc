// slot_fold.cu's kernel gives the host reference's bits (slot_fold.h), on a GPU; skips without.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "agent/comm/slot_fold.h"
#include "tests/common/cuda_skip.h"
#include "tests/unit/comm/fold_test_data.h"

namespace elastic::agent {
namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

// Folds `count` slots of `numel` floats on the GPU and compares the bits with the host fold.
void ExpectKernelMatchesHost(std::int64_t count, std::int64_t numel, float divisor,
                             std::uint32_t seed) {
  const std::vector<float> slots = test::FoldTestSlots(count, numel, seed);
  std::vector<float> expected(static_cast<std::size_t>(numel));
  SlotFoldOnHost(slots.data(), count, numel, divisor, expected.data());
  float* device_slots = nullptr;
  float* device_out = nullptr;
  CUDA_OK(cudaMalloc(&device_slots, slots.size() * sizeof(float)));
  CUDA_OK(cudaMalloc(&device_out, expected.size() * sizeof(float)));
  CUDA_OK(cudaMemcpy(device_slots, slots.data(), slots.size() * sizeof(float),
                     cudaMemcpyHostToDevice));
  SlotFoldOnDevice(device_slots, count, numel, divisor, device_out, nullptr);
  std::vector<float> got(expected.size());
  CUDA_OK(cudaMemcpy(got.data(), device_out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  cudaFree(device_slots);
  cudaFree(device_out);
  std::int64_t differing = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &expected[i], sizeof(float)) != 0 && differing++ < 5) {
      ADD_FAILURE() << "E=" << count << " element " << i << ": GPU " << got[i] << " host "
                    << expected[i];
    }
  }
  EXPECT_EQ(differing, 0) << "of " << numel << " floats, E=" << count;
}

TEST(SlotFoldGpuTest, KernelBitsEqualTheHostFoldForSeveralEstCounts) {
  ELASTIC_SKIP_WITHOUT_GPU();
  for (const std::int64_t ests : {1, 2, 3, 5, 8}) {
    ExpectKernelMatchesHost(ests, 100003, static_cast<float>(ests),
                            17u + static_cast<unsigned>(ests));
  }
}

TEST(SlotFoldGpuTest, GridStrideCoversMoreFloatsThanOneLaunchHasThreads) {
  ELASTIC_SKIP_WITHOUT_GPU();
  ExpectKernelMatchesHost(3, (std::int64_t{1} << 21) + 7, 3.0f, 5u);  // > 4096 blocks x 256
}

TEST(SlotFoldGpuTest, AllNegativeZeroSlotsStayNegativeZero) {
  ELASTIC_SKIP_WITHOUT_GPU();
  const std::vector<float> slots(5 * 4, -0.0f);
  float* device_slots = nullptr;
  float* device_out = nullptr;
  CUDA_OK(cudaMalloc(&device_slots, slots.size() * sizeof(float)));
  CUDA_OK(cudaMalloc(&device_out, 4 * sizeof(float)));
  CUDA_OK(cudaMemcpy(device_slots, slots.data(), slots.size() * sizeof(float),
                     cudaMemcpyHostToDevice));
  SlotFoldOnDevice(device_slots, 5, 4, 5.0f, device_out, nullptr);
  float got[4] = {1, 1, 1, 1};
  CUDA_OK(cudaMemcpy(got, device_out, sizeof(got), cudaMemcpyDeviceToHost));
  cudaFree(device_slots);
  cudaFree(device_out);
  for (float v : got) EXPECT_TRUE(v == 0.0f && std::signbit(v)) << v;
}

}  // namespace
}  // namespace elastic::agent
