// EASY reservations shared by `backfill` and `elastic`: when the head of the rigid queue can start.
// Pure functions over plain values; each call works on the caller's own release lists.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/policy/placement.h"
#include "scheduler/policy/types.h"

namespace elastic::policy {

// Expected device releases of one type: (time, devices); Reserve sorts it by time.
using Releases = std::vector<std::pair<double, int>>;

struct HeadReservation {
  Reservation reservation;
  int extra_devices = 0;  // devices of that type still free at the reservation after the head
};

// Adds `allocation`'s devices, released at end_s, to the per-type release lists.
void AddReleases(const ClusterState& cluster, const Allocation& allocation, double end_s,
                 std::map<std::string, Releases>& releases);

// Earliest time enough devices of one type are free for `job` (requested_devices), counting the
// ledger's free devices now plus releases; ties go to the faster type. nullopt: never.
std::optional<HeadReservation> Reserve(const ClusterState& cluster, const FreeLedger& ledger,
                                       std::map<std::string, Releases>& releases,
                                       const JobState& job, double now_s);

// Types in the order a job tries them: fastest first, then cluster order.
std::vector<std::string> TypesByCapability(const ClusterState& cluster);

}  // namespace elastic::policy
