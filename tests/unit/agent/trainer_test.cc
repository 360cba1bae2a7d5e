// Tests for the trainer's consistency machinery on a small synthetic dataset: same seed gives the
// same bits, a different seed different bits, EST RNG streams, the EST-ordered gradient mean, and
// the params_sha256 definition.
#include "agent/train/trainer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <map>

#include "agent/comm/communicator.h"
#include "agent/common/errors.h"
#include "agent/common/sha256.h"
#include "agent/model/registry.h"
#include "agent/plan/grad_checkpoint.h"
#include "agent/est/est_context.h"
#include "agent/est/gradient_stash.h"
#include "agent/train/params_digest.h"
#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

// 256 random images whose label is a fixed function of the pixels, so there is signal to learn.
Dataset SyntheticData() {
  torch::Generator generator = at::make_generator<at::CPUGeneratorImpl>(99);
  torch::Tensor images = torch::randn({256, 1, 28, 28}, generator);
  torch::Tensor labels = images.sum({1, 2, 3}).gt(0).to(torch::kInt64) * 3;
  return Dataset{images, labels, nullptr};
}

JobConfig SmallConfig(std::int64_t seed) {
  JobConfig config;
  config.train.ests = 4;
  config.train.global_batch = 32;
  config.train.seed = seed;
  config.train.steps = 10;
  return config;
}

std::string TrainedSha(const JobConfig& config, int steps) {
  Trainer trainer(config, SyntheticData());
  for (int i = 0; i < steps; ++i) trainer.RunStep();
  EXPECT_EQ(trainer.completed_steps(), steps);
  return trainer.ParamsSha256();
}

TEST(Trainer, SameSeedSameBitsDifferentSeedDifferentBits) {
  std::string first = TrainedSha(SmallConfig(1), 5);
  EXPECT_EQ(first.size(), 64u);
  EXPECT_EQ(TrainedSha(SmallConfig(1), 5), first);
  EXPECT_NE(TrainedSha(SmallConfig(2), 5), first);
  EXPECT_NE(TrainedSha(SmallConfig(1), 4), first);
}

TEST(Trainer, LoaderThreadsAndPrefetchDepthChangeNoBit) {
  for (Augment augment : {Augment::kNone, Augment::kFlip}) {
    JobConfig config = SmallConfig(1);
    config.data.augment = augment;
    config.data.workers = 1;
    config.data.prefetch = 1;
    const std::string reference = TrainedSha(config, 5);
    config.data.workers = 3;
    EXPECT_EQ(TrainedSha(config, 5), reference) << ToString(augment) << " workers 1 vs 3";
    config.data.prefetch = 4;
    EXPECT_EQ(TrainedSha(config, 5), reference) << ToString(augment) << " prefetch 1 vs 4";
    config.data.workers = 0;
    EXPECT_EQ(TrainedSha(config, 5), reference) << ToString(augment) << " no loader threads";
  }
  // The comparison can fail: augmentation changes the batches, hence the bits.
  JobConfig flip = SmallConfig(1);
  flip.data.augment = Augment::kFlip;
  EXPECT_NE(TrainedSha(flip, 5), TrainedSha(SmallConfig(1), 5));
}

TEST(Trainer, LossFallsOnLearnableData) {
  JobConfig config = SmallConfig(1);
  Trainer trainer(config, SyntheticData());
  double first = trainer.RunStep();
  double last = first;
  for (int i = 0; i < 15; ++i) last = trainer.RunStep();
  EXPECT_LT(last, first);
}

TEST(Trainer, RejectsWhatItCannotRun) {
  JobConfig config = SmallConfig(1);
  config.train.plan = Plan::kTp;
  config.train.determinism = Determinism::kStatistical;
  EXPECT_THROW(Trainer(config, SyntheticData()), ConfigError);
  config = SmallConfig(1);
  config.train.global_batch = 512;
  EXPECT_THROW(Trainer(config, SyntheticData()), ConfigError);
}

