// Communicator over MPI_COMM_WORLD. MPI errors return codes (MPI_ERRORS_RETURN) that become
// PeerLostError instead of aborting the job, so a lost rank leaves the checkpoint usable.
#include <mpi.h>

#include <cstdlib>
#include <limits>

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
    if (owns_mpi_) MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<float> AllGather(std::span<const float> mine,
                               std::vector<std::int64_t>& counts) override {
    return AllGatherV(mine, MPI_FLOAT, counts);
  }

  std::vector<std::uint8_t> AllGatherBytes(std::span<const std::uint8_t> mine,
                                           std::vector<std::int64_t>& counts) override {
    return AllGatherV(mine, MPI_BYTE, counts);
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
  // Every rank's `mine` (lengths may differ) concatenated in rank order, on every rank.
  template <typename T>
  std::vector<T> AllGatherV(std::span<const T> mine, MPI_Datatype type,
                            std::vector<std::int64_t>& counts) {
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
    std::vector<T> all(static_cast<std::size_t>(total));
    Check(MPI_Allgatherv(mine.data(), my_count, type, all.data(), int_counts.data(), displs.data(),
                         type, MPI_COMM_WORLD),
          "MPI_Allgatherv");
    return all;
  }

  int rank_ = 0;
  int size_ = 1;
  bool owns_mpi_ = false;
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
