// elasticd start-up (log, state directory and saved registry, credentials, socket, signals), its
// event loop (requests, and one Slurm cycle every cycle_interval); teardown always runs.
#include "scheduler/daemon/daemon.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <sstream>

#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include "scheduler/daemon/checkpoint_cleanup.h"
#include "scheduler/daemon/credential.h"
#include "scheduler/daemon/daemon_cycle.h"
#include "scheduler/daemon/daemon_state.h"
#include "scheduler/daemon/log.h"
#include "scheduler/daemon/registry_store.h"
#include "scheduler/daemon/request_handler.h"
#include "scheduler/daemon/socket_server.h"
#include "scheduler/slurm/slurm_client.h"
#include "scheduler/slurm/slurm_records.h"

#ifndef ELASTIC_VERSION
#error "ELASTIC_VERSION must be defined by the build"
#endif

namespace elastic::daemon {
namespace {

std::int64_t NowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch()).count();
}

void PrepareStateDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create state_dir " + dir + ": " + ec.message());
  ::chmod(dir.c_str(), 0700);  // holds job registry and decisions: daemon-only
}

// Forks; the parent waits on a pipe for the child's "listening" byte and exits with its verdict.
int DetachAfterStartup(int& ready_fd) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid > 0) {
    close(fds[1]);
    char verdict = 0;
    ssize_t n = read(fds[0], &verdict, 1);
    _exit(n == 1 && verdict == 'R' ? 0 : 1);
  }
  close(fds[0]);
  setsid();
  ready_fd = fds[1];
  return 0;
}

void SignalReady(int& ready_fd) {
  if (ready_fd < 0) return;
  char ready = 'R';
  if (write(ready_fd, &ready, 1) != 1) Log(LogLevel::kWarn, "could not notify the parent");
  close(ready_fd);
  ready_fd = -1;
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull >= 0) {
    dup2(devnull, STDIN_FILENO);
    dup2(devnull, STDOUT_FILENO);
    close(devnull);
  }
}

CycleOptions CycleOptionsFrom(const DaemonConfig& config) {
  CycleOptions options;
  options.planner.min_resize_interval_s =
      std::chrono::duration_cast<std::chrono::seconds>(config.min_resize_interval).count();
  options.planner.reconfig_penalty = config.reconfig_penalty;
  options.planner.resize_cost_s = std::chrono::duration<double>(config.resize_cost).count();
  // backfill = Slurm alone: observe and report, never resize. The others grow by EasyScale's
  // greedy rule (resize_planner.h); Rubick's live plan choice comes with its execution plans.
  options.resize = config.policy != "backfill";
  return options;
}

void SaveIfDirty(const DaemonConfig& config, DaemonState& state) {
  if (!state.dirty) return;
  try {
    SaveRegistry(config.state_dir, state);
    state.dirty = false;
  } catch (const std::exception& e) {
    Log(LogLevel::kError, std::string("cannot save the registry: ") + e.what());
  }
}

// Every decision recorded since the log counter stood at `before`, into the daemon's log.
void LogDecisionsSince(const DaemonState& state, std::uint64_t before) {
  const std::uint64_t fresh =
      std::min<std::uint64_t>(state.decisions_total - before, state.recent.size());
  for (auto it = state.recent.end() - static_cast<std::ptrdiff_t>(fresh);
       it != state.recent.end(); ++it) {
    Log(LogLevel::kInfo, "job " + std::to_string(it->job_id) + " " + it->action + ": " +
                             it->reason);
  }
}

// Slurm's record of one job, for ownership checks on register.
std::optional<policy::SlurmJob> LookupJob(std::uint32_t job_id) {
  try {
    return slurm::ReadSlurmJob(job_id);
  } catch (const std::exception& e) {
    Log(LogLevel::kWarn, std::string("job lookup: ") + e.what());
  }
  return std::nullopt;
}

// One cycle: read Slurm, decide, write AdminComments, save, clean finished jobs' checkpoints.
void Cycle(const DaemonConfig& config, DaemonState& state, std::int64_t& last_cleanup) {
  policy::SlurmView view;
  try {
    view = slurm::ReadSlurmView();
  } catch (const std::exception& e) {
    Log(LogLevel::kWarn, std::string("cannot read Slurm's state, no decisions this cycle: ") +
                             e.what());
    return;
  }
  const std::uint64_t decided_before = state.decisions_total;
  CycleResult result = RunCycle(state, view, CycleOptionsFrom(config));
  LogDecisionsSince(state, decided_before);
  for (const auto& [job_id, text] : result.admin_comments) {
    std::string error = slurm::SetAdminComment(job_id, text);
    if (!error.empty()) Log(LogLevel::kWarn, "job " + std::to_string(job_id) + ": " + error);
  }
  SaveIfDirty(config, state);
  if (config.checkpoint_retention && view.now - last_cleanup >= 60) {
    last_cleanup = view.now;
    CleanupReport report = CleanFinishedCheckpoints(config.checkpoint_base, slurm::UnfinishedJobIds(view),
                                                    view.now, *config.checkpoint_retention);
    for (const std::string& path : report.removed) Log(LogLevel::kInfo, "removed " + path);
    for (const std::string& error : report.errors) Log(LogLevel::kWarn, "cleanup: " + error);
  }
}

