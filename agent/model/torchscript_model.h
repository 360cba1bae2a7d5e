// A user's own model: a TorchScript module saved from Python (torch.jit.script(m).save(PATH) or
// torch.jit.trace), trained as a Model (model.h) with every EST guarantee. Includes LibTorch.
//
// The module's parameters and buffers are registered, under their Python state_dict names, in a
// torch::nn::Module tree that shares their tensors, so the optimizer, the gradient stash, the
// checkpoint and the digest see exactly the module's own tensors (and Module::load writes into
// them). train()/eval() switch the module too. Randomness (dropout) draws from LibTorch's default
// generator, which the trainer points at the running EST's stream (EstRngScope).
//
// Output contract: one input batch in, logits out: [N, C] (classification, targets [N]) or
// [N, T, V] (a token model, targets [N, T]); forward returns the latter as [N, V, T], the layout
// of Model::forward. Anything else throws TrainingError naming the shape.
// Blocks: an nn.Sequential's children (gradient checkpointing recomputes them), otherwise the
// whole module as one block, which gc refuses. pp, tp and burst are refused: they would place
// parts of the module on other ranks.
#pragma once

#include <torch/script.h>

#include <optional>
#include <string>
#include <vector>

#include "agent/model/model.h"

namespace elastic::agent {

class TorchScriptModel : public Model {
 public:
  // Loads `path` onto the CPU. Throws ConfigError naming model.torchscript and the file: not a
  // TorchScript archive (e.g. a torch.save'd state_dict), or a module without parameters.
  explicit TorchScriptModel(const std::string& path);

  torch::Tensor forward(const torch::Tensor& input) override;
  std::int64_t BlockCount() const override;
  torch::Tensor ForwardBlock(std::int64_t index, const torch::Tensor& input) override;
  std::vector<torch::Tensor> BlockParameters(std::int64_t index) const override;
  std::optional<std::string> CannotSplitAcrossRanks() const override;
  std::optional<std::string> CannotRecompute() const override;
  std::optional<std::string> TensorParallelUnsupported(
      const TensorParallelShard& shard) const override;
  void train(bool on = true) override;

  const std::string& path() const { return path_; }
  // The module with its current parameters and buffers (they are the same tensors).
  torch::jit::Module& module() { return module_; }

 private:
  // The module's output for `input`, checked against the output contract and laid out as
  // Model::forward's.
  torch::Tensor Logits(const torch::IValue& output, const torch::Tensor& input) const;

  std::string path_;
  torch::jit::Module module_;
  std::vector<torch::jit::Module> blocks_;  // an nn.Sequential's children; else empty
};

}  // namespace elastic::agent
