// StepWatchdog: one thread per rank that wakes once a second and compares with the last beat.
#include "agent/train/step_watchdog.h"

#include <cstdio>
#include <cstdlib>

namespace elastic::agent {

StepWatchdog::StepWatchdog(std::chrono::seconds timeout,
                           std::function<void(std::chrono::seconds)> on_stall)
    : timeout_(timeout), on_stall_(std::move(on_stall)) {
  if (!on_stall_) {
    on_stall_ = [](std::chrono::seconds since) {
      std::fprintf(stderr,
                   "elastic-agent: no training step completed for %lld s (train.step_timeout_s): "
                   "a peer rank is stalled or gone; ending this rank so the step is relaunched "
                   "from the newest checkpoint\n",
                   static_cast<long long>(since.count()));
      std::fflush(stderr);
      std::_Exit(3);  // no destructors: other threads may be blocked inside MPI
    };
  }
  if (timeout.count() > 0) thread_ = std::thread([this] { Watch(); });
}

StepWatchdog::~StepWatchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StepWatchdog::Beat() { last_beat_.store(Clock::now().time_since_epoch().count()); }

void StepWatchdog::Watch() {
  std::unique_lock lock(mutex_);
  while (!stop_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stopping_; })) {
    const Clock::rep last = last_beat_.load();
    if (last == 0) continue;
    const Clock::duration since = Clock::now().time_since_epoch() - Clock::duration(last);
    if (since > timeout_) {
      on_stall_(std::chrono::duration_cast<std::chrono::seconds>(since));
      return;
    }
  }
}

}  // namespace elastic::agent
