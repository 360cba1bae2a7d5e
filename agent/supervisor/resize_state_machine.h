// The supervisor's resize protocol (design.md §3) as a pure state machine: events in, actions
// out, no I/O. `elastic-agent run` feeds it what happened (an order from elasticd, the training
// step's exit, the allocation's new size) and carries out the actions it returns (signal the
// step, scontrol/salloc, srun, report). One generation per node set; orders carry generation
// numbers and are idempotent. Not thread-safe: one owner (the supervisor's loop).
//
//   kStarting --launched--> kRunning --order(g>cur, k!=n)--> kCheckpointing
//   kCheckpointing --step exited 0--> kResizing --resized to k--> kRelaunching
//   kRelaunching --launched--> kRunning(g)            kRunning --step exited 0, done--> kFinished
//   a step that fails (nonzero exit, e.g. a rank killed) is relaunched on the same nodes from the
//   newest checkpoint, up to max_restarts times in the job's life; an order it was carrying out
//   is dropped (elasticd sees it failed and may order again)
//   any other failure, or one past the budget --> kFailed (the last good checkpoint stays
//   usable; elasticd is told why)
//   any state --step exited after the job was asked to stop--> kFinished (exit 0) or kFailed
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/resize_order.h"

namespace elastic::agent {

// elasticd's order as it comes off the wire; the machine reads its generation and node count.
using daemon::ResizeOrder;

enum class SupervisorState { kStarting, kRunning, kCheckpointing, kResizing, kRelaunching,
                             kFinished, kFailed };

enum class ActionKind {
  kLaunchStep,        // srun -N nodes elastic-agent train (after a credential grace if needed)
  kCheckpointStep,    // SIGTERM the step: finish the mini-batch, checkpoint, exit 0
  kShrinkAllocation,  // scontrol update JobId=J NumNodes=nodes
  kGrowAllocation,    // salloc --dependency=expand:J, merge, scancel, NumNodes=ALL
  kReport,            // tell elasticd: state, generation, nodes, detail
};

struct Action {
  ActionKind kind;
  int nodes = 0;
  std::uint64_t generation = 0;
  bool credential_grace = false;  // wait >= 1 s first: a re-added node revokes at 1 s resolution
  std::string detail;
  bool operator==(const Action&) const = default;
};

class ResizeStateMachine {
 public:
  // The job starts with `nodes` nodes as generation 1; a failed step is relaunched up to
  // `max_restarts` times.
  explicit ResizeStateMachine(int nodes, int max_restarts = 0);

  std::vector<Action> Start();
  // An order from elasticd. Stale or duplicate generations are acknowledged and ignored; an
  // order arriving mid-resize is kept and carried out after it (the newest one wins).
  std::vector<Action> OnOrder(const ResizeOrder& order);
  // The training step ended. `finished`: it reached train.steps (exit 0 with no pending order).
  std::vector<Action> OnStepExited(int exit_code, bool finished);
  // The step ended after Slurm asked the job to stop (scancel, a requeue or preemption, the time
  // limit; the supervisor forwarded the stop to the step): nothing is relaunched or resized. Exit
  // 0 (it checkpointed) ends in kFinished, anything else in kFailed; either way the job is over
  // for this run of its batch script, and a requeued job resumes from its newest checkpoint.
  std::vector<Action> OnStepStopped(int exit_code);
  // The allocation now has `nodes` nodes (0 or a wrong count: the resize failed).
  std::vector<Action> OnAllocationResized(bool ok, int nodes);

  SupervisorState state() const { return state_; }
  std::uint64_t generation() const { return generation_; }
  int nodes() const { return nodes_; }
  int restarts() const { return restarts_; }
  // Slurm took nodes away outside any order (a node failed under --no-kill): the job now has
  // `nodes`. Call before OnStepExited so that the relaunch uses what is left.
  void AdoptLostNodes(int nodes);

 private:
  std::vector<Action> BeginResize(const ResizeOrder& order);
  std::vector<Action> Fail(const std::string& why);
  // A failed step: relaunch on the current nodes if the budget allows, else fail.
  std::vector<Action> RestartOrFail(const std::string& why);
  // Relaunches the step on `nodes` and then starts a queued order, if any.
  std::vector<Action> OnRelaunchAt(int nodes, bool credential_grace, const std::string& note);
  Action Report(const std::string& detail) const;

  SupervisorState state_ = SupervisorState::kStarting;
  std::uint64_t generation_ = 1;
  int nodes_;
  int max_restarts_;
  int restarts_ = 0;
  bool shrunk_before_ = false;  // a grow may re-add a node this job released earlier
  std::optional<ResizeOrder> in_flight_;
  std::optional<ResizeOrder> queued_;
};

const char* ToString(SupervisorState state);

}  // namespace elastic::agent
