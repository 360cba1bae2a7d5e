// CudaExecutor: CUDA runtime streams with priorities, stream-capture graphs, event completion.
#include "agent/multiplex/cuda_executor.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <unordered_map>

namespace elastic::agent::multiplex {

struct CudaExecutor::InFlight {
  LaunchId id = 0;
  Piece piece;  // keeps whatever the kernels use alive until the end event
  cudaEvent_t start = nullptr;
  cudaEvent_t end = nullptr;
  std::exception_ptr error;  // the host side threw: nothing (more) was enqueued
  bool started = false;
};

struct CudaExecutor::Stream {
  std::mutex launch_mutex;  // one launch at a time: capture and the graph cache are per stream
  cudaStream_t stream = nullptr;
  int priority = 0;
  std::unordered_map<std::string, cudaGraphExec_t> graphs;  // by Piece::op
  std::deque<InFlight> in_flight;  // launch order = completion order on one stream
};

namespace {

constexpr auto kPollInterval = std::chrono::microseconds(20);
thread_local CudaStream current_stream = nullptr;

void Check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("CudaExecutor: ") + call + ": " +
                             cudaGetErrorString(status));
  }
}

// Sets this thread's current stream for the duration of a piece's host code.
class CurrentStreamScope {
 public:
  explicit CurrentStreamScope(CudaStream stream) : saved_(current_stream) {
    current_stream = stream;
  }
  ~CurrentStreamScope() { current_stream = saved_; }
  CurrentStreamScope(const CurrentStreamScope&) = delete;
  CurrentStreamScope& operator=(const CurrentStreamScope&) = delete;

 private:
  CudaStream saved_;
};

}  // namespace

CudaStream CurrentCudaStream() { return current_stream; }

CudaExecutor::CudaExecutor(CudaExecutorOptions options) : options_(std::move(options)) {
  Check(cudaSetDevice(options_.device), "cudaSetDevice");
  poller_ = std::thread([this] { Poll(); });
}

CudaExecutor::~CudaExecutor() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  launched_.notify_all();
  poller_.join();  // the poller leaves once every launched piece has been reported
  for (auto& stream : streams_) {
    for (auto& [op, graph] : stream->graphs) cudaGraphExecDestroy(graph);
    cudaStreamDestroy(stream->stream);
  }
}

void CudaExecutor::SetListener(ExecutorListener* listener) { listener_ = listener; }

StreamId CudaExecutor::CreateStream(StreamPriority priority) {
  Check(cudaSetDevice(options_.device), "cudaSetDevice");
  int least = 0;
  int greatest = 0;  // numerically lowest: runs first
  Check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
  auto stream = std::make_unique<Stream>();
  const bool high = options_.stream_priorities && priority == StreamPriority::kHigh;
  stream->priority = high ? greatest : least;
  // Non-blocking: the legacy default stream (LibTorch's default work) must not serialise the
  // foreground and background streams against each other.
  Check(cudaStreamCreateWithPriority(&stream->stream, cudaStreamNonBlocking, stream->priority),
        "cudaStreamCreateWithPriority");
  std::lock_guard lock(mutex_);
  streams_.push_back(std::move(stream));
  return static_cast<StreamId>(streams_.size() - 1);
}

int CudaExecutor::priority_of(StreamId stream) const {
  std::lock_guard lock(mutex_);
  return streams_.at(stream)->priority;
}

std::uint64_t CudaExecutor::graphs_captured() const {
  std::lock_guard lock(mutex_);
  return graphs_captured_;
}

std::uint64_t CudaExecutor::graph_replays() const {
  std::lock_guard lock(mutex_);
  return graph_replays_;
}

void CudaExecutor::RunScoped(CudaStream stream, const std::function<void()>& run) {
  CurrentStreamScope scope(stream);
  if (options_.stream_scope) {
    options_.stream_scope(stream, run);
  } else {
    run();
  }
}

