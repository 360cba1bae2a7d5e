// A cycle's Slurm writes, run on the Slurm worker thread, each logged with Slurm's answer.
#include "scheduler/daemon/cycle_writes.h"

#include <exception>

#include "scheduler/daemon/checkpoint_cleanup.h"
#include "scheduler/daemon/log.h"
#include "scheduler/slurm/background_calls.h"
#include "scheduler/slurm/slurm_client.h"

namespace elastic::daemon {

// Background placement's writes (policy/background_placement.h): the partition's node list,
// then the requeues, each logged with its reason.
void ApplyBackgroundPlan(const DaemonConfig& config,
                         const std::optional<std::vector<std::string>>& partition_nodes,
                         const std::vector<policy::GiveWay>& give_ways) {
  if (partition_nodes) {
    std::string error = slurm::SetPartitionNodes(config.background_partition, *partition_nodes);
    std::string list;
    for (const std::string& node : *partition_nodes) {
      list += (list.empty() ? "" : ",") + node;
    }
    if (error.empty()) {
      Log(LogLevel::kInfo, "background partition " + config.background_partition +
                               " nodes: " + (list.empty() ? "(none)" : list));
    } else {
      Log(LogLevel::kWarn, error);
    }
  }
  for (const policy::GiveWay& give_way : give_ways) {
    std::string error = slurm::RequeueJob(give_way.job_id);
    Log(error.empty() ? LogLevel::kInfo : LogLevel::kWarn,
        "background job " + std::to_string(give_way.job_id) + " gives way (requeued, " +
            policy::ToString(give_way.cause) + "): " + give_way.reason +
            (error.empty() ? "" : ": " + error));
  }
}

namespace {

// One job write's outcome: "job J <done> (<how>): <why>" at info, or "job J <not_done> (<how>):
// <why>: <Slurm's error>" as a warning.
void LogJobWrite(const std::string& error, std::uint32_t job_id, const std::string& done,
                 const std::string& not_done, const std::string& how, const std::string& why) {
  Log(error.empty() ? LogLevel::kInfo : LogLevel::kWarn,
      "job " + std::to_string(job_id) + " " + (error.empty() ? done : not_done) + " (" + how +
          "): " + why + (error.empty() ? "" : ": " + error));
}

}  // namespace

// Preemption's writes: requeue each best-effort job a guaranteed one needs the nodes of (its
// agents checkpoint at the step boundary on Slurm's SIGTERM; it resumes when it runs again).
void ApplyPreemptions(const std::vector<policy::Preemption>& preemptions) {
  for (const policy::Preemption& preemption : preemptions) {
    LogJobWrite(slurm::RequeueJob(preemption.job_id), preemption.job_id, "preempted",
                "not preempted", "requeue", preemption.reason);
  }
}

// Step 0's writes: each waiting elastic job's nice back to its submitter's own.
void ApplyNiceLifts(const std::vector<policy::NiceLift>& lifts) {
  for (const policy::NiceLift& lift : lifts) {
    LogJobWrite(slurm::SetNice(lift.job_id, lift.nice), lift.job_id, "nice lifted",
                "nice not lifted", "Nice=" + std::to_string(lift.nice), lift.reason);
  }
}

// Grows by requeue (regrow.h): requeue the jobs to grow (their agents checkpoint on Slurm's
// SIGTERM), start the ones requeued earlier on their new node count, and give requeued elastic
// jobs their own node range back.
void ApplyRegrows(const std::vector<std::uint32_t>& requeues,
                  const std::vector<std::pair<std::uint32_t, int>>& starts,
                  const std::vector<RangeRestore>& restores) {
  for (std::uint32_t job_id : requeues) {
    std::string error = slurm::RequeueJob(job_id);
    Log(error.empty() ? LogLevel::kInfo : LogLevel::kWarn,
        "job " + std::to_string(job_id) + (error.empty() ? " requeued to grow" : ": " + error));
  }
  for (const auto& [job_id, nodes] : starts) {
    std::string error = slurm::StartRequeuedJob(job_id, nodes);
    const std::string what =
        error.empty() ? " starts again on " + std::to_string(nodes) + " nodes" : ": " + error;
    Log(error.empty() ? LogLevel::kInfo : LogLevel::kWarn, "job " + std::to_string(job_id) + what);
  }
  for (const RangeRestore& restore : restores) {
    std::string error =
        slurm::RestoreNodeRange(restore.job_id, restore.min_nodes, restore.max_nodes);
    const std::string range =
        std::to_string(restore.min_nodes) + "-" + std::to_string(restore.max_nodes);
    Log(error.empty() ? LogLevel::kInfo : LogLevel::kWarn,
        "job " + std::to_string(restore.job_id) +
            (error.empty() ? " may start on " + range + " nodes again" : ": " + error));
  }
}

// A cycle's writes, on the Slurm worker: AdminComments, then, when cleanup is due (`live`: the
// jobs Slurm has not finished), finished jobs' checkpoint directories. Logs what failed.
void WriteCycleResults(const DaemonConfig& config,
                       const std::vector<std::pair<std::uint32_t, std::string>>& comments,
                       const std::optional<std::set<std::uint32_t>>& live, std::int64_t now) {
  try {
    for (const auto& [job_id, text] : comments) {
      std::string error = slurm::SetAdminComment(job_id, text);
      if (!error.empty()) Log(LogLevel::kWarn, "job " + std::to_string(job_id) + ": " + error);
    }
    if (!live) return;
    CleanupReport report =
        CleanFinishedCheckpoints(config.checkpoint_base, *live, now, *config.checkpoint_retention);
    for (const std::string& path : report.removed) Log(LogLevel::kInfo, "removed " + path);
    for (const std::string& error : report.errors) Log(LogLevel::kWarn, "cleanup: " + error);
  } catch (const std::exception& e) {
    Log(LogLevel::kWarn, std::string("cycle writes: ") + e.what());
  }
}

}  // namespace elastic::daemon
