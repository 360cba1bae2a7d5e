// The communicator primitives execution plans add (AllToAll, ZeRO's reduce-scatter transport;
// Send/Receive between pipeline stages)
// across real Open MPI ranks (run by ctest under mpirun -np 3), and on one process.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "agent/comm/communicator.h"

namespace elastic::agent {
namespace {

Communicator& World() {
  static std::unique_ptr<Communicator> world = MakeWorldCommunicator(nullptr, nullptr);
  return *world;
}

// Rank r sends (q + 1) floats r*100 + q*10 + i to rank q: uneven, distinguishable messages.
TEST(AllToAll, EveryRankReceivesItsMessageFromEveryRankInRankOrder) {
  ASSERT_NE(std::getenv("OMPI_COMM_WORLD_SIZE"), nullptr) << "run me under mpirun";
  const int rank = World().rank();
  const int size = World().size();
  std::vector<float> send;
  std::vector<std::int64_t> send_counts;
  for (int q = 0; q < size; ++q) {
    for (int i = 0; i <= q; ++i) send.push_back(static_cast<float>(rank * 100 + q * 10 + i));
    send_counts.push_back(q + 1);
  }
  std::vector<std::int64_t> recv_counts;
  const std::vector<float> received = World().AllToAll(send, send_counts, recv_counts);
  std::vector<float> expected;
  for (int r = 0; r < size; ++r) {
    EXPECT_EQ(recv_counts[static_cast<std::size_t>(r)], rank + 1);
    for (int i = 0; i <= rank; ++i) expected.push_back(static_cast<float>(r * 100 + rank * 10 + i));
  }
  EXPECT_EQ(received, expected);
}

TEST(AllToAll, EmptyMessagesAndAnEmptyShardAreFine) {
  // Only rank 0 receives anything (a rank owning an empty shard receives nothing).
  std::vector<float> send;
  std::vector<std::int64_t> send_counts(static_cast<std::size_t>(World().size()), 0);
  send = {static_cast<float>(World().rank()) + 0.5f};
  send_counts[0] = 1;
  std::vector<std::int64_t> recv_counts;
  const std::vector<float> received = World().AllToAll(send, send_counts, recv_counts);
  if (World().rank() == 0) {
    ASSERT_EQ(received.size(), static_cast<std::size_t>(World().size()));
    for (int r = 0; r < World().size(); ++r) EXPECT_EQ(received[r], r + 0.5f);
  } else {
    EXPECT_TRUE(received.empty());
  }
  World().Barrier();
}

TEST(AllToAll, CountsThatDoNotMatchTheMessageAreRefusedBeforeAnyTraffic) {
  std::vector<std::int64_t> recv_counts;
  const std::vector<float> send = {1.0f};
  EXPECT_THROW(World().AllToAll(send, std::vector<std::int64_t>{1}, recv_counts),
               std::invalid_argument);  // one count, several ranks
  std::vector<std::int64_t> too_many(static_cast<std::size_t>(World().size()), 1);
  EXPECT_THROW(World().AllToAll(send, too_many, recv_counts), std::invalid_argument);
}

// Pipeline stages: each rank sends to the next two messages before receiving any (sends never
// wait for the receiver), and receives its predecessor's in the order sent.
TEST(SendReceive, MessagesToTheNextRankArriveInOrderWithoutDeadlock) {
  const int rank = World().rank();
  const int size = World().size();
  const int next = (rank + 1) % size;
  const int previous = (rank + size - 1) % size;
  std::vector<std::uint8_t> big(1 << 20, static_cast<std::uint8_t>(rank));  // past eager limits
  World().Send(big, next);
  World().Send(std::vector<std::uint8_t>{static_cast<std::uint8_t>(rank), 7}, next);
  const std::vector<std::uint8_t> first = World().Receive(previous);
  EXPECT_EQ(first.size(), big.size());
  EXPECT_EQ(first.front(), previous);
  EXPECT_EQ(World().Receive(previous),
            (std::vector<std::uint8_t>{static_cast<std::uint8_t>(previous), 7}));
  World().Barrier();
}

// What a waiting burst rank polls (agent/multiplex/idle_filler.h): no message is waiting until
// the predecessor has sent one (after the barrier), and then it stays waiting until received,
// while a big message (rendezvous protocol) is polled to completion.
TEST(SendReceive, MessageWaitingTurnsTrueOnceAMessageIsThereAndStaysUntilReceived) {
  const int rank = World().rank();
  const int size = World().size();
  const int next = (rank + 1) % size;
  const int previous = (rank + size - 1) % size;
  EXPECT_FALSE(World().MessageWaiting(previous));
  World().Barrier();
  std::vector<std::uint8_t> big(1 << 20, static_cast<std::uint8_t>(rank));
  World().Send(big, next);
  while (!World().MessageWaiting(previous)) {
  }
  EXPECT_TRUE(World().MessageWaiting(previous));
  EXPECT_EQ(World().Receive(previous).front(), previous);
  World().Barrier();
  EXPECT_FALSE(World().MessageWaiting(previous));
}

TEST(SingleProcessAllToAll, IsACopy) {
  auto single = MakeSingleProcessCommunicator();
  std::vector<std::int64_t> recv_counts;
  const std::vector<float> send = {1.0f, 2.0f};
  EXPECT_EQ(single->AllToAll(send, std::vector<std::int64_t>{2}, recv_counts), send);
  EXPECT_EQ(recv_counts, std::vector<std::int64_t>{2});
  EXPECT_THROW(single->AllToAll(send, std::vector<std::int64_t>{1}, recv_counts),
               std::invalid_argument);
  EXPECT_FALSE(single->MessageWaiting(0));
  single->Send(std::vector<std::uint8_t>{1, 2}, 0);
  EXPECT_TRUE(single->MessageWaiting(0));
  EXPECT_EQ(single->Receive(0), (std::vector<std::uint8_t>{1, 2}));
  EXPECT_FALSE(single->MessageWaiting(0));
  EXPECT_THROW(single->Receive(0), std::invalid_argument);
}

}  // namespace
}  // namespace elastic::agent
