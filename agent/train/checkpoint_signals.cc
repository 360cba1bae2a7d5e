// Signal handlers that only record a checkpoint request.
#include "agent/train/checkpoint_signals.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <system_error>
#include <vector>

#include "agent/comm/communicator.h"

namespace elastic::agent {
namespace {

// Lock-free, hence async-signal-safe to store to.
std::atomic<bool> checkpoint_requested{false};
std::atomic<bool> stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void RecordCheckpointSignal(int signal_number) {
  if (signal_number == SIGTERM || signal_number == SIGUSR2) {
    stop_requested.store(true);
  } else {
    checkpoint_requested.store(true);
  }
}

void Install(int signal_number) {
  struct sigaction action = {};
  action.sa_handler = RecordCheckpointSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  if (sigaction(signal_number, &action, nullptr) != 0) {
    throw std::system_error(errno, std::generic_category(), "sigaction");
  }
}

}  // namespace

void InstallCheckpointSignalHandlers() {
  Install(SIGUSR1);
  Install(SIGTERM);
  Install(SIGUSR2);
}

CheckpointRequest TakeCheckpointRequest() {
  const bool stop = stop_requested.exchange(false);
  const bool checkpoint = checkpoint_requested.exchange(false);
  if (stop) return CheckpointRequest::kCheckpointAndStop;
  if (checkpoint) return CheckpointRequest::kCheckpoint;
  return CheckpointRequest::kNone;
}

}  // namespace elastic::agent

namespace elastic::agent {

CheckpointRequest AgreeOnCheckpointRequest(Communicator& world, CheckpointRequest local) {
  // Requests are ordered kNone < kCheckpoint < kCheckpointAndStop; small ints are exact floats.
  const float mine[] = {static_cast<float>(static_cast<int>(local))};
  std::vector<std::int64_t> counts;
  int strongest = 0;
  for (float request : world.AllGather(mine, counts)) {
    strongest = std::max(strongest, static_cast<int>(request));
  }
  return static_cast<CheckpointRequest>(strongest);
}

}  // namespace elastic::agent
