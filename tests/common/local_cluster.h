// A real Slurm cluster for one integration test binary, started with contrib/local-cluster.sh.
// When the machine lacks what the cluster needs (exit status 2: not root, package missing) the
// test is skipped with the script's reason on a developer's machine, but fails under CI=true so
// CI can never go green without running it.
#pragma once

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "tests/common/run_command.h"

namespace elastic::testing {

class LocalCluster {
 public:
  struct Options {
    int nodes = 4;
    bool with_plugin = true;  // load the freshly built spank_elastic.so
    // slurm.conf SchedulerParameters; empty: the script's default (permit_job_expansion,...).
    std::string scheduler_parameters;
    bool with_elasticd = false;  // start the freshly built elasticd for this cluster too
    // elasticd's minimum time between two resizes of a job (e.g. "1h": only admin orders
    // resize); empty: the script's default.
    std::string resize_interval;
    // Adds a partition of this name for --elastic-class=background jobs, named to the plugin
    // and elasticd (local-cluster.sh --background-partition); empty: none.
    std::string background_partition;
    // Stand-in GPUs per node (local-cluster.sh --gpus-per-node: gres Slurm allocates and
    // accounts, on character devices like /dev/null); 0: none.
    int gpus_per_node = 0;
  };

  LocalCluster() = default;
  ~LocalCluster();  // tears the cluster down
  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;

  // Starts the cluster. Returns "" on success, else why not; `unavailable` tells a missing
  // prerequisite (skip outside CI) from a real failure.
  std::string Start(const Options& options, bool& unavailable);
  void Stop();

  // Runs `command` in a shell with the cluster's exports (SLURM_CONF, ...) set.
  CommandResult Run(const std::string& command) const;
  const std::map<std::string, std::string>& exports() const { return exports_; }
  std::string Export(const std::string& name) const;
  // Parent of the per-job checkpoint directories the plugin creates (plugstack argument).
  const std::string& checkpoint_base() const { return checkpoint_base_; }

  // Polls until the job leaves the queue (or `timeout_s` passes); returns its final state
  // from sacct/scontrol, e.g. "COMPLETED", or "" on timeout.
  std::string WaitForJob(const std::string& job_id, int timeout_s) const;

 private:
  std::string dir_;
  std::string checkpoint_base_;
  std::string env_prefix_;
  std::map<std::string, std::string> exports_;
};

bool RunningUnderCi();

// Base fixture: one cluster per test binary, started before its first test and torn down
// after the last; each test is skipped or failed (see above) when the cluster did not start.
class ClusterSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  // For suites that need a differently configured cluster: call from their own SetUpTestSuite.
  static void StartSuiteCluster(const LocalCluster::Options& options);
  static void TearDownTestSuite();
  void SetUp() override;
  static LocalCluster& cluster() { return *cluster_; }
  // `sbatch --parsable ARGS` on the cluster; the job id (a failed submission fails the test).
  static std::string Submit(const std::string& args);

 private:
  static LocalCluster* cluster_;
  static std::string start_error_;
  static bool unavailable_;
};

}  // namespace elastic::testing
