// Memory estimator per execution plan: rules out plans whose model states and activations do not
// fit device memory (Rubick §5.2 relies on the framework's estimate; this is ours, documented in
// docs/perf-model.md). Pure and thread-safe.
#pragma once

#include <string>

#include "perf/rubick/perf_model.h"
#include "perf/rubick/plan.h"

namespace elastic::perf {

struct MemoryEstimate {
  double states = 0;       // per GPU: weights, gradients and optimizer states kept on the device
  double activations = 0;  // per GPU: activations stored for the backward pass (peak)
  double gpu_total = 0;    // per GPU: states + activations
  double host_total = 0;   // whole job: what ZeRO-Offload keeps in host memory (0 otherwise)
};

// REQUIRES: CheckPlan(model, resources, plan) is empty for some resources (degrees >= 1).
MemoryEstimate EstimateMemory(const ModelDesc& model, const ExecutionPlan& plan);

// Why the plan does not fit the resources' device (or, under ZeRO-Offload, host) memory; empty
// when it fits or the limit is unknown (0).
std::string CheckMemory(const ModelDesc& model, const Resources& resources,
                        const ExecutionPlan& plan);

}  // namespace elastic::perf
