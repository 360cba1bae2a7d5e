// A world of one rank: gathers and broadcasts are copies. Also the torch-free helpers over any
// Communicator.
#include <cstdlib>
#include <deque>
#include <stdexcept>
#include <string>
#include <utility>

#include "agent/comm/communicator.h"

namespace elastic::agent {
namespace {

class SingleProcessCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  using Communicator::AllGather;
  using Communicator::AllToAll;
  void AllGather(std::span<const float> mine, std::vector<std::int64_t>& counts,
                 std::vector<float>& all) override {
    counts.assign(1, static_cast<std::int64_t>(mine.size()));
    all.assign(mine.begin(), mine.end());
  }
  std::vector<std::uint8_t> AllGatherBytes(std::span<const std::uint8_t> mine,
                                           std::vector<std::int64_t>& counts) override {
    counts.assign(1, static_cast<std::int64_t>(mine.size()));
    return {mine.begin(), mine.end()};
  }
  void AllToAll(std::span<const float> send, std::span<const std::int64_t> send_counts,
                std::vector<std::int64_t>& recv_counts, std::vector<float>& received) override {
    if (send_counts.size() != 1 || send_counts[0] != static_cast<std::int64_t>(send.size())) {
      throw std::invalid_argument("AllToAll: one rank: expected one count equal to the message");
    }
    recv_counts.assign(1, static_cast<std::int64_t>(send.size()));
    received.assign(send.begin(), send.end());
  }
  void Send(std::span<const std::uint8_t> bytes, int dest) override {
    if (dest != 0) throw std::invalid_argument("Send: rank " + std::to_string(dest) + " of 1");
    messages_.emplace_back(bytes.begin(), bytes.end());
  }
  bool MessageWaiting(int source) override { return source == 0 && !messages_.empty(); }
  std::vector<std::uint8_t> Receive(int source) override {
    if (source != 0 || messages_.empty()) {
      throw std::invalid_argument("Receive: no message from rank " + std::to_string(source));
    }
    std::vector<std::uint8_t> message = std::move(messages_.front());
    messages_.pop_front();
    return message;
  }
  std::vector<std::uint8_t> Broadcast(std::vector<std::uint8_t> bytes, int) override {
    return bytes;
  }
  void Barrier() override {}
  [[noreturn]] void Abort(int status) override { std::exit(status); }

 private:
  std::deque<std::vector<std::uint8_t>> messages_;  // sent to itself, not yet received
};

}  // namespace

std::string BroadcastText(Communicator& world, const std::string& text) {
  std::vector<std::uint8_t> bytes;
  if (world.rank() == 0) bytes.assign(text.begin(), text.end());
  bytes = world.Broadcast(std::move(bytes), 0);
  return std::string(bytes.begin(), bytes.end());
}

std::unique_ptr<Communicator> MakeSingleProcessCommunicator() {
  return std::make_unique<SingleProcessCommunicator>();
}

}  // namespace elastic::agent
