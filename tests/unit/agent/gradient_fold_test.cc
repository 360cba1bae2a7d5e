// GradientStash's host fold (clone, add_ in EST order, div_(E) on the CPU) gives the bits of
// SlotFoldOnHost, the reference the GPU kernel is held to (comm_slot_fold_gpu_test): if LibTorch
// or either fold changed its arithmetic, CUDA jobs' device fold would leave the host path's bits.
// With NCCL and a CUDA LibTorch on a GPU, the stash's device slots (one-rank NCCL all-gather, the
// fold kernel) give the host stash's bits; that test skips elsewhere.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "agent/comm/slot_fold.h"
#include "agent/est/gradient_stash.h"
#include "tests/unit/comm/fold_test_data.h"
#ifdef ELASTIC_HAVE_NCCL
#include <torch/cuda.h>

#include "agent/comm/nccl_communicator.h"
#endif

namespace elastic::agent {
namespace {

// Two parameters (a matrix and a vector) whose per-EST gradients are the test slots.
struct FoldCase {
  explicit FoldCase(torch::Device device = torch::kCPU)
      : params{torch::zeros({37, 11}, device), torch::zeros({501}, device)} {}
  std::vector<torch::Tensor> params;
  std::int64_t numel = 37 * 11 + 501;
};

// Captures every EST's gradient (`slots`) into a stash over `c`'s parameters, lets `exchange`
// run between capture and fold, and returns the folded gradients' bits.
template <typename Exchange>
std::vector<float> StashFold(FoldCase& c, GradientStash& stash, const std::vector<float>& slots,
                             std::int64_t ests, Exchange exchange) {
  for (std::int64_t e = 0; e < ests; ++e) {
    std::int64_t offset = e * c.numel;
    for (torch::Tensor& param : c.params) {
      param.mutable_grad() = torch::from_blob(const_cast<float*>(slots.data()) + offset,
                                              param.sizes(), torch::kFloat32)
                                 .clone()
                                 .to(param.device());
      offset += param.numel();
    }
    stash.Capture(e);
  }
  exchange();
  stash.ReduceMeanIntoGradients();
  std::vector<float> folded;
  for (const torch::Tensor& param : c.params) {
    const torch::Tensor grad = param.grad().to(torch::kCPU).contiguous();
    folded.insert(folded.end(), grad.data_ptr<float>(), grad.data_ptr<float>() + grad.numel());
  }
  return folded;
}

std::vector<float> HostStashFold(FoldCase& c, const std::vector<float>& slots, std::int64_t ests) {
  GradientStash stash(c.params, {"w", "b"}, ests);
  return StashFold(c, stash, slots, ests, [] {});
}

TEST(GradientFoldTest, HostStashFoldHasTheSlotFoldReferenceBits) {
  for (const std::int64_t ests : {1, 2, 3, 5, 8}) {
    FoldCase c;
    const std::vector<float> slots =
        test::FoldTestSlots(ests, c.numel, 100u + static_cast<unsigned>(ests));
    const std::vector<float> stash = HostStashFold(c, slots, ests);
    std::vector<float> reference(static_cast<std::size_t>(c.numel));
    SlotFoldOnHost(slots.data(), ests, c.numel, static_cast<float>(ests), reference.data());
    ASSERT_EQ(stash.size(), reference.size());
    EXPECT_EQ(std::memcmp(stash.data(), reference.data(), stash.size() * sizeof(float)), 0)
        << "E=" << ests;
  }
}

// The data can tell folds apart: the reverse association differs somewhere, and an all -0
// element keeps its sign, so the equality above is not vacuous.
TEST(GradientFoldTest, TheTestDataSeesAssociationAndSignedZeros) {
  const std::int64_t ests = 8;
  const std::int64_t numel = 4000;
  const std::vector<float> slots = test::FoldTestSlots(ests, numel, 1u);
  std::vector<float> forward(static_cast<std::size_t>(numel));
  SlotFoldOnHost(slots.data(), ests, numel, 8.0f, forward.data());
  std::int64_t differing = 0;
  for (std::int64_t i = 0; i < numel; ++i) {
    float reverse = slots[static_cast<std::size_t>((ests - 1) * numel + i)];
    for (std::int64_t k = ests - 2; k >= 0; --k) {
      reverse += slots[static_cast<std::size_t>(k * numel + i)];
    }
    reverse /= 8.0f;
    if (std::memcmp(&reverse, &forward[static_cast<std::size_t>(i)], sizeof(float)) != 0) {
      ++differing;
    }
  }
  EXPECT_GT(differing, 0);
  EXPECT_TRUE(forward[0] == 0.0f && std::signbit(forward[0]));  // element 0 is all -0
}

#ifdef ELASTIC_HAVE_NCCL
TEST(GradientFoldTest, DeviceSlotsOverNcclGiveTheHostStashBits) {
  if (!torch::cuda::is_available()) {
    GTEST_SKIP() << "LibTorch sees no CUDA device (a CPU LibTorch, or no GPU here)";
  }
  const std::unique_ptr<Communicator> world = MakeSingleProcessCommunicator();
  std::string why_not;
  const std::unique_ptr<NcclCommunicator> nccl = MakeNcclCommunicator(*world, 0, &why_not);
  ASSERT_NE(nccl, nullptr) << why_not;
  for (const std::int64_t ests : {3, 8}) {
    FoldCase host;
    const std::vector<float> slots =
        test::FoldTestSlots(ests, host.numel, 300u + static_cast<unsigned>(ests));
    const std::vector<float> expected = HostStashFold(host, slots, ests);
    FoldCase gpu(torch::Device(torch::kCUDA, 0));
    GradientStash stash(gpu.params, {"w", "b"}, ests);
    stash.UseDeviceSlots(*nccl, {ests});
    const std::vector<float> got = StashFold(gpu, stash, slots, ests, [&] {
      stash.ExchangeSlots(*world, EstRange{0, ests});
    });
    ASSERT_EQ(got.size(), expected.size());
    EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)), 0)
        << "E=" << ests;
  }
}
#endif

}  // namespace
}  // namespace elastic::agent