// Every bitwise-safe plan on one rank: GC's recomputation and the sharded update's own SGD step
// (one shard holding everything, on the training thread or on c host threads) give the DP bits.
// (W > 1: tests/integration/plan_consistency_test.cc.)
TEST(Trainer, EveryBitwiseSafePlanGivesTheDpBits) {
  JobConfig config = SmallConfig(1);
  config.train.plan = Plan::kDp;
  const std::string dp = TrainedSha(config, 5);
  for (Plan plan : {Plan::kGa, Plan::kGc, Plan::kZeroDp, Plan::kZeroOffload, Plan::kPp}) {
    config.train.plan = plan;
    EXPECT_EQ(TrainedSha(config, 5), dp) << ToString(plan);
  }
  config.train.cpu_threads = 3;
  EXPECT_EQ(TrainedSha(config, 5), dp) << "zero-offload, 3 host threads";
  config.train.momentum = 0;  // no momentum buffers: the update's other branch
  const std::string plain = TrainedSha(config, 3);
  config.train.plan = Plan::kDp;
  EXPECT_EQ(TrainedSha(config, 3), plain);
}

// Finds a node of the autograd graph below `root` whose name contains `name`.
bool GraphHasNode(const std::shared_ptr<torch::autograd::Node>& root, const std::string& name) {
  std::vector<std::shared_ptr<torch::autograd::Node>> todo{root};
  while (!todo.empty()) {
    std::shared_ptr<torch::autograd::Node> node = todo.back();
    todo.pop_back();
    if (!node) continue;
    if (node->name().find(name) != std::string::npos) return true;
    for (const torch::autograd::Edge& edge : node->next_edges()) todo.push_back(edge.function);
  }
  return false;
}

TEST(GradientCheckpointing, RecomputesBlocksAndGivesThePlainGradientsAndStream) {
  torch::manual_seed(3);
  std::shared_ptr<Model> model = MakeModel("fmnist_cnn");
  model->train();  // dropout on: the recomputation must replay its mask
  const torch::Tensor input = torch::randn({6, 1, 28, 28});
  const torch::Tensor targets = torch::tensor({0, 1, 2, 3, 4, 5}, torch::kInt64);
  auto run = [&](bool gc) {
    model->zero_grad(/*set_to_none=*/true);
    torch::manual_seed(11);
    torch::Tensor logits = gc ? ForwardWithRecomputation(*model, input) : model->forward(input);
    torch::Tensor loss = torch::nn::functional::cross_entropy(logits, targets);
    EXPECT_EQ(GraphHasNode(loss.grad_fn(), "RecomputedBlock"), gc);
    loss.backward();
    std::vector<torch::Tensor> grads;
    for (const torch::Tensor& param : model->parameters()) grads.push_back(param.grad().clone());
    grads.push_back(torch::rand({4}));  // where the default stream stands afterwards
    return grads;
  };
  const std::vector<torch::Tensor> plain = run(false);
  const std::vector<torch::Tensor> recomputed = run(true);
  ASSERT_EQ(plain.size(), recomputed.size());
  for (std::size_t i = 0; i < plain.size(); ++i) {
    EXPECT_TRUE(torch::equal(plain[i], recomputed[i])) << "tensor " << i;
  }
}

TEST(Trainer, DivergenceStopsWithATrainingError) {
  JobConfig config = SmallConfig(1);
  config.train.lr = 1e5;
  Trainer trainer(config, SyntheticData());
  EXPECT_THROW(
      {
        for (int i = 0; i < 50; ++i) trainer.RunStep();
      },
      TrainingError);
}

TEST(EstContext, EachEstOwnsItsStream) {
  EstContext a = MakeEstContext(1, 0);
  EstContext b = MakeEstContext(1, 1);
  EXPECT_NE(EstSeed(1, 0), EstSeed(1, 1));
  EXPECT_NE(EstSeed(1, 0), EstSeed(2, 0));

  torch::manual_seed(123);
  torch::Tensor default_before = torch::rand({4});
  torch::manual_seed(123);

  torch::Tensor a1, b1, a2;
  {
    EstRngScope scope(a);
    a1 = torch::rand({4});
  }
  {
    EstRngScope scope(b);
    b1 = torch::rand({4});
  }
  {
    EstRngScope scope(a);
    a2 = torch::rand({4});
  }
  // The default stream was not advanced by the ESTs' draws.
  EXPECT_TRUE(torch::equal(torch::rand({4}), default_before));

  // A's two turns continue one stream, unaffected by B's turn in between.
  torch::Generator reference = at::make_generator<at::CPUGeneratorImpl>(EstSeed(1, 0));
  EXPECT_TRUE(torch::equal(a1, torch::rand({4}, reference)));
  EXPECT_TRUE(torch::equal(a2, torch::rand({4}, reference)));
  EXPECT_FALSE(torch::equal(a1, b1));
}

