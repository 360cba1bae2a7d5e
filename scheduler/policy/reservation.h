// EASY reservations shared by `backfill` and `elastic`: when the head of the rigid queue can start.
// Devices, CPUs and host memory all count: the head fits on a node only as far as all three do.
// Pure functions over plain values; each call works on the caller's own release lists.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/policy/placement.h"
#include "scheduler/policy/types.h"

namespace elastic::policy {

// What one job is expected to give back on one node, and when.
struct Release {
  double time_s = 0.0;
  int node = 0;
  int devices = 0;
  long cpus = 0;
  std::int64_t memory_mb = 0;
};
// Expected releases on the nodes of one device type; Reserve sorts it by time.
using Releases = std::vector<Release>;

// Devices, CPUs and host memory on one node (free now, or free at some time).
struct NodeAmounts {
  long devices = 0;
  long cpus = 0;
  std::int64_t memory_mb = 0;
};

struct HeadReservation {
  Reservation reservation;
  // Devices of that type the head could still use at the reservation beyond its own (counted
  // like Usable below).
  int extra_devices = 0;
  int cpus_per_device = 0;  // what the reservation keeps for each head device
  std::int64_t memory_mb_per_device = 0;
};

// Devices of a node the head can use given what is free there: each device needs its CPUs and
// memory on the same node.
long Usable(const NodeAmounts& free, int cpus_per_device, std::int64_t memory_mb_per_device);

// Adds `allocation`'s devices, with `job`'s CPUs and host memory per device, released at end_s,
// to the per-type release lists.
void AddReleases(const ClusterState& cluster, const Allocation& allocation, const JobState& job,
                 double end_s, std::map<std::string, Releases>& releases);

// Earliest time nodes of `type` have enough usable devices for `job` (requested_devices, each
// with `cpus_per_device` CPUs and the job's host memory), counting the ledger's free amounts now
// plus releases. nullopt: never.
std::optional<HeadReservation> ReserveOnType(const ClusterState& cluster, const FreeLedger& ledger,
                                             std::map<std::string, Releases>& releases,
                                             const JobState& job, const std::string& type,
                                             int cpus_per_device, double now_s);

// ReserveOnType with the job's own CPUs per device, over every type: the earliest, ties to the
// faster type.
std::optional<HeadReservation> Reserve(const ClusterState& cluster, const FreeLedger& ledger,
                                       std::map<std::string, Releases>& releases,
                                       const JobState& job, double now_s);

// Of two reservations for the same job, whether `a` is better: earlier, ties to faster devices.
bool EarlierReservation(const ClusterState& cluster, const HeadReservation& a,
                        const std::optional<HeadReservation>& b);

// Types in the order a job tries them: fastest first, then cluster order.
std::vector<std::string> TypesByCapability(const ClusterState& cluster);

}  // namespace elastic::policy
