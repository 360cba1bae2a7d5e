// The EST-order fold of gradient slots, on a GPU (slot_fold.cu) and on the host (its reference):
// out[i] = (((s_0[i] + s_1[i]) + s_2[i]) + ... + s_{count-1}[i]) / divisor, every add and the
// division rounded to nearest float, never contracted or approximated. These are the operations
// GradientStash's host fold runs (clone, add_ in slot order, div_(E) on the CPU, whose float
// division is IEEE division), so both give the host fold's bits. Torch-free.
#pragma once

#include <cstdint>

struct CUstream_st;

namespace elastic::agent {

// `slots`: `count` slots of `numel` floats back to back; `out`: `numel` floats, not overlapping
// `slots`. REQUIRES: count >= 1, numel >= 0.
void SlotFoldOnHost(const float* slots, std::int64_t count, std::int64_t numel, float divisor,
                    float* out);

// The same on device buffers, enqueued on `stream` (nullptr: the legacy default stream, where
// LibTorch's default-stream work runs); returns without waiting. Throws std::runtime_error
// naming the CUDA error when the launch fails. Built only with the CUDA toolkit
// (ELASTIC_HAVE_CUDA_TOOLKIT).
void SlotFoldOnDevice(const float* slots, std::int64_t count, std::int64_t numel, float divisor,
                      float* out, CUstream_st* stream);

}  // namespace elastic::agent
