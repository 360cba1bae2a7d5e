// CPU backend of the multiplexing engine: one worker thread per stream, low-priority streams
// demoted with SCHED_IDLE (or nice 19), all streams confined to the "device" cores.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/multiplex/executor.h"

namespace elastic::agent::multiplex {

struct CpuExecutorOptions {
  // The cores that play the device: every stream thread is pinned to this set. Empty: the
  // process's own affinity.
  std::vector<int> cpus;
  // Stream priorities through the OS scheduler. Unprivileged threads may lower their own
  // priority but never raise it back, so low-priority streams get their own threads (switched
  // to SCHED_IDLE once, falling back to nice 19) and high-priority ones stay at nice 0.
  bool os_priorities = true;
};

// Thread-safe. Destruction finishes the pieces already launched, then joins the threads.
class CpuExecutor final : public Executor {
 public:
  explicit CpuExecutor(CpuExecutorOptions options = {});
  ~CpuExecutor() override;
  CpuExecutor(const CpuExecutor&) = delete;
  CpuExecutor& operator=(const CpuExecutor&) = delete;

  void SetListener(ExecutorListener* listener) override;
  StreamId CreateStream(StreamPriority priority) override;
  void Launch(StreamId stream, LaunchId id, Piece& piece) override;

  // How low-priority streams were demoted: "SCHED_IDLE", "nice 19", "none" (options off or
  // refused) or "" before the first low-priority stream ran.
  std::string low_priority_mechanism() const;

 private:
  struct Task {
    LaunchId id = 0;
    Piece piece;
  };
  struct Stream {
    StreamPriority priority;
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<Task> tasks;
    bool stopping = false;
    std::thread thread;
  };

  void Run(Stream& stream);
  void ApplyPlacement(StreamPriority priority);

  const CpuExecutorOptions options_;
  ExecutorListener* listener_ = nullptr;
  mutable std::mutex mutex_;  // guards streams_ (the vector) and low_mechanism_
  std::vector<std::unique_ptr<Stream>> streams_;
  std::string low_mechanism_;
};

}  // namespace elastic::agent::multiplex
