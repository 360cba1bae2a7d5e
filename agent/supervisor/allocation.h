// The supervisor's hands on its own allocation (design.md §3 step 3): shrink with scontrol, grow
// with an expansion salloc merged into the job, and refresh the SLURM_* variables the next srun
// reads from Slurm's record (slurm_allocation_lookup, as scontrol's resize script would).
// Runs as the job's user; every command gets an argv (no shell). Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace elastic::agent {

struct AllocationView {
  std::string node_list;  // Slurm's compressed form, e.g. n[1-3]
  int nodes = 0;
  std::string cpus_per_node;  // SLURM_JOB_CPUS_PER_NODE form, e.g. 4(x3)
};

// Slurm's current record of `job_id`. Throws std::runtime_error with libslurm's reason.
AllocationView LookupAllocation(std::uint32_t job_id);

// The job's MAX nodes (sbatch -N MIN-MAX, from job_submit.lua's AdminComment record; its current
// size without one). Throws
// std::runtime_error with libslurm's reason.
int JobMaxNodes(std::uint32_t job_id);

// Exports the view as SLURM_JOB_NODELIST/NODELIST/JOB_NUM_NODES/NNODES/JOB_CPUS_PER_NODE and
// SLURM_TASKS_PER_NODE (mpirun needs it after a grow), dropping the old task counts.
void ExportAllocation(const AllocationView& view);

// `scontrol update JobId=J NodeList=<keep>`: the job keeps exactly `keep` (batch host included).
// Returns "" or what failed.
std::string ShrinkTo(std::uint32_t job_id, const std::vector<std::string>& keep);

// salloc --no-shell -w <add> --dependency=expand:J, move its nodes into J, cancel it, and
// `NumNodes=ALL`. Gives up after `wait_s` if the nodes are not granted. Returns "" or why not.
std::string GrowBy(std::uint32_t job_id, const std::vector<std::string>& add, int wait_s);

// The MUNGE socket Slurm itself uses (AuthInfo=socket=… in slurm.conf), so elasticd requests
// are sealed by the same munged; "" for libmunge's default.
std::string SlurmMungeSocket();

}  // namespace elastic::agent
