// CUDA backend of the multiplexing engine (torch-free, built wherever the CUDA toolkit is found):
// high/low-priority CUDA streams, pieces captured once into CUDA graphs and replayed, and
// completion (hence launch pacing) observed through CUDA events.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/multiplex/executor.h"

struct CUstream_st;

namespace elastic::agent::multiplex {

using CudaStream = CUstream_st*;  // cudaStream_t, without the CUDA headers in ours

// Runs a piece's host code so that its kernels go to `stream`. Plain CUDA code reads
// CurrentCudaStream(), which the executor sets around every scope; LibTorch code also needs
// LibTorch's current stream set (a c10::cuda::CUDAStreamGuard over getStreamFromExternal), which
// its caller supplies here: that keeps this library free of LibTorch.
using StreamScope = std::function<void(CudaStream stream, const std::function<void()>& run)>;

struct CudaExecutorOptions {
  int device = 0;
  // Capture each operator (Piece::op) into a CUDA graph on its first launch and replay the graph
  // afterwards. REQUIRES of every piece then: same kernels, shapes and device addresses on every
  // run (persistent buffers), no host synchronisation and no allocation inside.
  bool use_graphs = true;
  // High-priority streams at the device's greatest priority, low ones at its least. Off: every
  // stream at the least (the benchmark's naive co-location).
  bool stream_priorities = true;
  StreamScope stream_scope;  // empty: only CurrentCudaStream()
};

// The stream the piece whose host code runs on this thread must enqueue its work onto; nullptr
// outside a piece.
CudaStream CurrentCudaStream();

// Thread-safe. Launch runs the piece's host code (kernel launches, or a graph replay) on the
// caller's thread; a poller thread watches the CUDA events and calls the listener. Errors of the
// CUDA runtime outside a piece throw std::runtime_error naming the call; a piece's failure
// (its host code threw, or its capture failed) reaches the listener as the piece's error.
class CudaExecutor final : public Executor {
 public:
  explicit CudaExecutor(CudaExecutorOptions options = {});
  ~CudaExecutor() override;
  CudaExecutor(const CudaExecutor&) = delete;
  CudaExecutor& operator=(const CudaExecutor&) = delete;

  void SetListener(ExecutorListener* listener) override;
  StreamId CreateStream(StreamPriority priority) override;
  void Launch(StreamId stream, LaunchId id, Piece& piece) override;

  // The CUDA priority the stream got (lower numbers run first); for tests and the benchmark.
  int priority_of(StreamId stream) const;
  // How many CUDA graphs were captured (one per stream and operator) and replayed so far.
  std::uint64_t graphs_captured() const;
  std::uint64_t graph_replays() const;

 private:
  struct Stream;
  struct InFlight;

  void Enqueue(Stream& stream, InFlight& entry);
  void RunScoped(CudaStream stream, const std::function<void()>& run);
  void Poll();
  bool PollOnce();

  const CudaExecutorOptions options_;
  ExecutorListener* listener_ = nullptr;
  mutable std::mutex mutex_;
  std::condition_variable launched_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::uint64_t graphs_captured_ = 0;
  std::uint64_t graph_replays_ = 0;
  bool stopping_ = false;
  std::thread poller_;
};

}  // namespace elastic::agent::multiplex
