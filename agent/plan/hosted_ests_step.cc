// HostedEstsStep: the hosted ESTs one after another, each gradient folded or captured.
#include "agent/plan/hosted_ests_step.h"

#include <torch/torch.h>

#include "agent/est/device.h"
#include "agent/est/est_buffers.h"
#include "agent/model/model.h"
#include "agent/plan/grad_checkpoint.h"

namespace elastic::agent {

HostedEstsStep::HostedEstsStep(Model& model, GradientStash& stash, torch::Device device,
                               EstRange hosted, bool fold_locally, bool recompute)
    : model_(model),
      stash_(stash),
      device_(device),
      hosted_(hosted),
      fold_locally_(fold_locally),
      recompute_(recompute) {}

std::vector<float> HostedEstsStep::Run(const BatchSource& batch, std::vector<EstContext>& ests) {
  std::vector<float> hosted_losses;  // float32 losses, so the float is exact
  for (EstContext& est : ests) {
    const MiniBatch mini = batch(est.id);
    if (fold_locally_) {
      stash_.BeginAccumulation(est.id, /*first=*/est.id == hosted_.begin);
    } else {
      // set_to_none: every EST's backward writes fresh gradients, none accumulates onto another's.
      model_.zero_grad(/*set_to_none=*/true);
    }
    hosted_losses.push_back(static_cast<float>(RunEst(est, mini)));
    if (fold_locally_) {
      stash_.EndAccumulation(est.id);
    } else {
      stash_.Capture(est.id);
    }
  }
  return hosted_losses;
}

double HostedEstsStep::RunEst(EstContext& est, const MiniBatch& batch) {
  EstRngScope rng(est);
  EstBufferScope buffers(model_, est);
  SeedDeviceGeneratorFromEst(device_);
  const torch::Tensor inputs = batch.inputs.to(device_);
  torch::Tensor targets = batch.targets.to(device_);
  torch::Tensor logits =
      recompute_ ? ForwardWithRecomputation(model_, inputs) : model_.forward(inputs);
  if (device_.is_cuda() && logits.dim() == 3) {
    // Per-position targets ([n, classes, T]) as one [n T, classes] batch: LibTorch's CUDA
    // nll_loss2d has no deterministic kernel, the plain one does; the same mean.
    logits = logits.transpose(1, 2).reshape({-1, logits.size(1)});
    targets = targets.reshape({-1});
  }
  torch::Tensor loss = torch::nn::functional::cross_entropy(logits, targets);
  loss.backward();
  return loss.item<double>();
}

}  // namespace elastic::agent