void LoadSavedRegistry(const DaemonConfig& config, DaemonState& state) {
  if (LoadRegistry(config.state_dir, state)) {
    Log(LogLevel::kInfo, "registry restored: " + std::to_string(state.jobs.size()) +
                             " elastic job(s) from " + config.state_dir + "/registry.json");
  }
  try {
    state.admin_uids.insert(slurm::SlurmUserId());
  } catch (const std::exception& e) {
    Log(LogLevel::kWarn, std::string("SlurmUser unknown, only root is admin: ") + e.what());
  }
}

}  // namespace

int RunDaemon(const DaemonConfig& config, bool foreground) {
  int ready_fd = -1;
  if (!foreground && DetachAfterStartup(ready_fd) != 0) {
    std::perror("elasticd: cannot detach");
    return 1;
  }
  if (!OpenLog(config.log_file, config.log_level)) {
    std::fprintf(stderr, "elasticd: cannot open log_file %s\n", config.log_file.c_str());
    return 1;
  }
  try {
    PrepareStateDir(config.state_dir);
    DaemonState state;
    state.version = ELASTIC_VERSION;
    state.policy = config.policy;
    state.started_unix = NowUnix();
    LoadSavedRegistry(config, state);
    auto codec = MakeMungeCodec(config.munge_socket);

    boost::asio::io_context io;
    SocketServer server(io, config.socket, [&](const std::string& line) {
      Authenticated who = codec->Decode(line);
      if (!who.ok()) Log(LogLevel::kWarn, "rejected request: " + who.error);
      const std::uint64_t decided_before = state.decisions_total;
      std::string reply = HandleRequest(who, state, NowUnix(), LookupJob);
      LogDecisionsSince(state, decided_before);
      if (who.ok() && reply.rfind("{\"error\"", 0) == 0) {
        const nlohmann::json refusal = nlohmann::json::parse(reply, nullptr, false);
        Log(LogLevel::kWarn, "refused a request from uid " + std::to_string(who.uid) + ": " +
                                 refusal.value("error", reply));
      }
      SaveIfDirty(config, state);
      return reply;
    });
    server.Start();
    std::int64_t last_cleanup = 0;
    boost::asio::steady_timer timer(io);
    std::function<void()> schedule = [&] {
      timer.expires_after(config.cycle_interval);
      timer.async_wait([&](boost::system::error_code ec) {
        if (ec) return;
        Cycle(config, state, last_cleanup);
        schedule();
      });
    };
    Cycle(config, state, last_cleanup);
    schedule();
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](boost::system::error_code ec, int signo) {
      if (!ec) Log(LogLevel::kInfo, "signal " + std::to_string(signo) + ": shutting down");
      io.stop();
    });
    Log(LogLevel::kInfo, "elasticd " ELASTIC_VERSION " listening on " + config.socket +
                             ", policy " + config.policy);
    SignalReady(ready_fd);
    io.run();
    Log(LogLevel::kInfo, "stopped");
    return 0;
  } catch (const std::exception& e) {
    Log(LogLevel::kError, e.what());
    // Start-up failures must reach whoever started us, not only the log file.
    if (!config.log_file.empty()) std::fprintf(stderr, "elasticd: %s\n", e.what());
    return 1;
  }
}

std::string FormatStatus(const nlohmann::json& reply) {
  std::ostringstream out;
  out << "elasticd " << reply.value("version", "?") << ": policy " << reply.value("policy", "?")
      << ", up " << reply.value("uptime_s", 0) << "s\n";
  const auto& jobs = reply.contains("jobs") ? reply["jobs"] : nlohmann::json::array();
  if (jobs.empty()) {
    out << "no elastic jobs\n";
  } else {
    char line[160];
    std::snprintf(line, sizeof line, "%-10s %-8s %-7s %-9s %-5s %-6s %-13s\n", "JOBID", "UID",
                  "NODES", "MIN-MAX", "GEN", "PLAN", "CLASS");
    out << line;
    for (const auto& job : jobs) {
      std::string range = std::to_string(job.value("min_nodes", 0)) + "-" +
                          std::to_string(job.value("max_nodes", 0));
      std::snprintf(line, sizeof line, "%-10u %-8u %-7d %-9s %-5llu %-6s %-13s\n",
                    job.value("job_id", 0u), job.value("uid", 0u), job.value("nodes", 0),
                    range.c_str(), static_cast<unsigned long long>(job.value("generation", 0ull)),
                    job.value("plan", "?").c_str(), job.value("class", "?").c_str());
      out << line;
    }
  }
  for (const auto& d : reply.value("decisions", nlohmann::json::array())) {
    out << "  " << d.value("time", 0) << " job " << d.value("job_id", 0) << " "
        << d.value("action", "?") << ": " << d.value("reason", "") << "\n";
  }
  return out.str();
}

}  // namespace elastic::daemon
