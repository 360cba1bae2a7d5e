// ForegroundJobs / InBackgroundPartition: the registry's side of background placement.
#include "scheduler/daemon/background_cycle.h"

namespace elastic::daemon {
namespace {

const policy::SlurmJob* FindJob(const policy::SlurmView& view, std::uint32_t job_id) {
  for (const policy::SlurmJob& job : view.jobs) {
    if (job.job_id == job_id) return &job;
  }
  return nullptr;
}

}  // namespace

std::vector<policy::ForegroundJob> ForegroundJobs(const DaemonState& state,
                                                  const policy::SlurmView& view,
                                                  const policy::BackgroundOptions& options) {
  std::vector<policy::ForegroundJob> fg;
  if (options.partition.empty()) return fg;
  for (const JobRecord& job : state.jobs) {
    const policy::SlurmJob* slurm = FindJob(view, job.job_id);
    if (slurm == nullptr || slurm->state != policy::SlurmJobState::kRunning) continue;
    if (slurm->partition == options.partition || job.sla_class == "background") continue;
    policy::ForegroundJob f;
    f.job_id = job.job_id;
    f.nodes = slurm->nodes;  // Slurm is the truth about what the job holds
    if (job.order && !job.order->grow) f.leaving = job.order->changed_nodes;
    fg.push_back(std::move(f));
  }
  return fg;
}

bool InBackgroundPartition(const policy::SlurmView& view, std::uint32_t job_id,
                           const policy::BackgroundOptions& options) {
  if (options.partition.empty()) return false;
  const policy::SlurmJob* slurm = FindJob(view, job_id);
  return slurm != nullptr && slurm->partition == options.partition;
}

policy::SlurmView WithoutPendingBackground(const policy::SlurmView& view,
                                           const policy::BackgroundOptions& options) {
  policy::SlurmView filtered = view;
  std::erase_if(filtered.jobs, [&](const policy::SlurmJob& job) {
    return job.state == policy::SlurmJobState::kPending && job.partition == options.partition;
  });
  return filtered;
}

}  // namespace elastic::daemon