// Dropout masks of EST k for its first two turns, with ESTs placed as `hosted` (one vector per
// rank, in the order that rank runs them) and each rank's process stream seeded differently.
std::map<std::int64_t, std::vector<torch::Tensor>> DropoutMasks(
    const std::vector<std::vector<std::int64_t>>& hosted) {
  std::map<std::int64_t, std::vector<torch::Tensor>> masks;
  for (std::size_t rank = 0; rank < hosted.size(); ++rank) {
    torch::manual_seed(1000 + static_cast<std::uint64_t>(rank));  // a process's own stream
    std::vector<EstContext> ests;
    for (std::int64_t id : hosted[rank]) ests.push_back(MakeEstContext(7, id));
    for (int turn = 0; turn < 2; ++turn) {
      for (EstContext& est : ests) {
        EstRngScope scope(est);
        masks[est.id].push_back(torch::dropout(torch::ones({64}), 0.5, /*train=*/true));
      }
    }
  }
  return masks;
}

TEST(EstContext, DropoutMasksBelongToTheEstNotToItsPlacement) {
  auto one_rank = DropoutMasks({{0, 1, 2, 3}});
  auto two_ranks = DropoutMasks({{0, 1}, {2, 3}});
  auto three_ranks = DropoutMasks({{0}, {1, 2}, {3}});
  for (std::int64_t id = 0; id < 4; ++id) {
    for (int turn = 0; turn < 2; ++turn) {
      EXPECT_TRUE(torch::equal(one_rank[id][turn], two_ranks[id][turn])) << id << "/" << turn;
      EXPECT_TRUE(torch::equal(one_rank[id][turn], three_ranks[id][turn])) << id << "/" << turn;
    }
    EXPECT_FALSE(torch::equal(one_rank[id][0], one_rank[id][1]))
        << "EST " << id << " repeated its mask";
  }
  for (std::int64_t a = 0; a < 4; ++a) {
    for (std::int64_t b = a + 1; b < 4; ++b) {
      EXPECT_FALSE(torch::equal(one_rank[a][0], one_rank[b][0])) << "ESTs " << a << ", " << b;
    }
  }
}

TEST(GradientStash, MeanOverEstsInIdOrder) {
  torch::Tensor w = torch::zeros({2}, torch::requires_grad());
  torch::Tensor b = torch::zeros({1}, torch::requires_grad());
  GradientStash stash({w, b}, {"w", "b"}, 3);
  const std::vector<std::vector<float>> grads = {{1, 2, 3}, {4, 5, 6}, {7, 8, 0.5}};
  for (std::int64_t est = 0; est < 3; ++est) {
    w.mutable_grad() = torch::tensor({grads[est][0], grads[est][1]});
    b.mutable_grad() = torch::tensor({grads[est][2]});
    stash.Capture(est);
  }
  stash.ReduceMeanIntoGradients();
  EXPECT_TRUE(torch::equal(w.grad(), torch::tensor({4.0f, 5.0f})));
  EXPECT_TRUE(torch::equal(b.grad(), torch::tensor({((3.0f + 6.0f) + 0.5f) / 3.0f})));
  // A reduction without every EST's gradient is a bug, not a silent partial mean.
  EXPECT_THROW(stash.ReduceMeanIntoGradients(), std::runtime_error);
}

