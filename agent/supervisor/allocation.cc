// Shrink/grow through Slurm's own commands, and the allocation lookup through libslurm.
#include "agent/supervisor/allocation.h"

extern "C" {
#include <slurm/slurm.h>
}
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <regex>
#include <stdexcept>
#include <system_error>

#include "agent/supervisor/spawn.h"
#include "protocol/node_bounds.h"

namespace elastic::agent {
namespace {

struct CommandResult {
  int status = -1;
  std::string output;  // stdout and stderr together
};

CommandResult RunCommand(const std::vector<std::string>& argv) {
  CommandResult result;
  SpawnOptions options;
  options.merge_stderr = true;
  // scontrol writes slurm_job_<id>_resize.{sh,csh} into the cwd when it sees it runs inside
  // the job; we read the new allocation from Slurm instead, so leave no files behind.
  if (argv[0] == "scontrol") options.unset_env = {"SLURM_JOB_ID", "SLURM_JOBID"};
  Spawned child;
  try {
    child = Spawn(argv, options);
  } catch (const std::system_error& e) {
    result.output = e.what();
    return result;
  }
  std::array<char, 4096> buffer;
  ssize_t n;
  while ((n = ::read(child.out_fd, buffer.data(), buffer.size())) > 0) {
    result.output.append(buffer.data(), static_cast<std::size_t>(n));
  }
  ::close(child.out_fd);
  int status = 0;
  if (::waitpid(child.pid, &status, 0) == child.pid) {
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  return result;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

std::string Failed(const std::vector<std::string>& argv, const CommandResult& r) {
  std::string command;
  for (const std::string& a : argv) command += (command.empty() ? "" : " ") + a;
  std::string output = r.output;
  while (!output.empty() && output.back() == '\n') output.pop_back();
  return command + " exited " + std::to_string(r.status) + ": " + output;
}

std::string Check(const std::vector<std::string>& argv) {
  CommandResult r = RunCommand(argv);
  return r.status == 0 ? "" : Failed(argv, r);
}

}  // namespace

AllocationView LookupAllocation(std::uint32_t job_id) {
  resource_allocation_response_msg_t* resp = nullptr;
  if (slurm_allocation_lookup(job_id, &resp) != SLURM_SUCCESS || !resp) {
    throw std::runtime_error("slurm_allocation_lookup(" + std::to_string(job_id) +
                             "): " + slurm_strerror(slurm_get_errno()));
  }
  AllocationView view;
  view.node_list = resp->node_list ? resp->node_list : "";
  view.nodes = static_cast<int>(resp->node_cnt);
  for (std::uint32_t i = 0; i < resp->num_cpu_groups; ++i) {
    view.cpus_per_node += (i ? "," : "") + std::to_string(resp->cpus_per_node[i]);
    if (resp->cpu_count_reps[i] > 1) {
      view.cpus_per_node += "(x" + std::to_string(resp->cpu_count_reps[i]) + ")";
    }
  }
  slurm_free_resource_allocation_response_msg(resp);
  return view;
}

int JobMaxNodes(std::uint32_t job_id) {
  job_info_msg_t* msg = nullptr;
  if (slurm_load_job(&msg, job_id, SHOW_DETAIL) != SLURM_SUCCESS || !msg) {
    throw std::runtime_error("slurm_load_job(" + std::to_string(job_id) +
                             "): " + slurm_strerror(slurm_get_errno()));
  }
  int max_nodes = 0;
  if (msg->record_count > 0) {
    const slurm_job_info_t& job = msg->job_array[0];
    // Slurm forgets a running job's MAX; job_submit.lua's AdminComment record keeps it. Without
    // that record the job never grows past what it holds now.
    const std::optional<daemon::NodeBounds> bounds =
        daemon::ParseNodeBounds(job.admin_comment ? job.admin_comment : "");
    max_nodes = bounds ? bounds->max_nodes : static_cast<int>(job.num_nodes);
  }
  slurm_free_job_info_msg(msg);
  if (max_nodes < 1) {
    throw std::runtime_error("slurm_load_job(" + std::to_string(job_id) + "): no such job");
  }
  return max_nodes;
}

void ExportAllocation(const AllocationView& view) {
  const std::string nodes = std::to_string(view.nodes);
  for (const char* name : {"SLURM_JOB_NODELIST", "SLURM_NODELIST"}) {
    ::setenv(name, view.node_list.c_str(), 1);
  }
  for (const char* name : {"SLURM_JOB_NUM_NODES", "SLURM_NNODES"}) ::setenv(name, nodes.c_str(), 1);
  ::setenv("SLURM_JOB_CPUS_PER_NODE", view.cpus_per_node.c_str(), 1);
  ::setenv("SLURM_TASKS_PER_NODE", view.cpus_per_node.c_str(), 1);
  for (const char* name : {"SLURM_NTASKS", "SLURM_NPROCS"}) ::unsetenv(name);
}

std::string ShrinkTo(std::uint32_t job_id, const std::vector<std::string>& keep) {
  // Outside the job's working directory: scontrol drops slurm_job_<id>_resize.{sh,csh} there.
  return Check({"scontrol", "update", "JobId=" + std::to_string(job_id), "NodeList=" + Join(keep)});
}

std::string GrowBy(std::uint32_t job_id, const std::vector<std::string>& add, int wait_s) {
  const std::string job = std::to_string(job_id);
  // --exclusive: whole nodes (CR_Core would otherwise let it share). --immediate: a grow that
  // cannot happen now fails instead of queueing behind the jobs it must not delay.
  std::vector<std::string> salloc = {"salloc", "--no-shell", "--exclusive",
                                     "-N", std::to_string(add.size()), "-w", Join(add),
                                     "--immediate=" + std::to_string(wait_s),
                                     "-J", "elastic-expand-" + job, "--dependency=expand:" + job};
  CommandResult r = RunCommand(salloc);
  std::smatch granted;  // salloc in Slurm 22.05 has no --parsable
  static const std::regex kGranted("Granted job allocation ([0-9]+)");
  if (r.status != 0 || !std::regex_search(r.output, granted, kGranted)) return Failed(salloc, r);
  const std::string expansion = granted[1];
  std::string error = Check({"scontrol", "update", "JobId=" + expansion, "NumNodes=0"});
  RunCommand({"scancel", expansion});  // also cleans up after a failed merge
  if (error.empty()) error = Check({"scontrol", "update", "JobId=" + job, "NumNodes=ALL"});
  return error;
}

std::string SlurmMungeSocket() {
  slurm_conf_t* conf = nullptr;
  if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS || !conf) return "";
  std::string info = conf->authinfo ? conf->authinfo : "";
  slurm_free_ctl_conf(conf);
  static const std::regex kSocket("(^|,)socket=([^,]+)");
  std::smatch match;
  return std::regex_search(info, match, kSocket) ? match[2].str() : "";
}

}  // namespace elastic::agent
