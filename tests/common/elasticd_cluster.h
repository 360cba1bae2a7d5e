// Fixture for suites on a local cluster with elasticd: the job summary elasticd writes into
// AdminComment, the daemon's log and client, and killing (-9) and restarting it.
#pragma once

#include <string>

#include "tests/common/local_cluster.h"

namespace elastic::testing {

class ElasticdClusterSuite : public ClusterSuite {
 protected:
  // Starts this binary's cluster with elasticd (call from the suite's SetUpTestSuite).
  static void StartWithElasticd(LocalCluster::Options options = {});

  // The job's AdminComment (elasticd's summary), "" if none.
  static std::string AdminComment(const std::string& job);
  // Polls until the summary shows `nodes` of `bounds` ("1-4"); the comment, or "" on timeout.
  static std::string WaitForNodes(const std::string& job, int nodes, const std::string& bounds,
                                  int timeout_s);
  // SIGKILLs this cluster's elasticd and starts a new one on the same config and state.
  static void RestartElasticd();
  // The elasticd client command line for this cluster's daemon.
  static std::string ElasticdCli();
  static std::string Log();

  // The jobs of GrowToAllFourNodes: the elastic job and the rigid 3-node job that held the
  // other nodes for 8 s (scaled, time_scale.h).
  struct GrownJob {
    std::string job, hold;
  };
  // Submits `-N 1-4 --exclusive --elastic` plus `extra_args` `elastic-agent run --config F`
  // (output to `out`) while a rigid job holds 3 nodes for 8 s (scaled), and waits (120 s) until
  // elasticd has grown it to all 4 nodes. On timeout the test fails with the AdminComment,
  // elasticd's log and the job's output, and `job` is "".
  static GrownJob GrowToAllFourNodes(const std::string& config, const std::string& out,
                                     const std::string& extra_args = "");
};

}  // namespace elastic::testing