// Rank `rank` of a pretend world whose other ranks contributed `others_before` and
// `others_after` (floats, in rank order around this rank's contribution).
class FakeWorld final : public Communicator {
 public:
  FakeWorld(int rank, int size, std::vector<float> before, std::vector<float> after)
      : rank_(rank), size_(size), before_(std::move(before)), after_(std::move(after)) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  using Communicator::AllGather;
  using Communicator::AllToAll;
  void AllGather(std::span<const float> mine, std::vector<std::int64_t>& counts,
                 std::vector<float>& all) override {
    all = before_;
    all.insert(all.end(), mine.begin(), mine.end());
    all.insert(all.end(), after_.begin(), after_.end());
    counts.assign(static_cast<std::size_t>(size_), 0);
  }
  std::vector<std::uint8_t> AllGatherBytes(std::span<const std::uint8_t> mine,
                                           std::vector<std::int64_t>& counts) override {
    counts.assign(1, static_cast<std::int64_t>(mine.size()));
    return {mine.begin(), mine.end()};
  }
  void Send(std::span<const std::uint8_t>, int) override {}
  std::vector<std::uint8_t> Receive(int) override { return {}; }
  bool MessageWaiting(int) override { return true; }
  void AllToAll(std::span<const float> send, std::span<const std::int64_t>,
                std::vector<std::int64_t>& recv_counts, std::vector<float>& received) override {
    recv_counts.assign(1, static_cast<std::int64_t>(send.size()));
    received.assign(send.begin(), send.end());
  }
  std::vector<std::uint8_t> Broadcast(std::vector<std::uint8_t> bytes, int) override {
    return bytes;
  }
  void Barrier() override {}
  [[noreturn]] void Abort(int status) override { std::exit(status); }

 private:
  int rank_, size_;
  std::vector<float> before_, after_;
};

TEST(GradientStash, ExchangeGivesEveryRankEveryEstsGradientInIdOrder) {
  torch::Tensor w = torch::zeros({2}, torch::requires_grad());
  GradientStash stash({w}, {"w"}, 3);
  // This rank (1 of 2) hosts ESTs [1, 3); rank 0 hosted EST 0 with gradient {1, 2}.
  FakeWorld world(1, 2, {1, 2}, {});
  w.mutable_grad() = torch::tensor({3.0f, 4.0f});
  stash.Capture(1);
  w.mutable_grad() = torch::tensor({5.0f, 0.25f});
  stash.Capture(2);
  stash.ExchangeSlots(world, {1, 3});
  stash.ReduceMeanIntoGradients();
  EXPECT_TRUE(torch::equal(w.grad(), torch::tensor({9.0f / 3.0f, ((2.0f + 4.0f) + 0.25f) / 3.0f})));
  // A world that delivers too few floats (a rank with another model) is refused.
  FakeWorld short_world(1, 2, {}, {});
  stash.Capture(1);
  stash.Capture(2);
  EXPECT_THROW(stash.ExchangeSlots(short_world, {1, 3}), std::runtime_error);
}

TEST(GradientStash, RankOrderFoldSumsPartialsPerRank) {
  torch::Tensor w = torch::zeros({1}, torch::requires_grad());
  GradientStash stash({w}, {"w"}, 4);
  // Rank 1 of 2 hosts [2, 4); rank 0's partial sum is 1e8 (so association shows in the bits).
  FakeWorld world(1, 2, {1e8f}, {});
  w.mutable_grad() = torch::tensor({1.0f});
  stash.Capture(2);
  w.mutable_grad() = torch::tensor({-1e8f});
  stash.Capture(3);
  stash.ReduceMeanRankOrder(world, {2, 4});
  EXPECT_TRUE(torch::equal(w.grad(), torch::tensor({(1e8f + (1.0f + -1e8f)) / 4.0f})));
}

