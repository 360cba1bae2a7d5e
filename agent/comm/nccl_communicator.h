// Collectives on GPU buffers over NCCL among one training generation's ranks: the device twin of
// Communicator for CUDA jobs, so the EST gradient exchange never leaves the GPUs. Torch-free and
// free of CUDA's headers: buffers are device pointers, streams CUstream_st* (cudaStream_t).
//
// We call NCCL's C API rather than c10d's ProcessGroupNCCL: Debian's LibTorch (CI's) has neither
// CUDA nor c10d's NCCL, and the world already exists as an MPI Communicator, which hands out the
// NCCL id (the c10d Store's job) and stays the host-side channel.
//
// Error model: NCCL failures throw PeerLostError when a peer or the network failed
// (ncclRemoteError, ncclSystemError), else std::runtime_error naming the NCCL call and its
// ncclGetErrorString. Not thread-safe: one caller thread, like Communicator. Resizing tears it
// down with its world and makes a new one (never patched).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "agent/comm/communicator.h"

struct ncclComm;
struct CUstream_st;

namespace elastic::agent {

// nullptr is the legacy default stream, where LibTorch's default-stream work runs: a collective
// there is ordered after the kernels that produced its input and before those that read its
// output, without any LibTorch CUDA header.
using DeviceStream = CUstream_st*;

class NcclCommunicator {
 public:
  // Collective over `world`: rank 0 makes the NCCL unique id and Broadcasts it, then every rank
  // joins (ncclCommInitRank) on CUDA device `device`. REQUIRES: each rank its own GPU
  // (MakeNcclCommunicator checks).
  NcclCommunicator(Communicator& world, int device);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int device() const { return device_; }

  // Unequal all-gather into fixed blocks: rank r's `counts[r]` floats (from `send`) land at
  // recv + sum(counts[0..r)) on every rank, as one group of ncclBroadcast calls, one per rank
  // with a non-empty block. `send` may be this rank's own block inside `recv` (in place).
  // Enqueued on `stream`; returns without waiting. REQUIRES: the same `counts` on every rank.
  void AllGatherV(const float* send, float* recv, std::span<const std::int64_t> counts,
                  DeviceStream stream = nullptr);

  // Personalised exchange: `send` holds this rank's message to rank 0, then to rank 1, ...,
  // `send_counts[q]` floats for rank q; `recv` receives rank q's message to this one,
  // `recv_counts[q]` floats, back to back in rank order. One group of ncclSend/ncclRecv.
  // REQUIRES: recv_counts[q] here == send_counts[this rank] on rank q.
  void AllToAllV(const float* send, std::span<const std::int64_t> send_counts, float* recv,
                 std::span<const std::int64_t> recv_counts, DeviceStream stream = nullptr);

  // Waits for `stream` and checks the communicator for an asynchronous NCCL error.
  void Synchronize(DeviceStream stream = nullptr);

 private:
  void Check(int result, const char* call);

  ncclComm* comm_ = nullptr;
  int rank_ = 0;
  int size_ = 0;
  int device_ = 0;
  bool failed_ = false;  // after an error the communicator is aborted, not destroyed
};

// An NCCL communicator over `world` on `device`, or nullptr (with the reason in `why_not`) when
// two ranks share a GPU (NCCL refuses that; several ranks on a node's one GPU then keep the
// host exchange). Collective over `world`.
std::unique_ptr<NcclCommunicator> MakeNcclCommunicator(Communicator& world, int device,
                                                       std::string* why_not);

}  // namespace elastic::agent
