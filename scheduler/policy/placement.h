// Placement helpers shared by the policies: a free-capacity ledger and device picking.
// Pure value types; not thread-safe (each Decide call owns its ledger).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scheduler/policy/types.h"

namespace elastic::policy {

// Free devices/CPUs/memory per node, mutated as a policy plans within one Decide call.
class FreeLedger {
 public:
  explicit FreeLedger(const ClusterState& cluster);
  // Devices of `node` this job could still take, given its per-device CPU and memory needs.
  int Available(int node, const JobState& job) const;
  // Free devices of one type on the whole cluster (ignores CPU/memory).
  int FreeDevicesOfType(const std::string& device_type) const;
  // REQUIRES: the delta fits (Available); `delta` is what is added to the job.
  void Take(const Allocation& delta, const JobState& job);
  void Give(const Allocation& delta, const JobState& job);

  // Nodes of a type bucketed by free devices (index = free count, each bucket ordered by node
  // index), so placement finds best-fit and emptiest nodes without scanning the cluster.
  // Bucket 0 stays empty: no placement looks for devices on a full node, and full nodes are
  // most of a busy cluster (keeping them cost a set insert and erase per change).
  // nullptr for an unknown type.
  const std::vector<std::set<int>>* Buckets(const std::string& device_type) const;
  int FreeDevices(int node) const { return devices_[node]; }
  int FreeCpus(int node) const { return cpus_[node]; }
  std::int64_t FreeMemoryMb(int node) const { return memory_mb_[node]; }

 private:
  void Rebucket(int node, int before);

  const ClusterState* cluster_;
  std::vector<int> devices_;
  std::vector<int> cpus_;
  std::vector<std::int64_t> memory_mb_;
  std::vector<int> type_of_;                            // node -> index into types_
  std::vector<std::string> types_;
  std::vector<int> free_of_type_;                       // per type
  std::vector<std::vector<std::set<int>>> buckets_;     // per type, per free count
};

// Device types in order of first appearance among the nodes.
std::vector<std::string> DeviceTypes(const ClusterState& cluster);

// Picks `count` more devices of `device_type` for `job` (with its CPUs and host memory per device):
// first on nodes it already holds, then the best-fitting single node (fewest free devices that
// hold the rest), else the nodes with the most free devices. Returns the devices to
// add (not the merged allocation) or nullopt if they do not fit. Deterministic (ties: node index).
std::optional<Allocation> PickDevices(const ClusterState& cluster, const FreeLedger& ledger,
                                      const JobState& job, const std::string& device_type,
                                      int count);

// The reference PickDevices: the same rules by scanning every node (tests compare the two).
std::optional<Allocation> PickDevicesByScan(const ClusterState& cluster, const FreeLedger& ledger,
                                            const JobState& job, const std::string& device_type,
                                            int count);

// a + b, merged per node and sorted.
Allocation Merge(const Allocation& a, const Allocation& b);

}  // namespace elastic::policy
