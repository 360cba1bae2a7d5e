// LocalCluster: drives contrib/local-cluster.sh and runs commands against the cluster.
#include "tests/common/local_cluster.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <thread>

#include "tests/common/time_scale.h"

namespace elastic::testing {

bool RunningUnderCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

LocalCluster::~LocalCluster() { Stop(); }

std::string LocalCluster::Start(const Options& options, bool& unavailable) {
  std::string script = std::string(ELASTIC_SOURCE_DIR) + "/contrib/local-cluster.sh";
  std::string command = ShellQuote(script) + " up --nodes " + std::to_string(options.nodes);
  if (!options.scheduler_parameters.empty()) {
    command += " --scheduler-parameters " + ShellQuote(options.scheduler_parameters);
  }
  if (options.with_plugin) {
    // Checkpoint directories go under a private base, not the system-wide default.
    char base[] = "/tmp/elastic-ckpt-XXXXXX";
    if (mkdtemp(base) == nullptr || chmod(base, 0755) != 0) {
      return "cannot create a checkpoint base under /tmp";
    }
    checkpoint_base_ = base;
    command += " --plugin " + ShellQuote(std::string(ELASTIC_BINARY_DIR) + "/spank/spank_elastic.so") +
               " --plugin-args " + ShellQuote("checkpoint_base=" + checkpoint_base_);
  }
  if (options.with_elasticd) {
    command += " --elasticd " +
               ShellQuote(std::string(ELASTIC_BINARY_DIR) + "/scheduler/daemon/elasticd");
    if (!options.resize_interval.empty()) {
      command += " --resize-interval " + ShellQuote(options.resize_interval);
    }
  }
  if (!options.background_partition.empty()) {
    command += " --background-partition " + ShellQuote(options.background_partition);
  }
  if (options.gpus_per_node > 0) {
    command += " --gpus-per-node " + std::to_string(options.gpus_per_node);
  }
  // stdout carries only the export lines; the script's progress goes to stderr (kept in a file
  // so a failure can be shown).
  std::string log = "/tmp/elastic-cluster-up-" + std::to_string(::getpid()) + ".log";
  CommandResult result = RunCommand(command + " 2>" + ShellQuote(log));
  CommandResult log_text = RunCommand("cat " + ShellQuote(log) + "; rm -f " + ShellQuote(log));
  if (result.exit_code != 0) {
    unavailable = result.exit_code == 2;
    return "local-cluster.sh up failed (exit " + std::to_string(result.exit_code) + "):\n" +
           log_text.output + result.output;
  }
  std::istringstream lines(result.output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("export ", 0) != 0) continue;
    auto eq = line.find('=');
    std::string name = line.substr(7, eq - 7);
    std::string value = line.substr(eq + 1);
    if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"')) {
      value = value.substr(1, value.size() - 2);
    }
    exports_[name] = value;
    env_prefix_ += "export " + name + "=" + ShellQuote(value) + "; ";
  }
  dir_ = Export("ELASTIC_CLUSTER_DIR");
  if (dir_.empty() || Export("SLURM_CONF").empty()) {
    return "local-cluster.sh up printed no SLURM_CONF/ELASTIC_CLUSTER_DIR exports:\n" +
           result.output;
  }
  return "";
}

void LocalCluster::Stop() {
  if (!checkpoint_base_.empty()) {
    RunCommand("rm -rf " + ShellQuote(checkpoint_base_));
    checkpoint_base_.clear();
  }
  if (dir_.empty()) return;
  RunCommand(ShellQuote(std::string(ELASTIC_SOURCE_DIR) + "/contrib/local-cluster.sh") +
             " down --dir " + ShellQuote(dir_));
  dir_.clear();
}

std::string LocalCluster::Export(const std::string& name) const {
  auto it = exports_.find(name);
  return it == exports_.end() ? "" : it->second;
}

CommandResult LocalCluster::Run(const std::string& command) const {
  return RunCommand(env_prefix_ + command);
}

std::string LocalCluster::WaitForJob(const std::string& job_id, int timeout_s) const {
  // sacct lags squeue by a moment, and a resized job has one record per size: poll until the
  // last record holds a final state. A requeued job's record (REQUEUED) is followed by the next
  // run's: not an end, though sacct may show it last while squeue has briefly no answer (seen
  // under load: preemption_integration_test read REQUEUED for a job that then completed).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(ScaledSeconds(timeout_s));
  while (std::chrono::steady_clock::now() < deadline) {
    CommandResult queued = Run("squeue -h -j " + job_id + " -o %T 2>/dev/null");
    if (queued.output.find_first_not_of(" \n") == std::string::npos) {
      std::string records = Run("sacct -n -X -P -j " + job_id + " -o State").output;
      while (!records.empty() && records.back() == '\n') records.pop_back();
      std::string last = records.substr(records.find_last_of('\n') + 1);
      if (!last.empty() && last != "PENDING" && last != "RUNNING" && last != "RESIZING" &&
          last != "COMPLETING" && last != "REQUEUED") {
        return last;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return "";
}

LocalCluster* ClusterSuite::cluster_ = nullptr;
std::string ClusterSuite::start_error_;
bool ClusterSuite::unavailable_ = false;

void ClusterSuite::SetUpTestSuite() { StartSuiteCluster({}); }

void ClusterSuite::StartSuiteCluster(const LocalCluster::Options& options) {
  cluster_ = new LocalCluster();
  start_error_ = cluster_->Start(options, unavailable_);
  // Seen once in many hundred starts on a loaded 2-core machine: slurmctld gone before writing
  // a log line. A second attempt (fresh directory and ports) tells that from a real fault.
  if (!start_error_.empty() && !unavailable_ &&
      start_error_.find("exited during start-up") != std::string::npos) {
    std::cerr << "local cluster failed to start; retrying once:\n" << start_error_;
    cluster_->Stop();
    start_error_ = cluster_->Start(options, unavailable_);
  }
}

std::string ClusterSuite::Submit(const std::string& args) {
  CommandResult r = cluster().Run("sbatch --parsable " + args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output.substr(0, r.output.find_first_of(";\n"));
}

void ClusterSuite::TearDownTestSuite() {
  delete cluster_;
  cluster_ = nullptr;
}

void ClusterSuite::SetUp() {
  if (start_error_.empty()) return;
  if (unavailable_ && !RunningUnderCi()) GTEST_SKIP() << start_error_;
  FAIL() << start_error_;
}

}  // namespace elastic::testing
