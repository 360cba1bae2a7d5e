// elasticd start-up (log, state directory and saved registry, credentials, socket, signals), its
// event loop (requests, and one Slurm cycle every cycle_interval); teardown always runs. Every
// Slurm RPC runs on the SlurmWorker's thread, so a slow slurmctld never stalls the socket.
#include "scheduler/daemon/daemon.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <sstream>

#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "scheduler/daemon/admins.h"
#include "protocol/credential.h"
#include "protocol/messages.h"
#include "protocol/protocol.h"
#include "scheduler/daemon/cycle_writes.h"
#include "scheduler/daemon/daemon_cycle.h"
#include "scheduler/daemon/daemon_state.h"
#include "scheduler/daemon/log.h"
#include "scheduler/daemon/log_throttle.h"
#include "scheduler/daemon/registry_store.h"
#include "scheduler/daemon/request_handler.h"
#include "scheduler/daemon/slurm_worker.h"
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
  options.decision.min_resize_interval_s =
      std::chrono::duration_cast<std::chrono::seconds>(config.min_resize_interval).count();
  options.decision.reconfig_penalty = config.reconfig_penalty;
  options.decision.resize_cost_s = std::chrono::duration<double>(config.resize_cost).count();
  // backfill = Slurm alone: observe and report, never resize. The others make room for waiting
  // jobs, then their Policy decides which elastic jobs grow or shrink (resize_decision.h).
  options.resize = config.policy != "backfill";
  options.policy = config.policy;
  options.decision.quotas = config.quotas;
  options.decision.preempt_best_effort = config.preemption;
  options.decision.preempt_for_rigid = config.preempt_for_rigid;
  options.decision.nice_lift = {config.elastic_nice, config.nice_lift_after};
  options.decision.node_types = config.node_types;
  options.background.partition = config.background_partition;
  options.background.max_per_node = config.background_max_per_node;
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

// At most this many requests wait for Slurm at once; more are refused on the spot rather than
// queued without bound while slurmctld is slow (each waiting one holds a connection).
constexpr std::size_t kMaxWaitingForSlurm = 64;

// Slurm's record of one job, for ownership checks on register. Runs on the Slurm worker.
std::optional<policy::SlurmJob> LookupJob(std::uint32_t job_id) {
  try {
    return slurm::ReadSlurmJob(job_id);
  } catch (const std::exception& e) {
    Log(LogLevel::kWarn, std::string("job lookup: ") + e.what());
  }
  return std::nullopt;
}

// The job whose Slurm record a request needs (register), fetched on the Slurm worker before
// HandleRequest runs. nullopt for every other request, and for a register without a valid
// job id (HandleRequest refuses that one without asking Slurm).
std::optional<std::uint32_t> JobToLookUp(const Authenticated& who) {
  if (!who.ok()) return std::nullopt;
  DecodedRequest decoded = DecodeRequest(who.payload);
  if (!decoded.request || decoded.request->op != Op::kRegister) return std::nullopt;
  try {
    return DecodeJobId(decoded.request->args);
  } catch (const DecodeError&) {
    return std::nullopt;
  }
}

// Refusals are what any client can cause at will: at most this many lines per source (a uid, or
// all unauthenticated clients together) a minute reach the log; the rest are counted and the
// count is reported with that source's next line.
constexpr int kRefusalLinesPerMinute = 20;

void LogRefusal(LogThrottle& refusals, const std::string& source, const std::string& message) {
  std::uint64_t suppressed = 0;
  if (refusals.Allow(source, NowUnix(), suppressed)) {
    Log(LogLevel::kWarn, WithSuppressed(message, suppressed));
  }
}

// One authenticated (or refused) request, answered on the event loop: handle, log, save.
std::string Answer(const DaemonConfig& config, DaemonState& state, LogThrottle& refusals,
                   const Authenticated& who, const JobLookup& lookup) {
  const std::uint64_t decided_before = state.decisions_total;
  std::string reply = HandleRequest(who, state, NowUnix(), lookup);
  LogDecisionsSince(state, decided_before);
  // Only a refusal starts with "error" (keys are sorted): no parse for the others.
  if (who.ok() && reply.rfind("{\"error\"", 0) == 0) {
    LogRefusal(refusals, "uid " + std::to_string(who.uid),
               "refused a request from uid " + std::to_string(who.uid) + ": " +
                   RefusalInLine(reply).value_or(reply));
  }
  SaveIfDirty(config, state);
  return reply;
}

