// CUDA backend of the multiplexing engine (built only with ELASTIC_CUDA and a CUDA LibTorch):
// high/low-priority CUDA streams, pieces captured once into CUDA graphs and replayed, and
// completion (hence launch pacing) observed through CUDA events.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "agent/multiplex/executor.h"

namespace elastic::agent::multiplex {

struct CudaExecutorOptions {
  int device = 0;
  // Capture each operator (Piece::op) into a CUDA graph on its first launch and replay the graph
  // afterwards. REQUIRES of every piece then: same kernels, shapes and tensor addresses on every
  // run (persistent input/output tensors), no host synchronisation inside.
  bool use_graphs = true;
};

// Thread-safe. Launch runs the piece's host code (kernel launches or a graph replay) on the
// caller's thread; a poller thread watches the CUDA events and calls the listener.
class CudaExecutor final : public Executor {
 public:
  explicit CudaExecutor(CudaExecutorOptions options = {});
  ~CudaExecutor() override;
  CudaExecutor(const CudaExecutor&) = delete;
  CudaExecutor& operator=(const CudaExecutor&) = delete;

  void SetListener(ExecutorListener* listener) override;
  StreamId CreateStream(StreamPriority priority) override;
  void Launch(StreamId stream, LaunchId id, Piece& piece) override;

 private:
  struct Stream;
  struct InFlight;

  void Poll();
  bool PollOnce();

  const CudaExecutorOptions options_;
  ExecutorListener* listener_ = nullptr;
  std::mutex mutex_;
  std::condition_variable launched_;
  std::vector<std::unique_ptr<Stream>> streams_;
  bool stopping_ = false;
  std::thread poller_;
};

}  // namespace elastic::agent::multiplex
