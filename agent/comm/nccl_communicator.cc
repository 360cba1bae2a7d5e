// NcclCommunicator: NCCL's C API over device buffers, its id handed out through the MPI world.
#include "agent/comm/nccl_communicator.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "agent/comm/collective_layout.h"

namespace elastic::agent {
namespace {

void CheckCuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("NCCL communicator: ") + call + ": " +
                             cudaGetErrorString(status));
  }
}

// Makes `device` current for NCCL's calls and gives the caller's back: LibTorch and the rest
// of the rank keep whichever device they had.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    CheckCuda(cudaGetDevice(&saved_), "cudaGetDevice");
    if (saved_ != device) CheckCuda(cudaSetDevice(device), "cudaSetDevice");
  }
  ~DeviceGuard() { cudaSetDevice(saved_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int saved_ = 0;
};

cudaStream_t AsCuda(DeviceStream stream) { return stream; }

void RequireRanks(std::span<const std::int64_t> counts, int size, const char* what) {
  if (static_cast<int>(counts.size()) != size) {
    throw std::invalid_argument(std::string("NCCL communicator: ") + what + ": " +
                                std::to_string(counts.size()) + " counts for " +
                                std::to_string(size) + " ranks");
  }
}

// The device's UUID: unique across nodes, unlike its ordinal or PCI bus id.
std::string DeviceUuid(int device) {
  cudaDeviceProp properties{};
  CheckCuda(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
  return std::string(properties.uuid.bytes, sizeof(properties.uuid.bytes));
}

}  // namespace

NcclCommunicator::NcclCommunicator(Communicator& world, int device)
    : rank_(world.rank()), size_(world.size()), device_(device) {
  ncclUniqueId id{};
  std::vector<std::uint8_t> bytes(sizeof(id));
  if (rank_ == 0) {
    Check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    std::memcpy(bytes.data(), &id, sizeof(id));
  }
  bytes = world.Broadcast(std::move(bytes), 0);
  if (bytes.size() != sizeof(id)) {
    throw PeerLostError("NCCL communicator: rank 0 sent a " + std::to_string(bytes.size()) +
                        "-byte NCCL id: expected " + std::to_string(sizeof(id)));
  }
  std::memcpy(&id, bytes.data(), sizeof(id));
  DeviceGuard guard(device_);
  ncclComm_t comm = nullptr;
  Check(ncclCommInitRank(&comm, size_, id, rank_), "ncclCommInitRank");
  comm_ = comm;
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_ == nullptr) return;
  try {
    DeviceGuard guard(device_);
    // Destroy waits for the peers' outstanding work; after an error a peer may never come.
    if (failed_) {
      ncclCommAbort(comm_);
    } else {
      ncclCommDestroy(comm_);
    }
  } catch (const std::exception&) {
    // A destructor cannot report: the CUDA context is already gone at process exit.
  }
}

void NcclCommunicator::Check(int result, const char* call) {
  const auto status = static_cast<ncclResult_t>(result);
  if (status == ncclSuccess) return;
  failed_ = true;
  const std::string message = std::string("NCCL communicator: ") + call + " (rank " +
                              std::to_string(rank_) + " of " + std::to_string(size_) +
                              "): " + ncclGetErrorString(status);
  if (status == ncclRemoteError || status == ncclSystemError) throw PeerLostError(message);
  throw std::runtime_error(message);
}

void NcclCommunicator::AllGatherV(const float* send, float* recv,
                                  std::span<const std::int64_t> counts, DeviceStream stream) {
  RequireRanks(counts, size_, "AllGatherV");
  const BlockLayout layout = BlocksOfCounts(counts);
  DeviceGuard guard(device_);
  Check(ncclGroupStart(), "ncclGroupStart");
  for (const BroadcastCall& call : AllGatherBroadcasts(layout)) {
    float* block = recv + call.offset;
    const float* source = call.root == rank_ ? send : block;  // non-roots: ignored by NCCL
    const ncclResult_t status =
        ncclBroadcast(source, block, static_cast<std::size_t>(call.count), ncclFloat, call.root,
                      comm_, AsCuda(stream));
    if (status != ncclSuccess) {
      ncclGroupEnd();  // leave the group before reporting
      Check(status, "ncclBroadcast");
    }
  }
  Check(ncclGroupEnd(), "ncclGroupEnd (all-gather)");
}

void NcclCommunicator::AllToAllV(const float* send, std::span<const std::int64_t> send_counts,
                                 float* recv, std::span<const std::int64_t> recv_counts,
                                 DeviceStream stream) {
  RequireRanks(send_counts, size_, "AllToAllV send");
  RequireRanks(recv_counts, size_, "AllToAllV receive");
  const BlockLayout out = BlocksOfCounts(send_counts);
  const BlockLayout in = BlocksOfCounts(recv_counts);
  DeviceGuard guard(device_);
  Check(ncclGroupStart(), "ncclGroupStart");
  for (int peer = 0; peer < size_; ++peer) {
    const auto q = static_cast<std::size_t>(peer);
    ncclResult_t status = ncclSuccess;
    if (out.counts[q] > 0) {
      status = ncclSend(send + out.offsets[q], static_cast<std::size_t>(out.counts[q]), ncclFloat,
                        peer, comm_, AsCuda(stream));
    }
    if (status == ncclSuccess && in.counts[q] > 0) {
      status = ncclRecv(recv + in.offsets[q], static_cast<std::size_t>(in.counts[q]), ncclFloat,
                        peer, comm_, AsCuda(stream));
    }
    if (status != ncclSuccess) {
      ncclGroupEnd();
      Check(status, peer == rank_ ? "ncclSend/ncclRecv to itself" : "ncclSend/ncclRecv");
    }
  }
  Check(ncclGroupEnd(), "ncclGroupEnd (all-to-all)");
}

void NcclCommunicator::Synchronize(DeviceStream stream) {
  DeviceGuard guard(device_);
  const cudaError_t waited = cudaStreamSynchronize(AsCuda(stream));
  ncclResult_t async = ncclSuccess;
  Check(ncclCommGetAsyncError(comm_, &async), "ncclCommGetAsyncError");
  Check(async, "an asynchronous NCCL operation");
  CheckCuda(waited, "cudaStreamSynchronize");
}

std::unique_ptr<NcclCommunicator> MakeNcclCommunicator(Communicator& world, int device,
                                                       std::string* why_not) {
  const std::string mine = DeviceUuid(device);
  std::vector<std::int64_t> counts;
  const std::vector<std::uint8_t> all = world.AllGatherBytes(
      std::span(reinterpret_cast<const std::uint8_t*>(mine.data()), mine.size()), counts);
  if (all.size() != counts.size() * mine.size()) {
    throw PeerLostError("NCCL communicator: gathered " + std::to_string(all.size()) +
                        " bytes of device UUIDs from " + std::to_string(counts.size()) +
                        " ranks: expected " + std::to_string(mine.size()) + " each");
  }
  std::vector<std::string> devices;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    devices.emplace_back(reinterpret_cast<const char*>(all.data()) + r * mine.size(),
                         mine.size());
  }
  if (const auto shared = FirstSharedDevice(devices)) {
    if (why_not != nullptr) {
      *why_not = "ranks " + std::to_string(shared->first) + " and " +
                 std::to_string(shared->second) + " share one GPU, which NCCL refuses";
    }
    return nullptr;
  }
  return std::make_unique<NcclCommunicator>(world, device);
}

}  // namespace elastic::agent
