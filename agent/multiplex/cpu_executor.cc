// CpuExecutor: stream threads, their placement (affinity, priority) and the run loop.
#include "agent/multiplex/cpu_executor.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>

namespace elastic::agent::multiplex {
namespace {

constexpr int kLowestNice = 19;

// SCHED_IDLE runs a thread only when nothing else wants the core; Linux lets any thread switch
// itself to it. Where that is refused (seccomp, other kernels) nice 19 still gives the thread
// ~1.5% of a core against a nice-0 thread.
std::string DemoteCurrentThread() {
  sched_param param{};
  if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &param) == 0) return "SCHED_IDLE";
  if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kLowestNice) == 0) return "nice 19";
  return "none";
}

}  // namespace

CpuExecutor::CpuExecutor(CpuExecutorOptions options) : options_(std::move(options)) {}

CpuExecutor::~CpuExecutor() {
  std::vector<std::unique_ptr<Stream>> streams;
  {
    std::lock_guard lock(mutex_);
    streams.swap(streams_);
  }
  for (auto& stream : streams) {
    {
      std::lock_guard lock(stream->mutex);
      stream->stopping = true;
    }
    stream->ready.notify_all();
    stream->thread.join();
  }
}

void CpuExecutor::SetListener(ExecutorListener* listener) { listener_ = listener; }

StreamId CpuExecutor::CreateStream(StreamPriority priority) {
  auto stream = std::make_unique<Stream>();
  stream->priority = priority;
  Stream& ref = *stream;
  std::lock_guard lock(mutex_);
  streams_.push_back(std::move(stream));
  ref.thread = std::thread([this, &ref] { Run(ref); });
  return static_cast<StreamId>(streams_.size() - 1);
}

void CpuExecutor::Launch(StreamId stream_id, LaunchId id, Piece& piece) {
  Stream* stream;
  {
    std::lock_guard lock(mutex_);
    stream = streams_.at(stream_id).get();
  }
  {
    std::lock_guard lock(stream->mutex);
    stream->tasks.push_back({id, std::move(piece)});
  }
  stream->ready.notify_one();
}

std::string CpuExecutor::low_priority_mechanism() const {
  std::lock_guard lock(mutex_);
  return low_mechanism_;
}

void CpuExecutor::ApplyPlacement(StreamPriority priority) {
  if (!options_.cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu : options_.cpus) CPU_SET(cpu, &set);
    // Best effort: a core outside the cgroup's set is refused, and the thread keeps its mask.
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  }
  if (priority != StreamPriority::kLow) return;
  const std::string mechanism = options_.os_priorities ? DemoteCurrentThread() : "none";
  std::lock_guard lock(mutex_);
  low_mechanism_ = mechanism;
}

void CpuExecutor::Run(Stream& stream) {
  ApplyPlacement(stream.priority);
  for (;;) {
    Task task;
    {
      std::unique_lock lock(stream.mutex);
      stream.ready.wait(lock, [&] { return stream.stopping || !stream.tasks.empty(); });
      if (stream.tasks.empty()) return;  // stopping, and everything launched has run
      task = std::move(stream.tasks.front());
      stream.tasks.pop_front();
    }
    listener_->OnPieceStart(task.id);
    std::exception_ptr error;
    const auto start = std::chrono::steady_clock::now();
    try {
      task.piece.run();
    } catch (...) {
      error = std::current_exception();
    }
    const Duration duration = std::chrono::steady_clock::now() - start;
    task.piece = {};  // free what the piece holds before the engine hears it finished
    listener_->OnPieceEnd(task.id, duration, error);
  }
}

}  // namespace elastic::agent::multiplex
