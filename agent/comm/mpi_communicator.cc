// Communicator over MPI_COMM_WORLD. MPI errors return codes (MPI_ERRORS_RETURN) that become
// PeerLostError instead of aborting the job, so a lost rank leaves the checkpoint usable.
#include <mpi.h>

#include <cstdlib>
#include <deque>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "agent/comm/communicator.h"

namespace elastic::agent {
namespace {

void Check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = "";
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw PeerLostError(std::string("MPI ") + what + " failed: " + text);
}

int ToInt(std::int64_t value, const char* what) {
  if (value < 0 || value > std::numeric_limits<int>::max()) {
    throw std::length_error(std::string(what) + ": message too large for MPI");
  }
  return static_cast<int>(value);
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(int* argc, char*** argv) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      Check(MPI_Init(argc, argv), "MPI_Init");
      owns_mpi_ = true;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiCommunicator() override {
    WaitForSends();
    if (owns_mpi_) MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  using Communicator::AllGather;
  using Communicator::AllToAll;
  void AllGather(std::span<const float> mine, std::vector<std::int64_t>& counts,
                 std::vector<float>& all) override {
    AllGatherV(mine, MPI_FLOAT, counts, all);
  }

  std::vector<std::uint8_t> AllGatherBytes(std::span<const std::uint8_t> mine,
                                           std::vector<std::int64_t>& counts) override {
    std::vector<std::uint8_t> all;
    AllGatherV(mine, MPI_BYTE, counts, all);
    return all;
  }

  void AllToAll(std::span<const float> send, std::span<const std::int64_t> send_counts,
                std::vector<std::int64_t>& recv_counts, std::vector<float>& received) override {
    if (send_counts.size() != static_cast<std::size_t>(size_)) {
      throw std::invalid_argument("AllToAll: " + std::to_string(send_counts.size()) +
                                  " send counts: expected one per rank (" + std::to_string(size_) +
                                  ")");
    }
    std::vector<int> counts(size_), send_displs(size_);
    std::int64_t sent = 0;
    for (int q = 0; q < size_; ++q) {
      counts[q] = ToInt(send_counts[q], "AllToAll");
      send_displs[q] = ToInt(sent, "AllToAll");
      sent += send_counts[q];
    }
    if (sent != static_cast<std::int64_t>(send.size())) {
      throw std::invalid_argument("AllToAll: send counts add up to " + std::to_string(sent) +
                                  ": expected the message length " + std::to_string(send.size()));
    }
    std::vector<int> in_counts(size_), in_displs(size_);
    Check(MPI_Alltoall(counts.data(), 1, MPI_INT, in_counts.data(), 1, MPI_INT, MPI_COMM_WORLD),
          "MPI_Alltoall(counts)");
    std::int64_t total = 0;
    recv_counts.assign(size_, 0);
    for (int r = 0; r < size_; ++r) {
      in_displs[r] = ToInt(total, "AllToAll");
      recv_counts[r] = in_counts[r];
      total += in_counts[r];
    }
    received.resize(static_cast<std::size_t>(total));
    Check(MPI_Alltoallv(send.data(), counts.data(), send_displs.data(), MPI_FLOAT, received.data(),
                        in_counts.data(), in_displs.data(), MPI_FLOAT, MPI_COMM_WORLD),
          "MPI_Alltoallv");
  }

  void Send(std::span<const std::uint8_t> bytes, int dest) override {
    ReapSends();
    auto pending = std::make_unique<PendingSend>();
    pending->bytes.assign(bytes.begin(), bytes.end());
    Check(MPI_Isend(pending->bytes.data(), ToInt(static_cast<std::int64_t>(bytes.size()), "Send"),
                    MPI_BYTE, dest, kPointToPointTag, MPI_COMM_WORLD, &pending->request),
          "MPI_Isend");
    sends_.push_back(std::move(pending));
  }

  std::vector<std::uint8_t> Receive(int source) override {
    MPI_Status status;
    Check(MPI_Probe(source, kPointToPointTag, MPI_COMM_WORLD, &status), "MPI_Probe");
    int count = 0;
    Check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(count));
    Check(MPI_Recv(bytes.data(), count, MPI_BYTE, source, kPointToPointTag, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE),
          "MPI_Recv");
    return bytes;
  }

  bool MessageWaiting(int source) override {
    int waiting = 0;
    Check(MPI_Iprobe(source, kPointToPointTag, MPI_COMM_WORLD, &waiting, MPI_STATUS_IGNORE),
          "MPI_Iprobe");
    return waiting != 0;
  }

  std::vector<std::uint8_t> Broadcast(std::vector<std::uint8_t> bytes, int root) override {
    std::int64_t size = static_cast<std::int64_t>(bytes.size());
    Check(MPI_Bcast(&size, 1, MPI_INT64_T, root, MPI_COMM_WORLD), "MPI_Bcast(size)");
    bytes.resize(static_cast<std::size_t>(size));
    Check(MPI_Bcast(bytes.data(), ToInt(size, "Broadcast"), MPI_BYTE, root, MPI_COMM_WORLD),
          "MPI_Bcast");
    return bytes;
  }

  void Barrier() override { Check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

  [[noreturn]] void Abort(int status) override {
    MPI_Abort(MPI_COMM_WORLD, status);
    std::_Exit(status);  // MPI_Abort does not return; this is for the compiler
  }

 private:
  static constexpr int kPointToPointTag = 1;
  // A message in flight: its buffer lives until MPI has taken it.
  struct PendingSend {
    std::vector<std::uint8_t> bytes;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  // Frees the buffers of sends MPI has completed (oldest first, the order they complete in).
  void ReapSends() {
    while (!sends_.empty()) {
      int done = 0;
      Check(MPI_Test(&sends_.front()->request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (!done) return;
      sends_.pop_front();
    }
  }

  void WaitForSends() {
    for (auto& pending : sends_) MPI_Wait(&pending->request, MPI_STATUS_IGNORE);
    sends_.clear();
  }

  // Every rank's `mine` (lengths may differ) concatenated in rank order, on every rank.
  template <typename T>
  void AllGatherV(std::span<const T> mine, MPI_Datatype type, std::vector<std::int64_t>& counts,
                  std::vector<T>& all) {
    int my_count = ToInt(static_cast<std::int64_t>(mine.size()), "AllGather");
    std::vector<int> int_counts(size_);
    Check(MPI_Allgather(&my_count, 1, MPI_INT, int_counts.data(), 1, MPI_INT, MPI_COMM_WORLD),
          "MPI_Allgather(counts)");
    std::vector<int> displs(size_);
    std::int64_t total = 0;
    counts.assign(size_, 0);
    for (int r = 0; r < size_; ++r) {
      displs[r] = ToInt(total, "AllGather");
      counts[r] = int_counts[r];
      total += int_counts[r];
    }
    all.resize(static_cast<std::size_t>(total));
    Check(MPI_Allgatherv(mine.data(), my_count, type, all.data(), int_counts.data(), displs.data(),
                         type, MPI_COMM_WORLD),
          "MPI_Allgatherv");
  }

  int rank_ = 0;
  int size_ = 1;
  bool owns_mpi_ = false;
  std::deque<std::unique_ptr<PendingSend>> sends_;
};

// Launched by mpirun or srun --mpi=pmix: the launcher's variables are there.
bool LaunchedAsMpiRank() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

}  // namespace

std::unique_ptr<Communicator> MakeWorldCommunicator(int* argc, char*** argv) {
  // A plain `elastic-agent train` (no launcher) stays a single process: MPI singleton init
  // would work too, but costs ~0.3 s and needs no runtime here.
  if (!LaunchedAsMpiRank()) return MakeSingleProcessCommunicator();
  return std::make_unique<MpiCommunicator>(argc, argv);
}

}  // namespace elastic::agent
