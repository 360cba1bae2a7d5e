// A per-rank watchdog for stalled collectives: MPI has no timeouts, so a peer that stops (SIGSTOP,
// a hung NIC, a swapping node) would block every other rank forever. If no step completes within
// the timeout, the watchdog ends this rank; the launcher (srun --kill-on-bad-exit, mpirun) then
// takes the step down and the supervisor relaunches it from the newest checkpoint. It never
// touches the numerics: it only decides when to give up. Torch-free.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace elastic::agent {

class StepWatchdog {
 public:
  using Clock = std::chrono::steady_clock;
  // `timeout` zero disables it. `on_stall` runs on the watchdog thread, once, with the time since
  // the last beat; the default prints why and ends the process (exit status 3).
  explicit StepWatchdog(std::chrono::seconds timeout,
                        std::function<void(std::chrono::seconds)> on_stall = {});
  ~StepWatchdog();
  StepWatchdog(const StepWatchdog&) = delete;
  StepWatchdog& operator=(const StepWatchdog&) = delete;

  // Progress: a step (or a checkpoint) completed. The first beat arms the watchdog, so start-up
  // (data loading, MPI wire-up) never counts against the timeout.
  void Beat();

 private:
  void Watch();

  const Clock::duration timeout_;
  std::function<void(std::chrono::seconds)> on_stall_;
  std::atomic<Clock::rep> last_beat_{0};  // 0: not armed yet
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace elastic::agent