// The running fold (W = 1: autograd adds each EST's gradient onto .grad) and the slot fold
// (W > 1) give the same bits, including the sign of zero and parameters an EST did not use.
TEST(GradientStash, RunningFoldEqualsSlotFoldBitForBit) {
  const std::vector<std::vector<float>> grads = {{1e8f, -0.0f}, {1.0f, -0.0f}, {-1e8f, -0.0f}};
  auto make = [] { return torch::zeros({2}, torch::requires_grad()); };
  torch::Tensor a = make(), unused_a = make();
  GradientStash slots({a, unused_a}, {"a", "u"}, 3);
  torch::Tensor b = make(), unused_b = make();
  GradientStash fold({b, unused_b}, {"a", "u"}, 3);
  for (std::int64_t est = 0; est < 3; ++est) {
    a.mutable_grad() = torch::tensor(grads[est]);
    // Only EST 0 reaches the second parameter, with a -0: the others count as +0.
    unused_a.mutable_grad() = est == 0 ? torch::tensor({-0.0f, 2.0f}) : torch::Tensor();
    slots.Capture(est);
    fold.BeginAccumulation(est, est == 0);
    if (est == 0) {
      b.mutable_grad() = torch::tensor(grads[est]);
      unused_b.mutable_grad() = torch::tensor({-0.0f, 2.0f});
    } else {
      b.mutable_grad().add_(torch::tensor(grads[est]));  // what AccumulateGrad does
    }
    fold.EndAccumulation(est);
  }
  slots.ReduceMeanIntoGradients();
  fold.ReduceAccumulatedMean();
  auto bits = [](const torch::Tensor& t) { return t.contiguous().view(torch::kInt32); };
  EXPECT_TRUE(torch::equal(bits(a.grad()), bits(b.grad())));
  EXPECT_TRUE(torch::equal(bits(unused_a.grad()), bits(unused_b.grad())));
  // -0 + (+0) is +0: an EST that did not reach a parameter still adds its zero.
  EXPECT_FALSE(std::signbit(unused_b.grad()[0].item<float>()));
  // ESTs out of order cannot fold.
  fold.BeginAccumulation(0, true);
  fold.EndAccumulation(0);
  EXPECT_THROW(fold.BeginAccumulation(2, false), std::runtime_error);
  EXPECT_THROW(fold.ReduceAccumulatedMean(), std::runtime_error);
}

TEST(GradientStash, BucketMapListsParametersWithOffsets) {
  torch::Tensor w = torch::zeros({2, 3});
  torch::Tensor b = torch::zeros({3});
  GradientStash stash({w, b}, {"fc.weight", "fc.bias"}, 2);
  EXPECT_EQ(stash.BucketMap(), "fc.weight 0 6\nfc.bias 6 3\n");
}

struct TwoParams : torch::nn::Module {
  TwoParams() {
    first = register_parameter("first", torch::tensor({1.0f, 2.0f, 3.0f, 4.0f}).view({2, 2}));
    second = register_parameter("second", torch::tensor({-0.5f}));
    register_buffer("ignored", torch::tensor({9.0f}));  // hashed after the parameters
  }
  torch::Tensor first, second;
};

// Parameters in order as float32, then the buffers' bytes (params_digest.h); the replica digest
// is the parameters alone, which is also all a model without buffers hashes.
TEST(ParamsSha256, HashesFloatBytesInParameterOrderThenBuffers) {
  TwoParams module;
  const float values[] = {1.0f, 2.0f, 3.0f, 4.0f, -0.5f};
  const float buffer[] = {9.0f};
  Sha256 expected;
  expected.Update(values, sizeof values);
  expected.Update(buffer, sizeof buffer);
  EXPECT_EQ(ParamsSha256(module), expected.HexDigest());
  Sha256 parameters;
  parameters.Update(values, sizeof values);
  const std::string parameters_digest = parameters.HexDigest();
  EXPECT_EQ(ParametersOnlySha256(module), parameters_digest);
  // Non-contiguous storage hashes the same values the same way.
  module.first.set_data(torch::tensor({1.0f, 3.0f, 2.0f, 4.0f}).view({2, 2}).t());
  Sha256 again;
  again.Update(values, sizeof values);
  again.Update(buffer, sizeof buffer);
  const std::string again_digest = again.HexDigest();
  EXPECT_EQ(ParamsSha256(module), again_digest);
  // Another buffer value, another digest; the replica digest does not see it.
  module.named_buffers()["ignored"].fill_(8.0f);
  EXPECT_NE(ParamsSha256(module), again_digest);
  EXPECT_EQ(ParametersOnlySha256(module), parameters_digest);
}

}  // namespace
}  // namespace elastic::agent
