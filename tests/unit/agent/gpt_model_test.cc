// The gpt model and its data: corpus windows and targets, causal attention, blocks equal to the
// whole forward (what GC and PP rely on), and Megatron tensor parallelism computed by two
// threads standing in for two ranks: the split forward and gradients match the unsplit model,
// and the replicated parameters' gradients are the same bits on both "ranks" (tensor_parallel.h
// relies on that to keep the replicas identical).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "agent/common/errors.h"
#include "agent/config/job_config.h"
#include "agent/data/char_dataset.h"
#include "agent/data/text_corpus.h"
#include "agent/model/gpt.h"
#include "agent/model/registry.h"
#include "agent/plan/pipeline.h"

namespace elastic::agent {
namespace {

std::string Corpus(std::size_t bytes) {
  std::string text;
  for (std::size_t i = 0; i < bytes; ++i) text.push_back(static_cast<char>('a' + (i * 7) % 26));
  return text;
}

std::shared_ptr<Model> SeededGpt(std::uint64_t seed) {
  torch::manual_seed(seed);
  return MakeModel("gpt");
}

torch::Tensor Tokens(std::int64_t n, std::int64_t t, std::uint64_t seed) {
  torch::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  return torch::randint(kGptVocabulary, {n, t}, generator, torch::kInt64);
}

TEST(TextCorpusDataset, WindowsAndNextByteTargets) {
  const std::string corpus = Corpus(100);
  Dataset data = TextCorpusDataset(corpus);
  ASSERT_EQ(data.size(), TextWindowCount(100));
  EXPECT_EQ(data.images.sizes(), (std::vector<std::int64_t>{data.size(), kTextWindow}));
  EXPECT_EQ(data.labels.sizes(), data.images.sizes());
  EXPECT_EQ(data.images.dtype(), torch::kInt64);
  for (std::int64_t row = 0; row < data.size(); ++row) {
    for (std::int64_t pos = 0; pos < kTextWindow; ++pos) {
      const auto at = static_cast<std::size_t>(row * kTextWindowStride + pos);
      ASSERT_EQ(data.images[row][pos].item<std::int64_t>(), corpus[at]);
      ASSERT_EQ(data.labels[row][pos].item<std::int64_t>(), corpus[at + 1]);
    }
  }
  EXPECT_THROW(TextCorpusDataset(Corpus(kTextWindow)), DataError);
  // Bytes above 127 are tokens 128..255, not negative.
  const Dataset high = TextCorpusDataset(std::string(kTextWindow + 1, '\xe9'));
  EXPECT_EQ(high.images[0][0].item<std::int64_t>(), 0xe9);
}

TEST(TextCorpusDataset, InstalledFortunesMin) {
  if (MissingCorpusFile(std::string(kDefaultCorpusPath))) {
    GTEST_SKIP() << kDefaultCorpusPath << " missing (install fortunes-min)";
  }
  Dataset data = LoadTextCorpus(std::string(kDefaultCorpusPath));
  EXPECT_EQ(data.size(), 12296);
  EXPECT_LT(data.images.max().item<std::int64_t>(), kTextVocabulary);
}

TEST(Gpt, LogitsPerPositionSeeOnlyEarlierTokens) {
  auto model = SeededGpt(1);
  torch::NoGradGuard no_grad;
  const torch::Tensor tokens = Tokens(3, kGptContext, 5);
  const torch::Tensor logits = model->forward(tokens);
  EXPECT_EQ(logits.sizes(), (std::vector<std::int64_t>{3, kGptVocabulary, kGptContext}));
  torch::Tensor changed = tokens.clone();
  changed.index_put_({torch::indexing::Slice(), 10}, (tokens.select(1, 10) + 1) % kGptVocabulary);
  const torch::Tensor other = model->forward(changed);
  // Positions before 10 are the same bits; position 10 on sees the change.
  EXPECT_TRUE(torch::equal(logits.narrow(2, 0, 10), other.narrow(2, 0, 10)));
  EXPECT_FALSE(torch::equal(logits.narrow(2, 10, 1), other.narrow(2, 10, 1)));
  // Shorter sequences are fine; longer ones than the context are refused.
  EXPECT_EQ(model->forward(tokens.narrow(1, 0, 7)).size(2), 7);
  EXPECT_THROW(model->forward(Tokens(1, kGptContext + 1, 5)), c10::Error);
}

TEST(Gpt, BlocksChainToTheForwardAndPartitionTheParameters) {
  auto model = SeededGpt(1);
  torch::NoGradGuard no_grad;
  const torch::Tensor tokens = Tokens(2, kGptContext, 6);
  torch::Tensor x = tokens;
  for (std::int64_t b = 0; b < model->BlockCount(); ++b) x = model->ForwardBlock(b, x);
  EXPECT_TRUE(torch::equal(x, model->forward(tokens)));
  EXPECT_EQ(model->BlockCount(), kGptLayers + 2);
  // Pipeline stages need every parameter in exactly one block, blocks in parameter order.
  for (int stages = 1; stages <= model->BlockCount(); ++stages) {
    EXPECT_NO_THROW(StageShards(*model, stages)) << stages;
  }
  std::int64_t params = 0;
  for (const torch::Tensor& p : model->parameters()) params += p.numel();
  EXPECT_EQ(params, 135168);
}

TEST(Gpt, TensorParallelNeedsAHeadCountTheRanksDivide) {
  auto gpt = SeededGpt(1);
  EXPECT_FALSE(gpt->TensorParallelUnsupported(TensorParallelShard{0, 2, nullptr}));
  EXPECT_FALSE(gpt->TensorParallelUnsupported(TensorParallelShard{0, 4, nullptr}));
  auto three = gpt->TensorParallelUnsupported(TensorParallelShard{0, 3, nullptr});
  ASSERT_TRUE(three);
  EXPECT_NE(three->find("gpt has 4 attention heads"), std::string::npos) << *three;
  auto cnn = MakeModel("fmnist_cnn")->TensorParallelUnsupported(TensorParallelShard{});
  ASSERT_TRUE(cnn);
  EXPECT_EQ(*cnn, "tp needs a transformer model (model.name = \"gpt\")");
  EXPECT_TRUE(gpt->TensorParallelParameters().empty());
}

// An all-reduce between threads: each "rank" deposits its partial; once all have, each sums
// them in rank order; the next round starts when every rank has read.
class ThreadAllReduce {
 public:
  explicit ThreadAllReduce(int ranks) : parts_(static_cast<std::size_t>(ranks)) {}

