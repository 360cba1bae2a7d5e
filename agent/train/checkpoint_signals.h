// On-demand checkpoint requests by signal: SIGUSR1 asks for a checkpoint and training goes on,
// SIGTERM for a checkpoint and a clean exit (what Slurm sends before it kills a job step), and so
// does SIGUSR2: the supervisor's resize request, the one stop signal srun forwards to its tasks
// (srun answers a SIGTERM of its own by SIGKILLing them). The
// handlers only set lock-free atomics; the training loop polls them between steps, so a step
// always finishes before its checkpoint is taken. Torch-free.
// Thread-safety: the handlers and TakeCheckpointRequest may run on any thread.
#pragma once

namespace elastic::agent {

class Communicator;

enum class CheckpointRequest {
  kNone,
  kCheckpoint,         // SIGUSR1: checkpoint now, keep training
  kCheckpointAndStop,  // SIGTERM or SIGUSR2: checkpoint now, then stop
};

// Installs the SIGUSR1, SIGTERM and SIGUSR2 handlers (sigaction, SA_RESTART) for the whole process.
// Throws std::system_error if sigaction fails.
void InstallCheckpointSignalHandlers();

// The strongest request since the previous call (SIGTERM wins over SIGUSR1), clearing it.
// Returns kNone when the handlers were never installed.
CheckpointRequest TakeCheckpointRequest();

}  // namespace elastic::agent

namespace elastic::agent {

// Collective, once per step on every rank: the strongest of the ranks' `local` requests, so a
// signal delivered to one rank only still stops or checkpoints every rank at the same step.
// Throws PeerLostError when a rank is gone.
CheckpointRequest AgreeOnCheckpointRequest(Communicator& world, CheckpointRequest local);

}  // namespace elastic::agent
