// Tests for buffers as EST state (agent/est/est_buffers.h): each EST's forward passes update its
// own copy of a BatchNorm's running statistics, the model shows the EST whose turn it is, and the
// checkpoint bytes round-trip.
#include "agent/est/est_buffers.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace elastic::agent {
namespace {

struct Norm : torch::nn::Module {
  Norm() : bn(register_module("bn", torch::nn::BatchNorm1d(3))) {}
  torch::nn::BatchNorm1d bn;
};

TEST(EstBuffers, EachEstUpdatesOnlyItsOwnCopy) {
  Norm model;
  model.train();
  std::vector<EstContext> ests(2);
  AdoptModelBuffers(model, ests);
  ASSERT_EQ(ests[0].buffers.size(), 3u);  // running_mean, running_var, num_batches_tracked
  {
    EstBufferScope scope(model, ests[0]);
    model.bn->forward(torch::ones({4, 3}) * 10);
  }
  // EST 1 starts from the initial statistics, not from EST 0's update.
  {
    EstBufferScope scope(model, ests[1]);
    EXPECT_TRUE(torch::equal(model.bn->running_mean, torch::zeros({3})));
    model.bn->forward(torch::ones({4, 3}) * -10);
  }
  EXPECT_TRUE(torch::allclose(ests[0].buffers[0], torch::full({3}, 1.0)));   // 0.1 * 10
  EXPECT_TRUE(torch::allclose(ests[1].buffers[0], torch::full({3}, -1.0)));
  EXPECT_EQ(ests[0].buffers[2].item<std::int64_t>(), 1);
  LoadEstBuffers(model, ests[0]);
  EXPECT_TRUE(torch::equal(model.bn->running_mean, ests[0].buffers[0]));
}

TEST(EstBuffers, CheckpointBytesRoundTrip) {
  Norm model;
  std::vector<EstContext> ests(1);
  AdoptModelBuffers(model, ests);
  ests[0].buffers[0].fill_(0.25);
  ests[0].buffers[2].fill_(7);
  const std::string bytes = BuffersToBytes(ests[0].buffers);
  EXPECT_EQ(bytes.size(), 3 * 4 + 3 * 4 + 8u);
  std::vector<torch::Tensor> back;
  ASSERT_TRUE(BuffersFromBytes(bytes, model.buffers(), back));
  for (std::size_t i = 0; i < back.size(); ++i) EXPECT_TRUE(torch::equal(back[i], ests[0].buffers[i]));
  EXPECT_FALSE(BuffersFromBytes(bytes.substr(1), model.buffers(), back));
}

TEST(EstBuffers, AModelWithoutBuffersIsANoOp) {
  torch::nn::Linear model(2, 2);
  std::vector<EstContext> ests(1);
  AdoptModelBuffers(*model, ests);
  EXPECT_TRUE(ests[0].buffers.empty());
  EstBufferScope scope(*model, ests[0]);
  EXPECT_EQ(BuffersToBytes(ests[0].buffers), "");
}

}  // namespace
}  // namespace elastic::agent
