// PickDevices: the bucketed path must pick what the node scan picks when CPUs/memory never bind.
#include "scheduler/policy/placement.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/unit/policy/cluster_builder.h"

namespace elastic::policy {
namespace {

// Random free counts, random held slices; the same job with cpus_per_device = 1 (ample CPUs, so
// the limit never binds) takes the scanning path. Both must return the same devices.
TEST(PickDevices, BucketsAgreeWithTheNodeScan) {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    ClusterState cluster;
    AddNodes(cluster, 6, 8, "gpu", 1.0);
    AddNodes(cluster, 3, 4, "a100", 2.0);
    JobState job;
    for (size_t n = 0; n < cluster.nodes.size(); ++n) {
      NodeState& node = cluster.nodes[n];
      node.free_devices = static_cast<int>(rng() % (node.devices + 1));
      if (rng() % 4 == 0 && node.free_devices < node.devices) {
        job.allocation.push_back({static_cast<int>(n), 1});
      }
    }
    FreeLedger ledger(cluster);
    JobState scanned = job;
    scanned.cpus_per_device = 1;
    for (const char* type : {"gpu", "a100"}) {
      int count = 1 + static_cast<int>(rng() % 12);
      EXPECT_EQ(PickDevices(cluster, ledger, job, type, count),
                PickDevicesByScan(cluster, ledger, scanned, type, count))
          << "round " << round << " type " << type << " count " << count;
    }
  }
}

// The ledger's buckets follow Take/Give, so per-type free counts stay exact.
TEST(FreeLedger, TypeCountsFollowTakeAndGive) {
  ClusterState cluster;
  AddNodes(cluster, 2, 8, "gpu", 1.0);
  AddNodes(cluster, 1, 4, "a100", 2.0);
  FreeLedger ledger(cluster);
  JobState job;
  ledger.Take({{0, 3}, {2, 4}}, job);
  EXPECT_EQ(ledger.FreeDevicesOfType("gpu"), 13);
  EXPECT_EQ(ledger.FreeDevicesOfType("a100"), 0);
  EXPECT_EQ(PickDevices(cluster, ledger, job, "gpu", 5), (Allocation{{0, 5}}));  // best fit
  ledger.Give({{2, 4}}, job);
  EXPECT_EQ(ledger.FreeDevicesOfType("a100"), 4);
  EXPECT_FALSE(PickDevices(cluster, ledger, job, "a100", 5));
}

}  // namespace
}  // namespace elastic::policy
