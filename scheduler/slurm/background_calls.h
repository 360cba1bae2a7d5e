// The two Slurm writes behind background placement (scheduler/policy/background_placement.h),
// preemption and grows by requeue (resize_decision.h): set the background partition's node list,
// and requeue a background job that must give way, a best-effort elastic job a guaranteed one
// preempts, or a job holding gres GPUs that elasticd grows.
// Thin libslurm shell, no decisions. Error model: "" on success, else a message naming the call,
// the partition or job, and slurm_strerror's reason. REQUIRES: libslurm initialised in this
// process (a ReadSlurmView succeeded; elasticd calls these only after a cycle's read). One
// thread at a time, like slurm_client.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace elastic::slurm {

// `scontrol update PartitionName=<partition> Nodes=<nodes>` (an empty list empties it; running
// jobs keep their nodes). Only root or SlurmUser may.
std::string SetPartitionNodes(const std::string& partition, const std::vector<std::string>& nodes);

// `scontrol requeue <job_id>`: the job is killed and queued again (Slurm holds it back for its
// requeue delay, reason BeginTime). Only root, SlurmUser or the job's owner may.
std::string RequeueJob(std::uint32_t job_id);

}  // namespace elastic::slurm
