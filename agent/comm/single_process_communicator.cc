// A world of one rank: gathers and broadcasts are copies. Also the torch-free helpers over any
// Communicator.
#include <cstdlib>
#include <utility>

#include "agent/comm/communicator.h"

namespace elastic::agent {
namespace {

class SingleProcessCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<float> AllGather(std::span<const float> mine,
                               std::vector<std::int64_t>& counts) override {
    counts.assign(1, static_cast<std::int64_t>(mine.size()));
    return {mine.begin(), mine.end()};
  }
  std::vector<std::uint8_t> AllGatherBytes(std::span<const std::uint8_t> mine,
                                           std::vector<std::int64_t>& counts) override {
    counts.assign(1, static_cast<std::int64_t>(mine.size()));
    return {mine.begin(), mine.end()};
  }
  std::vector<std::uint8_t> Broadcast(std::vector<std::uint8_t> bytes, int) override {
    return bytes;
  }
  void Barrier() override {}
  [[noreturn]] void Abort(int status) override { std::exit(status); }
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
