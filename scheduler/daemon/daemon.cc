// elasticd start-up: log, state directory, credentials, socket, signals, loop; teardown always runs.
#include "scheduler/daemon/daemon.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/signal_set.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "scheduler/daemon/credential.h"
#include "scheduler/daemon/daemon_state.h"
#include "scheduler/daemon/log.h"
#include "scheduler/daemon/request_handler.h"
#include "scheduler/daemon/socket_server.h"

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
    auto codec = MakeMungeCodec(config.munge_socket);

    boost::asio::io_context io;
    SocketServer server(io, config.socket, [&](const std::string& line) {
      Authenticated who = codec->Decode(line);
      if (!who.ok()) Log(LogLevel::kWarn, "rejected request: " + who.error);
      return HandleRequest(who, state, NowUnix());
    });
    server.Start();
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
