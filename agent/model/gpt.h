// gpt: a small GPT-style decoder-only transformer over bytes (Radford et al. 2019's pre-LN
// layout), trained on the fortunes-min corpus (agent/data/text_corpus.h). Sized for CPU CI.
#pragma once

#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <memory>

#include "agent/model/model.h"

namespace elastic::agent {

// Sizes. d_model / heads = 16 per head; the MLP is 4 x d_model wide (the GPT convention).
inline constexpr std::int64_t kGptModelWidth = 64;
inline constexpr std::int64_t kGptHeads = 4;
inline constexpr std::int64_t kGptLayers = 2;
inline constexpr std::int64_t kGptContext = 32;  // = kTextWindow: positions the model embeds
inline constexpr std::int64_t kGptVocabulary = 256;

// One pre-LN transformer block: x + Attention(LN1(x)), then x + MLP(LN2(x)), with causal
// multi-head self-attention (separate Q, K, V projections, so a head's rows are one chunk of
// each) and a GELU MLP. No dropout: nothing random runs in the forward pass.
class GptBlock : public torch::nn::Module {
 public:
  GptBlock();
  // `x` [n, T, d_model] -> [n, T, d_model], computing `shard`'s heads and MLP columns only.
  torch::Tensor forward(const torch::Tensor& x, const TensorParallelShard& shard);
  // Megatron's split (tensor_parallel_layers.h): Q/K/V and fc1 by rows (column-parallel),
  // proj and fc2 by columns (row-parallel); the LayerNorms and the row-parallel biases stay whole.
  std::vector<SplitParameter> SplitParameters() const;

 private:
  torch::Tensor Attention(const torch::Tensor& h, const TensorParallelShard& shard);
  torch::Tensor Mlp(const torch::Tensor& h, const TensorParallelShard& shard);

  torch::nn::LayerNorm ln1_;
  torch::nn::Linear query_, key_, value_, proj_;
  torch::nn::LayerNorm ln2_;
  torch::nn::Linear fc1_, fc2_;
};

// Input: int64 token ids [n, T] with T <= kGptContext. Output: logits [n, vocabulary, T] for the
// next token at every position (position t sees tokens 0..t only). Blocks: the token + position
// embedding | one per transformer layer | final LayerNorm and the (untied) output head. The head
// is not tied to the token embedding so that every parameter belongs to one block (pipeline
// stages own runs of whole blocks).
class Gpt : public Model {
 public:
  Gpt();
  torch::Tensor forward(const torch::Tensor& input) override;
  std::int64_t BlockCount() const override { return kGptLayers + 2; }
  torch::Tensor ForwardBlock(std::int64_t index, const torch::Tensor& input) override;
  std::vector<torch::Tensor> BlockParameters(std::int64_t index) const override;

  std::optional<std::string> TensorParallelUnsupported(
      const TensorParallelShard& shard) const override;
  void UseTensorParallel(TensorParallelShard shard) override { shard_ = std::move(shard); }
  std::vector<SplitParameter> TensorParallelParameters() const override;

 private:
  torch::nn::Embedding token_embedding_;
  torch::nn::Embedding position_embedding_;
  std::vector<std::shared_ptr<GptBlock>> layers_;
  torch::nn::LayerNorm final_norm_;
  torch::nn::Linear head_;
  TensorParallelShard shard_;  // size 1 unless the tp plan split the layers
};

}  // namespace elastic::agent
