// The unit of work the multiplexing engine schedules: a piece of a foreground or background job.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace elastic::agent::multiplex {

// Foreground jobs get the device first; background jobs fill what is left (DeepPool §5).
enum class JobClass { kForeground, kBackground };

using JobId = std::uint32_t;

// One launchable unit of a job. On the CPU backend `run` does the work on an executor thread;
// on the CUDA backend `run` enqueues kernels onto the current stream (and is captured into a
// CUDA graph on its first launch), so it must not synchronise with the host.
// Pieces of one job run one after another, in submission order, never concurrently.
struct Piece {
  // Stable name of the operator (e.g. "conv3.fwd"): the key of the slowdown feedback (and of
  // the CUDA graph cache), so every iteration must use the same names for the same work.
  // Empty: the piece is neither measured nor captured.
  std::string op;
  std::function<void()> run;
  // The caller knows this piece suffers from co-location (e.g. a collective): run it alone, the
  // way the feedback treats a piece it has measured as sensitive. Foreground pieces only.
  bool isolate = false;
};

}  // namespace elastic::agent::multiplex
