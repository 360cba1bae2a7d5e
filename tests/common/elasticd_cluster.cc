// ElasticdClusterSuite: AdminComment, elasticd's log and client, and its restart.
#include "tests/common/elasticd_cluster.h"

#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <thread>

#include "tests/common/agent_runs.h"
#include "tests/common/time_scale.h"

namespace elastic::testing {

void ElasticdClusterSuite::StartWithElasticd(LocalCluster::Options options) {
  options.with_elasticd = true;
  StartSuiteCluster(options);
}

std::string ElasticdClusterSuite::AdminComment(const std::string& job) {
  CommandResult r = cluster().Run("scontrol show job " + job);
  std::smatch m;
  return std::regex_search(r.output, m, std::regex("AdminComment=(\\S+)")) ? m[1].str() : "";
}

std::string ElasticdClusterSuite::WaitForNodes(const std::string& job, int nodes,
                                               const std::string& bounds, int timeout_s) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(ScaledSeconds(timeout_s));
  const std::string want = "nodes=" + std::to_string(nodes) + "/" + bounds + ",";
  while (std::chrono::steady_clock::now() < deadline) {
    std::string comment = AdminComment(job);
    if (comment.find(want) != std::string::npos) return comment;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return "";
}

void ElasticdClusterSuite::RestartElasticd() {
  const std::string dir = cluster().Export("ELASTIC_CLUSTER_DIR");
  CommandResult kill = cluster().Run("pid=$(awk '$1 == \"elasticd\" {print $2}' " + dir +
                                     "/pids | tail -n1); kill -KILL $pid || exit 1; "
                                     // gone, or a zombie (its socket closed either way)
                                     "while grep -qv '^[0-9]* ([^)]*) Z' /proc/$pid/stat "
                                     "2>/dev/null; do sleep 0.02; done");
  ASSERT_EQ(kill.exit_code, 0) << kill.output;
  // Started as local-cluster.sh starts it, and recorded in its pid list so that `down` (and a
  // later restart) finds this one.
  CommandResult start = cluster().Run(
      "setsid " ELASTIC_BINARY_DIR "/scheduler/daemon/elasticd --foreground --config " + dir +
      "/etc/elasticd.toml </dev/null >>" + dir + "/log/elasticd.out 2>&1 & echo \"elasticd $! "
      "elasticd\" >>" + dir + "/pids; for i in $(seq 100); do " + ElasticdCli() +
      " status >/dev/null 2>&1 && exit 0; sleep 0.1; done; exit 1");
  ASSERT_EQ(start.exit_code, 0) << start.output;
}

std::string ElasticdClusterSuite::ElasticdCli() {
  return ELASTIC_BINARY_DIR "/scheduler/daemon/elasticd --config " +
         cluster().Export("ELASTIC_CLUSTER_DIR") + "/etc/elasticd.toml";
}

std::string ElasticdClusterSuite::Log() {
  return RunCommand("cat " + cluster().Export("ELASTIC_CLUSTER_DIR") + "/log/elasticd.log")
      .output;
}

ElasticdClusterSuite::GrownJob ElasticdClusterSuite::GrowToAllFourNodes(
    const std::string& config, const std::string& out, const std::string& extra_args) {
  GrownJob grown;
  // Long enough for the first generation's first 5 reports, which a slower build takes longer
  // to reach (under ASan, 8 s gave 4).
  grown.hold = Submit("-N 3 --exclusive --wrap 'sleep " + std::to_string(ScaledSeconds(8)) + "'");
  grown.job = Submit("-N 1-4 --exclusive --elastic " + extra_args + " -o " + out + " --wrap " +
                     ShellQuote(AgentPath() + " run --config " + config));
  if (WaitForNodes(grown.job, 4, "1-4", 120).empty()) {
    ADD_FAILURE() << "job " << grown.job << " did not grow to 4 nodes\n"
                  << AdminComment(grown.job) << "\n"
                  << Log() << RunCommand("cat " + ShellQuote(out)).output;
    grown.job.clear();
  }
  return grown;
}

}  // namespace elastic::testing