// One cycle: read Slurm (worker), decide (event loop), write AdminComments and clean finished
// jobs' checkpoints (worker), save (event loop); then `done`, on the event loop.
void StartCycle(const DaemonConfig& config, DaemonState& state, SlurmWorker& worker,
                std::int64_t& last_cleanup, std::function<void()> done) {
  struct SlurmRead {
    policy::SlurmView view;
    std::string error;
  };
  auto read_slurm = [] {
    SlurmRead read;
    try {
      read.view = slurm::ReadSlurmView();
    } catch (const std::exception& e) {
      read.error = e.what();
    }
    return read;
  };
  worker.Submit(read_slurm, [&config, &state, &worker, &last_cleanup, done](SlurmRead read) {
    if (!read.error.empty()) {
      Log(LogLevel::kWarn, "cannot read Slurm's state, no decisions this cycle: " + read.error);
      done();
      return;
    }
    const std::uint64_t decided_before = state.decisions_total;
    CycleResult result = RunCycle(state, read.view, CycleOptionsFrom(config));
    LogDecisionsSince(state, decided_before);
    std::optional<std::set<std::uint32_t>> live;
    if (config.checkpoint_retention && read.view.now - last_cleanup >= 60) {
      last_cleanup = read.view.now;
      live = slurm::UnfinishedJobIds(read.view);
    }
    worker.Submit(
        [&config, comments = std::move(result.admin_comments), live = std::move(live),
         now = read.view.now, bg_nodes = std::move(result.background_partition_nodes),
         give_ways = std::move(result.background_give_way),
         preemptions = std::move(result.preemptions), nice_lifts = std::move(result.nice_lifts),
         regrow_requeues = std::move(result.regrow_requeues),
         regrow_starts = std::move(result.regrow_starts),
         range_restores = std::move(result.range_restores)] {
          try {
            ApplyPreemptions(preemptions);
            ApplyNiceLifts(nice_lifts);
            ApplyRegrows(regrow_requeues, regrow_starts, range_restores);
            ApplyBackgroundPlan(config, bg_nodes, give_ways);
          } catch (const std::exception& e) {
            Log(LogLevel::kWarn, std::string("background placement: ") + e.what());
          }
          WriteCycleResults(config, comments, live, now);
          return true;
        },
        [&config, &state, done](bool) {
          SaveIfDirty(config, state);  // once the AdminComments are written, as ever
          done();
        });
  });
}

void LoadSavedRegistry(const DaemonConfig& config, DaemonState& state) {
  if (LoadRegistry(config.state_dir, state)) {
    Log(LogLevel::kInfo, "registry restored: " + std::to_string(state.jobs.size()) +
                             " elastic job(s) from " + config.state_dir + "/registry.json");
  }
  const std::string warning = AddSlurmUser(state.admin_uids, [] { return slurm::SlurmUserId(); });
  if (!warning.empty()) Log(LogLevel::kWarn, warning);
}

// One request line: authenticated here; answered at once, or after the worker's Slurm lookup of
// the job a `register` names (at most kMaxWaitingForSlurm such requests wait; more are refused).
void OnRequestLine(const DaemonConfig& config, DaemonState& state, CredentialCodec& codec,
                   SlurmWorker& worker, LogThrottle& refusals, const std::string& line,
                   SocketServer::Reply reply) {
  Authenticated who = codec.Decode(line);
  if (!who.ok()) LogRefusal(refusals, "unauthenticated", "rejected request: " + who.error);
  std::optional<std::uint32_t> job_id = JobToLookUp(who);
  if (!job_id) {
    reply(Answer(config, state, refusals, who, {}));
    return;
  }
  if (worker.pending() >= kMaxWaitingForSlurm) {
    const std::string busy = "elasticd is busy: " + std::to_string(worker.pending()) +
                             " requests are waiting for Slurm; retry later";
    LogRefusal(refusals, "uid " + std::to_string(who.uid),
               "refused a request from uid " + std::to_string(who.uid) + ": " + busy);
    reply(ErrorResponse(busy));
    return;
  }
  worker.Submit([id = *job_id] { return LookupJob(id); },
                [&config, &state, &refusals, who, reply](std::optional<policy::SlurmJob> job) {
                  reply(Answer(config, state, refusals, who,
                               [&job](std::uint32_t) { return job; }));
                });
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
    SlurmWorker worker(io);  // after io: joined before io goes away
    LogThrottle refusals(kRefusalLinesPerMinute, 60);
    SocketServer server(io, config.socket, [&](const std::string& line,
                                               SocketServer::Reply reply) {
      OnRequestLine(config, state, *codec, worker, refusals, line, std::move(reply));
    });
    server.Start();
    std::int64_t last_cleanup = 0;
    boost::asio::steady_timer timer(io);
    std::function<void()> cycle = [&] {
      StartCycle(config, state, worker, last_cleanup, [&] {
        timer.expires_after(config.cycle_interval);
        timer.async_wait([&](boost::system::error_code ec) {
          if (!ec) cycle();
        });
      });
    };
    cycle();
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

std::string FormatStatus(const StatusReply& reply) {
  std::ostringstream out;
  out << "elasticd " << reply.version << ": policy " << reply.policy << ", up "
      << reply.uptime_s << "s\n";
  if (reply.jobs.empty()) {
    out << "no elastic jobs\n";
  } else {
    char line[160];
    std::snprintf(line, sizeof line, "%-10s %-8s %-7s %-9s %-5s %-6s %-13s\n", "JOBID", "UID",
                  "NODES", "MIN-MAX", "GEN", "PLAN", "CLASS");
    out << line;
    for (const JobStatus& job : reply.jobs) {
      std::string range = std::to_string(job.min_nodes) + "-" + std::to_string(job.max_nodes);
      std::snprintf(line, sizeof line, "%-10u %-8u %-7d %-9s %-5llu %-6s %-13s\n", job.job_id,
                    static_cast<unsigned>(job.uid), static_cast<int>(job.node_list.size()),
                    range.c_str(), static_cast<unsigned long long>(job.generation),
                    job.plan.c_str(), job.sla_class.c_str());
      out << line;
    }
  }
  for (const Decision& d : reply.decisions) {
    out << "  " << d.unix_time << " job " << d.job_id << " " << d.action << ": " << d.reason
        << "\n";
  }
  return out.str();
}

}  // namespace elastic::daemon
