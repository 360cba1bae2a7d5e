// The MPI communicator across real Open MPI ranks (run by ctest under mpirun -np 3).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "agent/comm/communicator.h"

namespace elastic::agent {
namespace {

Communicator& World() {
  static std::unique_ptr<Communicator> world = MakeWorldCommunicator(nullptr, nullptr);
  return *world;
}

TEST(MpiCommunicator, WorldMatchesTheLauncher) {
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  ASSERT_NE(size, nullptr) << "run me under mpirun";
  EXPECT_EQ(World().size(), std::atoi(size));
  EXPECT_EQ(World().rank(), std::atoi(std::getenv("OMPI_COMM_WORLD_RANK")));
  EXPECT_GE(World().size(), 2);
}

TEST(MpiCommunicator, AllGatherConcatenatesUnevenPartsInRankOrder) {
  int rank = World().rank();
  std::vector<float> mine(static_cast<std::size_t>(rank + 1));
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = static_cast<float>(rank * 10 + i);
  std::vector<std::int64_t> counts;
  std::vector<float> all = World().AllGather(mine, counts);
  std::vector<float> expected;
  std::vector<std::int64_t> expected_counts;
  for (int r = 0; r < World().size(); ++r) {
    expected_counts.push_back(r + 1);
    for (int i = 0; i <= r; ++i) expected.push_back(static_cast<float>(r * 10 + i));
  }
  EXPECT_EQ(counts, expected_counts);
  EXPECT_EQ(all, expected);
}

TEST(MpiCommunicator, AllGatherAcceptsAnEmptyContribution) {
  std::vector<float> mine;
  if (World().rank() == 1) mine = {1.5f, -2.5f};
  std::vector<std::int64_t> counts;
  EXPECT_EQ(World().AllGather(mine, counts), (std::vector<float>{1.5f, -2.5f}));
}

TEST(MpiCommunicator, AllGatherBytesConcatenatesInRankOrder) {
  const int rank = World().rank();
  std::vector<std::uint8_t> mine(static_cast<std::size_t>(rank), static_cast<std::uint8_t>(rank));
  std::vector<std::int64_t> counts;
  std::vector<std::uint8_t> all = World().AllGatherBytes(mine, counts);
  std::vector<std::uint8_t> expected;
  for (int r = 0; r < World().size(); ++r) {
    EXPECT_EQ(counts[static_cast<std::size_t>(r)], r);
    expected.insert(expected.end(), static_cast<std::size_t>(r), static_cast<std::uint8_t>(r));
  }
  EXPECT_EQ(all, expected);
}

TEST(MpiCommunicator, BroadcastTextDeliversRankZerosText) {
  const std::string mine = "rank " + std::to_string(World().rank());
  EXPECT_EQ(BroadcastText(World(), mine), "rank 0");
}

TEST(MpiCommunicator, BroadcastDeliversRootsBytes) {
  std::vector<std::uint8_t> bytes;
  if (World().rank() == 0) bytes = {1, 2, 3, 250};
  EXPECT_EQ(World().Broadcast(bytes, 0), (std::vector<std::uint8_t>{1, 2, 3, 250}));
  World().Barrier();
}

TEST(SingleProcessCommunicator, GatherIsACopy) {
  auto single = MakeSingleProcessCommunicator();
  std::vector<std::int64_t> counts;
  EXPECT_EQ(single->AllGather(std::vector<float>{3.0f}, counts), std::vector<float>{3.0f});
  EXPECT_EQ(counts, std::vector<std::int64_t>{1});
  EXPECT_EQ(single->size(), 1);
  const std::vector<std::uint8_t> bytes = {7, 0, 255};
  EXPECT_EQ(single->AllGatherBytes(bytes, counts), bytes);
  EXPECT_EQ(counts, std::vector<std::int64_t>{3});
  EXPECT_EQ(BroadcastText(*single, "only"), "only");
}

}  // namespace
}  // namespace elastic::agent
