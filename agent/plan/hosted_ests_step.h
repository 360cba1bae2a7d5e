// HostedEstsStep: the plain EST loop as a PlanStep, run by dp, ga, gc, zero-dp, zero-offload and
// tp (and pp/burst on one rank). Includes LibTorch. Not thread-safe; one per rank.
//
// Each hosted EST in id order runs forward and backward on its mini-batch under its own
// generator stream (EstRngScope; on CUDA the device generator is reseeded from it first). Its
// gradient then either folds into .grad as it appears (fold_locally: W = 1, d0, tp; the same
// float operations in the same order as folding per-EST copies) or is captured into the stash's
// slot for the exchange (GradientStash). gc recomputes block activations in the backward pass
// (grad_checkpoint.h), bitwise equal to the plain forward.
#pragma once

#include <torch/types.h>

#include <vector>

#include "agent/common/est_range.h"
#include "agent/plan/plan_step.h"

namespace elastic::agent {

class HostedEstsStep : public PlanStep {
 public:
  // `recompute`: the plan's gc. REQUIRES: `hosted` are the ids of the contexts Run receives;
  // the model and the stash outlive this object.
  HostedEstsStep(Model& model, GradientStash& stash, torch::Device device, EstRange hosted,
                 bool fold_locally, bool recompute);

  std::vector<float> Run(const BatchSource& batch, std::vector<EstContext>& ests) override;

 private:
  // One EST's forward and backward; returns its loss (the mean cross-entropy of its batch).
  double RunEst(EstContext& est, const MiniBatch& batch);

  Model& model_;
  GradientStash& stash_;
  torch::Device device_;
  EstRange hosted_;
  bool fold_locally_;
  bool recompute_;
};

}  // namespace elastic::agent
