// ZeRO-Offload's host side (Rubick §3, §4.2 T_opt with c threads): runs the owner's optimizer
// update on c threads of its own, apart from the training thread. On this CPU-only build the
// "device" is the CPU too, so offloading means this separate pool; with ELASTIC_CUDA the
// GPU-to-host gradient copy and the host-to-GPU parameter copy would wrap it.
// Includes no LibTorch. Thread-safe: RunParts may be called from one thread at a time.
#pragma once

#include <cstddef>
#include <functional>

namespace elastic::agent {

// Calls work(0) ... work(parts - 1), each exactly once, on `threads` threads of its own (part k
// on thread k mod threads), and returns when all are done; rethrows the first exception.
// Which thread runs a part changes no result as long as the parts touch disjoint data.
void RunParts(std::size_t parts, std::size_t threads, const std::function<void(std::size_t)>& work);

}  // namespace elastic::agent
