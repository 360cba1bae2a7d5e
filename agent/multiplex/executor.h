// The device seam of the multiplexing engine: streams that run launched pieces in order.
// Backends: CpuExecutor (threads, always built) and CudaExecutor (CUDA streams and graphs,
// built wherever the CUDA toolkit is found: elastic_multiplex_cuda).
#pragma once

#include <cstdint>
#include <exception>

#include "agent/multiplex/clock.h"
#include "agent/multiplex/piece.h"

namespace elastic::agent::multiplex {

// High-priority streams carry foreground jobs, low-priority streams background jobs.
enum class StreamPriority { kHigh, kLow };

using StreamId = std::uint32_t;
using LaunchId = std::uint64_t;

// Told when launched pieces start and finish. Called from the executor's own threads, never
// from inside Launch, and never twice at once for one stream.
class ExecutorListener {
 public:
  virtual ~ExecutorListener() = default;
  virtual void OnPieceStart(LaunchId id) = 0;
  // `duration` is the piece's run time on the device; `error` is set when it threw.
  virtual void OnPieceEnd(LaunchId id, Duration duration, std::exception_ptr error) = 0;
};

// Thread-safe: Launch may be called from any thread. The listener must outlive the executor's
// last callback, i.e. the executor's destruction.
class Executor {
 public:
  virtual ~Executor() = default;
  // REQUIRES: called once, before CreateStream.
  virtual void SetListener(ExecutorListener* listener) = 0;
  virtual StreamId CreateStream(StreamPriority priority) = 0;
  // Enqueues `piece` on `stream` and returns at once; pieces of one stream run in launch order.
  // The piece is moved from: its callable must stay valid until OnPieceEnd.
  virtual void Launch(StreamId stream, LaunchId id, Piece& piece) = 0;
};

}  // namespace elastic::agent::multiplex
