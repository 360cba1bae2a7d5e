// Built-in performance descriptions of the agent's registry models, used when a job names no
// fitted model (train.perf_model): the parameter count and block structure of the model, and
// rough single-thread CPU timings and bandwidths. Rubick §4's default parameters stand in for a
// fit, so these predictions only rank plans coarsely; `elastic-plan fit` output replaces them.
// Pure and thread-safe; torch-free (the supervisor does not link LibTorch), so the parameter
// counts are written down here and a torch-side test checks them against the real models.
#pragma once

#include <optional>
#include <string_view>

#include "perf/rubick/perf_json.h"

namespace elastic::agent {

// The built-in model for `model_name` (global_batch 1: the caller sets the job's); nullopt for
// a model this table does not describe.
std::optional<perf::FittedModel> BuiltInPerfModel(std::string_view model_name);

// What limits the agent's plans on a registry model; zeros for a model this table does not know.
struct ModelShape {
  int blocks = 0;    // Model::BlockCount: pp runs at most one stage per block
  int tp_heads = 0;  // attention heads tp splits evenly (W must divide them); 0 = no tp
};
ModelShape BuiltInModelShape(std::string_view model_name);

// The starting point of Rubick §4.3's online fit for a model with neither a fitted.json nor a
// built-in description (gpt, a user's TorchScript module): its size from the agent's own count
// (`params` fp32 parameters in `blocks` blocks), Rubick's default parameters, the built-in
// models' assumed bandwidths and a placeholder forward time (1 ms per sample) that the first
// measured generation calibrates (online_refit.h). No activation size: memory is then checked for
// model states and EST slots only. REQUIRES: params > 0, blocks >= 1.
perf::FittedModel BootstrapPerfModel(std::string_view model_name, double params, int blocks);

}  // namespace elastic::agent