  torch::Tensor operator()(int rank, const torch::Tensor& partial) {
    std::unique_lock<std::mutex> lock(mutex_);
    const std::int64_t round = round_;
    parts_[static_cast<std::size_t>(rank)] = partial.detach().clone();
    if (++deposited_ == static_cast<int>(parts_.size())) changed_.notify_all();
    changed_.wait(lock, [&] {
      return deposited_ == static_cast<int>(parts_.size()) || round_ != round;
    });
    torch::Tensor sum = parts_[0].clone();
    for (std::size_t r = 1; r < parts_.size(); ++r) sum.add_(parts_[r]);
    if (++read_ == static_cast<int>(parts_.size())) {
      deposited_ = 0;
      read_ = 0;
      ++round_;
      changed_.notify_all();
    } else {
      changed_.wait(lock, [&] { return round_ != round; });
    }
    return sum;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<torch::Tensor> parts_;
  int deposited_ = 0;
  int read_ = 0;
  std::int64_t round_ = 0;
};

struct RankResult {
  torch::Tensor logits;
  std::vector<torch::Tensor> grads;  // named_parameters() order
  std::vector<SplitParameter> split;
};

// One forward/backward of `model` on `tokens` with a cross-entropy loss against `targets`.
RankResult Train(Model& model, const torch::Tensor& tokens, const torch::Tensor& targets) {
  model.zero_grad(/*set_to_none=*/true);
  RankResult result;
  result.logits = model.forward(tokens);
  torch::nn::functional::cross_entropy(result.logits, targets).backward();
  for (const torch::Tensor& p : model.parameters()) result.grads.push_back(p.grad().clone());
  result.split = model.TensorParallelParameters();
  return result;
}

TEST(Gpt, TwoTensorParallelRanksComputeTheUnsplitModel) {
  at::set_num_threads(1);  // as training runs: one intra-op thread per rank
  const torch::Tensor tokens = Tokens(4, kGptContext, 7);
  const torch::Tensor targets = Tokens(4, kGptContext, 8);
  auto whole = SeededGpt(3);
  const RankResult reference = Train(*whole, tokens, targets);

  constexpr int kRanks = 2;
  ThreadAllReduce all_reduce(kRanks);
  std::vector<std::shared_ptr<Model>> models;
  for (int r = 0; r < kRanks; ++r) models.push_back(SeededGpt(3));  // the same initial weights
  std::vector<RankResult> results(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    models[r]->UseTensorParallel(TensorParallelShard{
        r, kRanks, [&all_reduce, r](const torch::Tensor& t) { return all_reduce(r, t); }});
    threads.emplace_back([&, r] { results[r] = Train(*models[r], tokens, targets); });
  }
  for (std::thread& thread : threads) thread.join();

  for (int r = 0; r < kRanks; ++r) {
    EXPECT_TRUE(torch::equal(results[r].logits, results[0].logits)) << r;
    EXPECT_TRUE(torch::allclose(results[r].logits, reference.logits, 1e-4, 1e-5)) << r;
  }
  // Every gradient but the split chunks other ranks own: same bits on both ranks, close to the
  // unsplit model's. Each rank's own chunks: close to the unsplit model's.
  const std::vector<torch::Tensor> params = models[0]->parameters();
  ASSERT_EQ(results[0].split.size(), 10u * kGptLayers);
  for (std::size_t i = 0; i < params.size(); ++i) {
    const SplitParameter* split = nullptr;
    for (const SplitParameter& s : results[0].split) {
      if (s.param.is_same(params[i])) split = &s;
    }
    for (int r = 0; r < kRanks; ++r) {
      torch::Tensor mine = results[r].grads[i];
      torch::Tensor want = reference.grads[i];
      if (split != nullptr) {
        const std::int64_t chunk = params[i].size(split->dim) / kRanks;
        mine = mine.narrow(split->dim, r * chunk, chunk);
        want = want.narrow(split->dim, r * chunk, chunk);
      } else {
        EXPECT_TRUE(torch::equal(results[r].grads[i], results[0].grads[i])) << i << " rank " << r;
      }
      EXPECT_TRUE(torch::allclose(mine, want, 1e-3, 1e-6))
          << i << " rank " << r << " max diff " << (mine - want).abs().max().item<float>();
    }
  }
}

}  // namespace
}  // namespace elastic::agent
