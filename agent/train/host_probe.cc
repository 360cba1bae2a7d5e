// A fixed kernel on every intra-op thread, timed; its slowest rank's time (host_probe.h).
#include "agent/train/host_probe.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

namespace elastic::agent {
namespace {

constexpr int kSide = 80;     // three 25 KiB matrices: cache-resident, so it times the CPU
constexpr int kProducts = 6;  // 0.4-0.6 ms on one vCPU of the development VM

// c += a * b, kProducts times; returns one element so the work cannot be elided.
float FixedKernel() {
  std::vector<float> a(kSide * kSide, 1.0f), b(kSide * kSide, 0.5f), c(kSide * kSide, 0.0f);
  for (int product = 0; product < kProducts; ++product) {
    for (int i = 0; i < kSide; ++i) {
      for (int k = 0; k < kSide; ++k) {
        const float x = a[i * kSide + k];
        for (int j = 0; j < kSide; ++j) c[i * kSide + j] += x * b[k * kSide + j];
      }
    }
  }
  return c[kSide + 1];
}

}  // namespace

double TimeHostProbe(int threads) {
  std::atomic<float> sink{0.0f};
  const auto start = std::chrono::steady_clock::now();
  // One chunk per thread (grain 1): each intra-op thread runs the kernel once.
  at::parallel_for(0, threads, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) sink.store(FixedKernel(), std::memory_order_relaxed);
  });
  const auto elapsed = std::chrono::steady_clock::now() - start;
  if (sink.load() < 0) return -1;  // never: the kernel's values are positive
  return std::chrono::duration<double, std::milli>(elapsed).count();
}

double TimeHostProbeOnEveryRank(Communicator& world, int threads) {
  const std::array<float, 1> mine{static_cast<float>(TimeHostProbe(threads))};
  std::vector<std::int64_t> counts;
  const std::vector<float> all = world.AllGather(mine, counts);
  return *std::max_element(all.begin(), all.end());
}

}  // namespace elastic::agent
