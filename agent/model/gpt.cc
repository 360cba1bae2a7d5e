// Gpt: embedding, pre-LN transformer blocks with causal attention, output head.
#include "agent/model/gpt.h"

#include <torch/torch.h>

#include <cmath>

namespace elastic::agent {
namespace {

constexpr std::int64_t kHeadWidth = kGptModelWidth / kGptHeads;
constexpr std::int64_t kMlpWidth = 4 * kGptModelWidth;
// GPT-2's initialisation: N(0, 0.02) weights, zero biases, LayerNorm at (1, 0).
constexpr double kInitStd = 0.02;

torch::nn::Linear MakeLinear(std::int64_t in, std::int64_t out) {
  torch::nn::Linear linear(in, out);
  torch::NoGradGuard no_grad;
  linear->weight.normal_(0.0, kInitStd);
  linear->bias.zero_();
  return linear;
}

torch::nn::Embedding MakeEmbedding(std::int64_t count, std::int64_t width) {
  torch::nn::Embedding embedding(count, width);
  torch::NoGradGuard no_grad;
  embedding->weight.normal_(0.0, kInitStd);
  return embedding;
}

torch::nn::LayerNorm MakeLayerNorm() {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({kGptModelWidth}));
}

}  // namespace

// Registration order is the parameter order of the params_sha256 contract: do not reorder.
GptBlock::GptBlock()
    : ln1_(register_module("ln1", MakeLayerNorm())),
      query_(register_module("query", MakeLinear(kGptModelWidth, kGptModelWidth))),
      key_(register_module("key", MakeLinear(kGptModelWidth, kGptModelWidth))),
      value_(register_module("value", MakeLinear(kGptModelWidth, kGptModelWidth))),
      proj_(register_module("proj", MakeLinear(kGptModelWidth, kGptModelWidth))),
      ln2_(register_module("ln2", MakeLayerNorm())),
      fc1_(register_module("fc1", MakeLinear(kGptModelWidth, kMlpWidth))),
      fc2_(register_module("fc2", MakeLinear(kMlpWidth, kGptModelWidth))) {}

torch::Tensor GptBlock::forward(const torch::Tensor& x, const TensorParallelShard& shard) {
  torch::Tensor h = x + Attention(ln1_->forward(x), shard);
  return h + Mlp(ln2_->forward(h), shard);
}

// Causal self-attention over this shard's heads (Megatron §3: the heads are independent, so a
// rank computes H/t of them from its rows of Q, K, V and its columns of the output projection).
torch::Tensor GptBlock::Attention(const torch::Tensor& h, const TensorParallelShard& shard) {
  const std::int64_t n = h.size(0);
  const std::int64_t t = h.size(1);
  const std::int64_t heads = kGptHeads / shard.size;
  const torch::Tensor in = CopyToTensorParallel(h, shard);
  auto split_heads = [&](const torch::nn::Linear& linear) {
    torch::Tensor y = torch::nn::functional::linear(in, ChunkOf(linear->weight, 0, shard),
                                                    ChunkOf(linear->bias, 0, shard));
    return y.view({n, t, heads, kHeadWidth}).transpose(1, 2);  // [n, heads, T, head width]
  };
  const torch::Tensor q = split_heads(query_);
  const torch::Tensor k = split_heads(key_);
  const torch::Tensor v = split_heads(value_);
  const torch::Tensor future =
      torch::ones({t, t}, torch::TensorOptions().dtype(torch::kBool).device(q.device())).triu(1);
  torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(kHeadWidth));
  scores = torch::softmax(scores.masked_fill(future, -INFINITY), -1);
  const torch::Tensor mixed =
      torch::matmul(scores, v).transpose(1, 2).contiguous().view({n, t, heads * kHeadWidth});
  const torch::Tensor partial =
      torch::nn::functional::linear(mixed, ChunkOf(proj_->weight, 1, shard));
  return ReduceFromTensorParallel(partial, shard) + proj_->bias;
}

