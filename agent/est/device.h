// Where a rank trains (train.device): the torch::Device, the CUDA settings its results depend on,
// the per-EST CUDA random streams and the wait that ends a timed step. Includes LibTorch.
//
// The host keeps everything the EST runtime's determinism rests on (the data loaders, the EST
// contexts, the gradient exchange in EST order), so a cuda run moves only tensors: the model, its
// mini-batches and, except under zero-offload, the optimizer state (agent/plan/offload_mirror.h).
#pragma once

#include <torch/types.h>

#include "common/env.h"
#include "agent/config/job_config.h"

namespace elastic::agent {

// CPU for "cpu". For "cuda": this rank's GPU, its node-local rank (OMPI_COMM_WORLD_LOCAL_RANK,
// else SLURM_LOCALID, else 0) modulo the GPUs LibTorch sees, so srun/mpirun ranks on one node
// spread over its GPUs; first sets cuBLAS' fixed workspace (CUBLAS_WORKSPACE_CONFIG, unless the
// user set one), without which LibTorch refuses cuBLAS under deterministic algorithms. Throws
// ConfigError when no CUDA device is usable here.
torch::Device TrainingDevice(const JobConfig& config, const EnvLookup& env = ProcessEnv());

// Call inside an EstRngScope, before the EST's forward. On CUDA: reseeds the device's default
// generator with one draw from the EST's own CPU stream, so its dropout masks follow from the
// EST and its history alone, whatever W is, and the checkpointed CPU state carries them. On the
// CPU: nothing (draws nothing, so CPU runs keep their bits).
void SeedDeviceGeneratorFromEst(torch::Device device);

// Waits until the device finished the work queued so far; on the CPU, nothing. A step's time
// ends here, so that on a GPU it is not the time to enqueue the step.
void SynchronizeDevice(torch::Device device);

}  // namespace elastic::agent
