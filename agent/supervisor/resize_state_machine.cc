// Transitions of the supervisor's resize protocol.
#include "agent/supervisor/resize_state_machine.h"

namespace elastic::agent {

const char* ToString(SupervisorState state) {
  switch (state) {
    case SupervisorState::kStarting: return "starting";
    case SupervisorState::kRunning: return "running";
    case SupervisorState::kCheckpointing: return "checkpointing";
    case SupervisorState::kResizing: return "resizing";
    case SupervisorState::kRelaunching: return "relaunching";
    case SupervisorState::kFinished: return "finished";
    case SupervisorState::kFailed: return "failed";
  }
  return "?";
}

ResizeStateMachine::ResizeStateMachine(int nodes, int max_restarts)
    : nodes_(nodes), max_restarts_(max_restarts) {}

Action ResizeStateMachine::Report(const std::string& detail) const {
  return {ActionKind::kReport, nodes_, generation_, false, std::string(ToString(state_)) +
                                                              (detail.empty() ? "" : ": " + detail)};
}

std::vector<Action> ResizeStateMachine::Start() {
  if (state_ != SupervisorState::kStarting) return {};
  state_ = SupervisorState::kRunning;
  return {{ActionKind::kLaunchStep, nodes_, generation_, false, {}}, Report("")};
}

std::vector<Action> ResizeStateMachine::OnOrder(const ResizeOrder& order) {
  std::uint64_t newest = queued_ ? queued_->generation
                                 : (in_flight_ ? in_flight_->generation : generation_);
  if (order.generation <= newest) {
    return {Report("order generation " + std::to_string(order.generation) +
                   " already seen (newest " + std::to_string(newest) + "): ignored")};
  }
  if (order.nodes() < 1) return {Report("order for " + std::to_string(order.nodes()) +
                                      " nodes refused: a job keeps at least one node")};
  switch (state_) {
    case SupervisorState::kRunning:
      if (order.nodes() == nodes_) {
        generation_ = order.generation;  // nothing to move: adopt the generation, keep running
        return {Report("already at " + std::to_string(nodes_) + " nodes")};
      }
      return BeginResize(order);
    case SupervisorState::kCheckpointing:
    case SupervisorState::kResizing:
    case SupervisorState::kRelaunching:
      queued_ = order;
      return {Report("order generation " + std::to_string(order.generation) +
                     " queued behind the resize in progress")};
    default:
      return {Report("order ignored: job is " + std::string(ToString(state_)))};
  }
}

std::vector<Action> ResizeStateMachine::BeginResize(const ResizeOrder& order) {
  in_flight_ = order;
  state_ = SupervisorState::kCheckpointing;
  // Stop the step first: a step must never run on nodes the job is about to release.
  return {{ActionKind::kCheckpointStep, nodes_, generation_, false, {}},
          Report("to " + std::to_string(order.nodes()) + " nodes as generation " +
                 std::to_string(order.generation))};
}

std::vector<Action> ResizeStateMachine::OnStepExited(int exit_code, bool finished) {
  if (state_ == SupervisorState::kCheckpointing) {
    if (exit_code != 0) {
      return RestartOrFail("step exited " + std::to_string(exit_code) +
                           " while checkpointing for a resize to " +
                           std::to_string(in_flight_->nodes()) + " nodes");
    }
    state_ = SupervisorState::kResizing;
    const ResizeOrder& order = *in_flight_;
    ActionKind kind =
        order.nodes() < nodes_ ? ActionKind::kShrinkAllocation : ActionKind::kGrowAllocation;
    return {{kind, order.nodes(), order.generation, false, {}}, Report("")};
  }
  if (state_ != SupervisorState::kRunning) return {};
  if (exit_code != 0) return RestartOrFail("step exited " + std::to_string(exit_code));
  if (finished) {
    state_ = SupervisorState::kFinished;
    return {Report("training complete")};
  }
  // Exit 0 without finishing: the step checkpointed on its own (e.g. SIGTERM from Slurm).
  return Fail("step stopped before the end without a resize order");
}

std::vector<Action> ResizeStateMachine::OnStepStopped(int exit_code) {
  if (exit_code != 0) {
    return Fail("the job is being stopped and the step exited " + std::to_string(exit_code) +
                " (before its checkpoint, or it could not write one)");
  }
  state_ = SupervisorState::kFinished;
  in_flight_.reset();
  queued_.reset();
  return {Report("stopped: the step checkpointed")};
}

std::vector<Action> ResizeStateMachine::OnAllocationResized(bool ok, int nodes) {
  if (state_ != SupervisorState::kResizing) return {};
  const ResizeOrder order = *in_flight_;
  if (!ok || nodes < 1) {
    // The allocation is unchanged (or unknown): relaunch on what we have from the checkpoint.
    in_flight_.reset();
    state_ = SupervisorState::kRelaunching;
    return OnRelaunchAt(nodes_, false, "resize to " + std::to_string(order.nodes()) + " failed");
  }
  bool grew = nodes > nodes_;
  if (nodes < nodes_) shrunk_before_ = true;
  nodes_ = nodes;
  generation_ = order.generation;
  in_flight_.reset();
  state_ = SupervisorState::kRelaunching;
  return OnRelaunchAt(nodes_, grew && shrunk_before_, "");
}

std::vector<Action> ResizeStateMachine::OnRelaunchAt(int nodes, bool credential_grace,
                                                     const std::string& note) {
  std::vector<Action> actions;
  actions.push_back({ActionKind::kLaunchStep, nodes, generation_, credential_grace, {}});
  state_ = SupervisorState::kRunning;
  actions.push_back(Report(note));
  if (queued_) {
    ResizeOrder next = *queued_;
    queued_.reset();
    auto more = OnOrder(next);
    actions.insert(actions.end(), more.begin(), more.end());
  }
  return actions;
}

void ResizeStateMachine::AdoptLostNodes(int nodes) {
  if (nodes < 1 || nodes >= nodes_) return;
  nodes_ = nodes;
  shrunk_before_ = true;  // the node may come back later and be re-added
}

std::vector<Action> ResizeStateMachine::RestartOrFail(const std::string& why) {
  if (restarts_ >= max_restarts_) {
    return Fail(why + " (" + std::to_string(restarts_) + " of " +
                std::to_string(max_restarts_) + " restarts used)");
  }
  ++restarts_;
  // The allocation never changed (a resize's step stops before Slurm is asked), so the step
  // goes back onto the same nodes and resumes from the newest valid checkpoint.
  in_flight_.reset();
  queued_.reset();
  state_ = SupervisorState::kRelaunching;
  return OnRelaunchAt(nodes_, false, why + ": restart " + std::to_string(restarts_) + " of " +
                                         std::to_string(max_restarts_) +
                                         " from the newest checkpoint");
}

std::vector<Action> ResizeStateMachine::Fail(const std::string& why) {
  state_ = SupervisorState::kFailed;
  in_flight_.reset();
  queued_.reset();
  return {Report(why + "; the last good checkpoint is kept")};
}

}  // namespace elastic::agent