// fc1 column-parallel, GELU on this shard's hidden units, fc2 row-parallel (Megatron §3, Fig. 3a).
torch::Tensor GptBlock::Mlp(const torch::Tensor& h, const TensorParallelShard& shard) {
  const torch::Tensor in = CopyToTensorParallel(h, shard);
  const torch::Tensor hidden = torch::gelu(torch::nn::functional::linear(
      in, ChunkOf(fc1_->weight, 0, shard), ChunkOf(fc1_->bias, 0, shard)));
  const torch::Tensor partial =
      torch::nn::functional::linear(hidden, ChunkOf(fc2_->weight, 1, shard));
  return ReduceFromTensorParallel(partial, shard) + fc2_->bias;
}

std::vector<SplitParameter> GptBlock::SplitParameters() const {
  return {{query_->weight, 0}, {query_->bias, 0}, {key_->weight, 0}, {key_->bias, 0},
          {value_->weight, 0}, {value_->bias, 0}, {proj_->weight, 1}, {fc1_->weight, 0},
          {fc1_->bias, 0},     {fc2_->weight, 1}};
}

// Registration order is the parameter order of the params_sha256 contract: do not reorder.
Gpt::Gpt()
    : token_embedding_(
          register_module("token_embedding", MakeEmbedding(kGptVocabulary, kGptModelWidth))),
      position_embedding_(
          register_module("position_embedding", MakeEmbedding(kGptContext, kGptModelWidth))),
      final_norm_(nullptr),
      head_(nullptr) {
  for (std::int64_t i = 0; i < kGptLayers; ++i) {
    layers_.push_back(register_module("h" + std::to_string(i), std::make_shared<GptBlock>()));
  }
  final_norm_ = register_module("final_norm", MakeLayerNorm());
  head_ = register_module("head", MakeLinear(kGptModelWidth, kGptVocabulary));
}

torch::Tensor Gpt::forward(const torch::Tensor& input) {
  torch::Tensor x = input;
  for (std::int64_t block = 0; block < BlockCount(); ++block) x = ForwardBlock(block, x);
  return x;
}

torch::Tensor Gpt::ForwardBlock(std::int64_t index, const torch::Tensor& input) {
  if (index == 0) {
    TORCH_CHECK(input.dim() == 2 && input.size(1) <= kGptContext,
                "gpt: expected token ids [batch, positions <= ", kGptContext, "], got ",
                input.sizes());
    const torch::Tensor positions = position_embedding_->weight.narrow(0, 0, input.size(1));
    return token_embedding_->forward(input) + positions;
  }
  if (index <= kGptLayers) {
    return layers_[static_cast<std::size_t>(index - 1)]->forward(input, shard_);
  }
  TORCH_CHECK(index == kGptLayers + 1, "gpt has ", BlockCount(), " blocks, not block ", index);
  // [n, T, vocabulary] -> [n, vocabulary, T]: cross_entropy's layout for per-position targets.
  return head_->forward(final_norm_->forward(input)).transpose(1, 2);
}

std::vector<torch::Tensor> Gpt::BlockParameters(std::int64_t index) const {
  if (index == 0) return {token_embedding_->weight, position_embedding_->weight};
  if (index <= kGptLayers) return layers_[static_cast<std::size_t>(index - 1)]->parameters();
  TORCH_CHECK(index == kGptLayers + 1, "gpt has ", BlockCount(), " blocks, not block ", index);
  return {final_norm_->weight, final_norm_->bias, head_->weight, head_->bias};
}

std::optional<std::string> Gpt::TensorParallelUnsupported(const TensorParallelShard& shard) const {
  if (shard.size < 1 || kGptHeads % shard.size != 0) {
    return "tp on " + std::to_string(shard.size) + " ranks: gpt has " + std::to_string(kGptHeads) +
           " attention heads, split evenly across the ranks: expected a number of ranks that "
           "divides " +
           std::to_string(kGptHeads);
  }
  return std::nullopt;
}

std::vector<SplitParameter> Gpt::TensorParallelParameters() const {
  if (shard_.size == 1) return {};
  std::vector<SplitParameter> split;
  for (const auto& layer : layers_) {
    for (SplitParameter& p : layer->SplitParameters()) split.push_back(std::move(p));
  }
  return split;
}

}  // namespace elastic::agent
