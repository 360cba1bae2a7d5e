// NcclCommunicator on one GPU (ncclCommInitRank with one rank): the all-gather into fixed blocks
// (separate and in place) and the all-to-all move the bits unchanged; skips without a GPU.
#include "agent/comm/nccl_communicator.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "tests/common/cuda_skip.h"
#include "tests/unit/comm/fold_test_data.h"

namespace elastic::agent {
namespace {

// A device buffer holding `values`, freed with the test.
class DeviceFloats {
 public:
  explicit DeviceFloats(const std::vector<float>& values) : size_(values.size()) {
    EXPECT_EQ(cudaMalloc(&data_, size_ * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data_, values.data(), size_ * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  ~DeviceFloats() { cudaFree(data_); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  float* get() { return data_; }
  std::vector<float> Read() const {
    std::vector<float> values(size_);
    EXPECT_EQ(cudaMemcpy(values.data(), data_, size_ * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return values;
  }

 private:
  float* data_ = nullptr;
  std::size_t size_;
};

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class NcclCommunicatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ELASTIC_SKIP_WITHOUT_GPU();
    world_ = MakeSingleProcessCommunicator();
    std::string why_not;
    nccl_ = MakeNcclCommunicator(*world_, 0, &why_not);
    ASSERT_NE(nccl_, nullptr) << why_not;
  }

  std::unique_ptr<Communicator> world_;
  std::unique_ptr<NcclCommunicator> nccl_;
};

TEST_F(NcclCommunicatorTest, OneRankWorld) {
  EXPECT_EQ(nccl_->rank(), 0);
  EXPECT_EQ(nccl_->size(), 1);
  EXPECT_EQ(nccl_->device(), 0);
}

TEST_F(NcclCommunicatorTest, AllGatherCopiesTheBlockBitForBit) {
  const std::vector<float> mine = test::FoldTestSlots(3, 1001, 7);  // three EST slots
  DeviceFloats send(mine);
  DeviceFloats recv(std::vector<float>(mine.size(), 42.0f));
  const std::vector<std::int64_t> counts = {static_cast<std::int64_t>(mine.size())};
  nccl_->AllGatherV(send.get(), recv.get(), counts);
  nccl_->Synchronize();
  EXPECT_TRUE(SameBits(recv.Read(), mine));
}

TEST_F(NcclCommunicatorTest, AllGatherInPlaceLeavesTheOwnBlock) {
  const std::vector<float> slots = test::FoldTestSlots(2, 513, 9);
  DeviceFloats buffer(slots);
  const std::vector<std::int64_t> counts = {static_cast<std::int64_t>(slots.size())};
  nccl_->AllGatherV(buffer.get(), buffer.get(), counts);
  nccl_->Synchronize();
  EXPECT_TRUE(SameBits(buffer.Read(), slots));
}

TEST_F(NcclCommunicatorTest, AllToAllSendsTheMessageToItself) {
  const std::vector<float> message = test::FoldTestSlots(1, 777, 3);
  DeviceFloats send(message);
  DeviceFloats recv(std::vector<float>(message.size(), -1.0f));
  const std::vector<std::int64_t> counts = {static_cast<std::int64_t>(message.size())};
  nccl_->AllToAllV(send.get(), counts, recv.get(), counts);
  nccl_->Synchronize();
  EXPECT_TRUE(SameBits(recv.Read(), message));
}

TEST_F(NcclCommunicatorTest, CountsForTheWrongNumberOfRanksAreRejected) {
  DeviceFloats buffer(std::vector<float>(4, 1.0f));
  const std::vector<std::int64_t> two_ranks = {2, 2};
  EXPECT_THROW(nccl_->AllGatherV(buffer.get(), buffer.get(), two_ranks), std::invalid_argument);
}

}  // namespace
}  // namespace elastic::agent
