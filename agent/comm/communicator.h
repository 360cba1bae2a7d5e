// How the ranks of one training generation talk: the seam between the EST runtime and MPI.
// Implementations: MPI (real ranks, mpirun or srun --mpi=pmix) and a single-process one.
// Error model: communication failures throw PeerLostError (agent/comm/peer_lost_error.h) so
// the supervisor can tell a lost peer from a bug. Not thread-safe: one caller thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace elastic::agent {

class PeerLostError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Every rank contributes `mine` (its length may differ per rank); every rank receives the
  // concatenation in rank order. `counts` receives each rank's length. Exact: bytes are moved,
  // never combined, so the caller decides the (canonical) order of any arithmetic.
  std::vector<float> AllGather(std::span<const float> mine, std::vector<std::int64_t>& counts) {
    std::vector<float> all;
    AllGather(mine, counts, all);
    return all;
  }
  // The same into `all` (resized to the total; what it held is replaced). A caller that keeps
  // `all` from one step to the next reuses its memory: the gradient exchange gathers tens of MB
  // a step, and a fresh buffer costs a page fault per 4 KiB and a zero fill each time.
  virtual void AllGather(std::span<const float> mine, std::vector<std::int64_t>& counts,
                         std::vector<float>& all) = 0;
  // The same for bytes (serialized EST contexts for a checkpoint): every rank receives every
  // rank's `mine`, concatenated in rank order; `counts` receives each rank's length.
  virtual std::vector<std::uint8_t> AllGatherBytes(std::span<const std::uint8_t> mine,
                                                   std::vector<std::int64_t>& counts) = 0;
  // Personalised exchange (MPI_Alltoallv): `send` holds this rank's message to rank 0, then to
  // rank 1, ... back to back, `send_counts[q]` floats for rank q (size() entries). Returns what
  // every rank sent to this one, concatenated in rank order; `recv_counts` receives each sender's
  // length. Exact like AllGather: bytes move, nothing is combined, so ZeRO's reduce-scatter does
  // its arithmetic in the caller's canonical order (agent/plan/zero_update.cc).
  std::vector<float> AllToAll(std::span<const float> send,
                              std::span<const std::int64_t> send_counts,
                              std::vector<std::int64_t>& recv_counts) {
    std::vector<float> received;
    AllToAll(send, send_counts, recv_counts, received);
    return received;
  }
  // The same into `received` (resized to the total; reused as AllGather's `all` is).
  virtual void AllToAll(std::span<const float> send, std::span<const std::int64_t> send_counts,
                        std::vector<std::int64_t>& recv_counts,
                        std::vector<float>& received) = 0;
  // Point-to-point, for pipeline stages (agent/plan/pipeline.h): queues `bytes` (copied) for rank
  // `dest` and returns without waiting for the receiver, so two stages sending to each other
  // cannot deadlock. Messages from one rank to another arrive in the order they were sent.
  virtual void Send(std::span<const std::uint8_t> bytes, int dest) = 0;
  // The next message from rank `source`, waiting for it.
  virtual std::vector<std::uint8_t> Receive(int source) = 0;
  // Whether Receive(source) would return without waiting (MPI_Iprobe): lets a waiting rank do
  // other work meanwhile (agent/multiplex/idle_filler.h). Drives MPI progress; never blocks.
  virtual bool MessageWaiting(int source) = 0;
  // Rank `root`'s bytes, delivered to every rank.
  virtual std::vector<std::uint8_t> Broadcast(std::vector<std::uint8_t> bytes, int root) = 0;
  virtual void Barrier() = 0;
  // Ends every rank of the world with `status` (MPI_Abort): for an error on one rank, whose
  // peers may be blocked in a collective. The single-process world just exits.
  [[noreturn]] virtual void Abort(int status) = 0;
};

// Rank 0's `text` on every rank (e.g. to check that replicas agree). Collective.
std::string BroadcastText(Communicator& world, const std::string& text);

// The world of this process: MPI when launched by mpirun/srun with more than one rank (or
// whenever MPI is initialised), else a single-process communicator.
std::unique_ptr<Communicator> MakeWorldCommunicator(int* argc, char*** argv);
std::unique_ptr<Communicator> MakeSingleProcessCommunicator();

}  // namespace elastic::agent