// The piece's work between its two events: its kernels, or its graph (captured on first use;
// capture only records, so the graph is launched right after).
void CudaExecutor::Enqueue(Stream& stream, InFlight& entry) {
  Check(cudaSetDevice(options_.device), "cudaSetDevice");
  Check(cudaEventCreate(&entry.start), "cudaEventCreate");
  Check(cudaEventCreate(&entry.end), "cudaEventCreate");
  Check(cudaEventRecord(entry.start, stream.stream), "cudaEventRecord");
  if (!options_.use_graphs || entry.piece.op.empty()) {
    RunScoped(stream.stream, entry.piece.run);
  } else {
    auto found = stream.graphs.find(entry.piece.op);
    if (found == stream.graphs.end()) {
      // Thread-local mode: other jobs' threads keep launching onto their own streams meanwhile.
      Check(cudaStreamBeginCapture(stream.stream, cudaStreamCaptureModeThreadLocal),
            "cudaStreamBeginCapture");
      cudaGraph_t graph = nullptr;
      try {
        RunScoped(stream.stream, entry.piece.run);
      } catch (...) {
        cudaStreamEndCapture(stream.stream, &graph);  // leave capture mode before reporting
        if (graph != nullptr) cudaGraphDestroy(graph);
        throw;
      }
      Check(cudaStreamEndCapture(stream.stream, &graph), "cudaStreamEndCapture");
      cudaGraphExec_t exec = nullptr;
      const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
      cudaGraphDestroy(graph);
      Check(made, "cudaGraphInstantiate");
      found = stream.graphs.emplace(entry.piece.op, exec).first;
      std::lock_guard lock(mutex_);
      ++graphs_captured_;
    }
    Check(cudaGraphLaunch(found->second, stream.stream), "cudaGraphLaunch");
    std::lock_guard lock(mutex_);
    ++graph_replays_;
  }
  Check(cudaEventRecord(entry.end, stream.stream), "cudaEventRecord");
}

void CudaExecutor::Launch(StreamId stream_id, LaunchId id, Piece& piece) {
  Stream* stream;
  {
    std::lock_guard lock(mutex_);
    stream = streams_.at(stream_id).get();
  }
  InFlight entry;
  entry.id = id;
  entry.piece = std::move(piece);
  try {
    std::lock_guard launching(stream->launch_mutex);
    Enqueue(*stream, entry);
  } catch (...) {
    entry.error = std::current_exception();
  }
  {
    std::lock_guard lock(mutex_);
    stream->in_flight.push_back(std::move(entry));
  }
  launched_.notify_one();
}

void CudaExecutor::Poll() {
  cudaSetDevice(options_.device);  // event queries are per-thread device state
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      const auto busy = [&] {
        for (const auto& s : streams_) {
          if (!s->in_flight.empty()) return true;
        }
        return false;
      };
      launched_.wait(lock, [&] { return stopping_ || busy(); });
      if (stopping_ && !busy()) return;
    }
    if (!PollOnce()) std::this_thread::sleep_for(kPollInterval);
  }
}

namespace {

// An event that never got recorded (its piece failed first) counts as reached.
bool Reached(cudaEvent_t event, const std::exception_ptr& error) {
  return error || event == nullptr || cudaEventQuery(event) == cudaSuccess;
}

Duration Elapsed(cudaEvent_t start, cudaEvent_t end) {
  float ms = 0;
  if (start != nullptr && end != nullptr && cudaEventElapsedTime(&ms, start, end) != cudaSuccess) {
    ms = 0;
  }
  return std::chrono::duration_cast<Duration>(std::chrono::duration<float, std::milli>(ms));
}

}  // namespace

// Reports what the events say has started or finished, oldest first on each stream. Listener
// calls happen without our lock held (the engine may Launch from inside them).
bool CudaExecutor::PollOnce() {
  bool progressed = false;
  std::vector<Stream*> streams;
  {
    std::lock_guard lock(mutex_);
    for (auto& s : streams_) streams.push_back(s.get());
  }
  for (Stream* stream : streams) {
    std::optional<InFlight> done;
    std::optional<LaunchId> started;
    {
      std::lock_guard lock(mutex_);
      if (stream->in_flight.empty()) continue;
      InFlight& head = stream->in_flight.front();
      if (!head.started && Reached(head.start, head.error)) {
        head.started = true;
        started = head.id;
      }
      if (head.started && Reached(head.end, head.error)) {
        done = std::move(head);
        stream->in_flight.pop_front();
      }
    }
    if (started) listener_->OnPieceStart(*started);
    if (!done) continue;
    const Duration duration = done->error ? Duration{} : Elapsed(done->start, done->end);
    if (done->start) cudaEventDestroy(done->start);
    if (done->end) cudaEventDestroy(done->end);
    done->piece = {};
    listener_->OnPieceEnd(done->id, duration, done->error);
    progressed = true;
  }
  return progressed;
}

}  // namespace elastic::agent::multiplex
