// slurm_update_partition and slurm_requeue for background placement, preemption and grows by
// requeue; inputs are the admin's partition name and Slurm's own node names and job ids, never a
// user's text.
#include "scheduler/slurm/background_calls.h"

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

namespace elastic::slurm {
namespace {

std::string Failed(const std::string& what) {
  const int code = slurm_get_errno();
  return "slurm: " + what + " failed: " + slurm_strerror(code) + " (" + std::to_string(code) + ")";
}

}  // namespace

std::string SetPartitionNodes(const std::string& partition, const std::vector<std::string>& nodes) {
  std::string list;
  for (const std::string& node : nodes) list += (list.empty() ? "" : ",") + node;
  update_part_msg_t msg;
  slurm_init_part_desc_msg(&msg);
  // slurm_update_partition only reads the message; the strings stay ours.
  msg.name = const_cast<char*>(partition.c_str());
  msg.nodes = const_cast<char*>(list.c_str());
  if (slurm_update_partition(&msg) != SLURM_SUCCESS) {
    return Failed("slurm_update_partition PartitionName=" + partition + " Nodes=" + list);
  }
  return {};
}

std::string RequeueJob(std::uint32_t job_id) {
  if (slurm_requeue(job_id, 0) != SLURM_SUCCESS) {
    return Failed("slurm_requeue of job " + std::to_string(job_id));
  }
  return {};
}

}  // namespace elastic::slurm
