// Tiny kernels for the CUDA executor's tests and benchmark: a counter to see which launches ran,
// and a spin to occupy the GPU for a known number of clock cycles.
#pragma once

#include <cstdint>

struct CUstream_st;

namespace elastic::test {

// *counter += 1 on `stream` (one thread).
void LaunchIncrement(int* counter, CUstream_st* stream);
// `blocks` blocks of 128 threads each spinning for `cycles` SM clock cycles on `stream`.
void LaunchSpin(std::int64_t cycles, int blocks, CUstream_st* stream);

}  // namespace elastic::test
