// CudaExecutor: c10 pool streams with priorities, graph capture/replay, event-based completion.
// Not built without ELASTIC_CUDA; written against LibTorch's c10/cuda and ATen/cuda API.
#include "agent/multiplex/cuda_executor.h"

#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <optional>

namespace elastic::agent::multiplex {

struct CudaExecutor::InFlight {
  LaunchId id = 0;
  Piece piece;  // keeps the tensors the kernels use alive until the end event
  cudaEvent_t start = nullptr;
  cudaEvent_t end = nullptr;
  std::exception_ptr error;  // the host side threw: nothing was enqueued
  bool started = false;
};

struct CudaExecutor::Stream {
  explicit Stream(c10::cuda::CUDAStream s) : stream(s) {}
  c10::cuda::CUDAStream stream;
  std::unordered_map<std::string, std::unique_ptr<at::cuda::CUDAGraph>> graphs;
  std::deque<InFlight> in_flight;  // launch order = completion order on one stream
};

namespace {

constexpr auto kPollInterval = std::chrono::microseconds(20);

cudaEvent_t TimingEvent() {
  cudaEvent_t event = nullptr;
  C10_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDefault));
  return event;
}

}  // namespace

CudaExecutor::CudaExecutor(CudaExecutorOptions options)
    : options_(options), poller_([this] { Poll(); }) {}

CudaExecutor::~CudaExecutor() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  launched_.notify_all();
  poller_.join();  // the poller leaves once every launched piece has been reported
}

void CudaExecutor::SetListener(ExecutorListener* listener) { listener_ = listener; }

StreamId CudaExecutor::CreateStream(StreamPriority priority) {
  const bool high = priority == StreamPriority::kHigh;
  auto stream = std::make_unique<Stream>(
      c10::cuda::getStreamFromPool(high, static_cast<c10::DeviceIndex>(options_.device)));
  std::lock_guard lock(mutex_);
  streams_.push_back(std::move(stream));
  return static_cast<StreamId>(streams_.size() - 1);
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
    c10::cuda::CUDAStreamGuard guard(stream->stream);
    entry.start = TimingEvent();
    entry.end = TimingEvent();
    C10_CUDA_CHECK(cudaEventRecord(entry.start, stream->stream.stream()));
    if (options_.use_graphs && !entry.piece.op.empty()) {
      auto& graph = stream->graphs[entry.piece.op];
      if (!graph) {  // first launch of this operator: capture it (capture runs nothing)
        graph = std::make_unique<at::cuda::CUDAGraph>();
        graph->capture_begin();
        entry.piece.run();
        graph->capture_end();
      }
      graph->replay();
    } else {
      entry.piece.run();
    }
    C10_CUDA_CHECK(cudaEventRecord(entry.end, stream->stream.stream()));
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
      if (!head.started && (head.error || cudaEventQuery(head.start) == cudaSuccess)) {
        head.started = true;
        started = head.id;
      }
      if (head.started && (head.error || cudaEventQuery(head.end) == cudaSuccess)) {
        done = std::move(head);
        stream->in_flight.pop_front();
      }
    }
    if (started) listener_->OnPieceStart(*started);
    if (!done) continue;
    float ms = 0;
    if (!done->error) cudaEventElapsedTime(&ms, done->start, done->end);
    if (done->start) cudaEventDestroy(done->start);
    if (done->end) cudaEventDestroy(done->end);
    done->piece = {};
    listener_->OnPieceEnd(
        done->id,
        std::chrono::duration_cast<Duration>(std::chrono::duration<float, std::milli>(ms)),
        done->error);
    progressed = true;
  }
  return progressed;
}

}  // namespace elastic::agent::multiplex
