// The RPCs behind ReadSlurmView, SetAdminComment and SlurmUserId; every response is owned by a
// unique_ptr with its libslurm free function, so no path leaks one.
#include "scheduler/slurm/slurm_client.h"

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <mutex>

#include "scheduler/slurm/slurm_records.h"

namespace elastic::slurm {
namespace {

template <typename T, void (*Free)(T*)>
struct Freer {
  void operator()(T* p) const {
    if (p != nullptr) Free(p);
  }
};
using JobsMsg = std::unique_ptr<job_info_msg_t, Freer<job_info_msg_t, slurm_free_job_info_msg>>;
using NodesMsg = std::unique_ptr<node_info_msg_t, Freer<node_info_msg_t, slurm_free_node_info_msg>>;
using ReservationsMsg =
    std::unique_ptr<reserve_info_msg_t, Freer<reserve_info_msg_t, slurm_free_reservation_info_msg>>;
using PartitionsMsg = std::unique_ptr<partition_info_msg_t,
                                      Freer<partition_info_msg_t, slurm_free_partition_info_msg>>;
using ConfMsg = std::unique_ptr<slurm_conf_t, Freer<slurm_conf_t, slurm_free_ctl_conf>>;

// Where libslurm will look for slurm.conf: $SLURM_CONF, else Debian's default or the copy
// slurmd keeps in configless mode.
std::string FindSlurmConf() {
  if (const char* env = std::getenv("SLURM_CONF"); env != nullptr && *env != '\0') {
    return access(env, R_OK) == 0 ? env : "";
  }
  for (const char* path : {"/etc/slurm/slurm.conf", "/run/slurm/conf/slurm.conf"}) {
    if (access(path, R_OK) == 0) return path;
  }
  return "";
}

// libslurm 22.05 requires slurm_init before any other call; it reads slurm.conf once. Without a
// readable file slurm_init retries for 60 s and then exits the process (fatal), so that case is
// turned into an error first. A file that exists but does not parse still ends in fatal.
void EnsureInitialized() {
  static std::mutex mutex;
  static bool initialized = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (initialized) return;
  if (FindSlurmConf().empty()) {
    const char* env = std::getenv("SLURM_CONF");
    throw SlurmError(std::string("slurm: no readable slurm.conf (SLURM_CONF=") +
                     (env != nullptr ? env : "unset") +
                     ", /etc/slurm/slurm.conf, /run/slurm/conf/slurm.conf)");
  }
  slurm_init(nullptr);
  initialized = true;
}

std::string LastError(const char* call) {
  int code = slurm_get_errno();
  return std::string("slurm: ") + call + " failed: " + slurm_strerror(code) + " (" +
         std::to_string(code) + ")";
}

std::vector<policy::SlurmNode> ReadNodes() {
  node_info_msg_t* raw = nullptr;
  if (slurm_load_node(0, &raw, SHOW_ALL) != SLURM_SUCCESS) {
    throw SlurmError(LastError("slurm_load_node"));
  }
  NodesMsg msg(raw);
  partition_info_msg_t* raw_partitions = nullptr;
  if (slurm_load_partitions(0, &raw_partitions, SHOW_ALL) != SLURM_SUCCESS) {
    throw SlurmError(LastError("slurm_load_partitions"));
  }
  PartitionsMsg partitions(raw_partitions);
  // slurmctld does not send a node's partitions; clients fill them in from the partition table.
  slurm_populate_node_partitions(msg.get(), partitions.get());
  std::vector<policy::SlurmNode> nodes;
  for (std::uint32_t i = 0; i < msg->record_count; ++i) {
    const node_info_t& node = msg->node_array[i];
    if (node.name == nullptr) continue;  // a hidden or future slot
    std::uint16_t alloc_cpus = 0;
    // The allocated CPU count lives in the select plugin's data, as sinfo/scontrol read it.
    slurm_get_select_nodeinfo(node.select_nodeinfo, SELECT_NODEDATA_SUBCNT, NODE_STATE_ALLOCATED,
                              &alloc_cpus);
    nodes.push_back(ToNode(node, alloc_cpus));
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return nodes;
}

std::vector<policy::SlurmJob> ReadJobs() {
  job_info_msg_t* raw = nullptr;
  if (slurm_load_jobs(0, &raw, SHOW_ALL | SHOW_DETAIL) != SLURM_SUCCESS) {
    throw SlurmError(LastError("slurm_load_jobs"));
  }
  JobsMsg msg(raw);
  std::vector<policy::SlurmJob> jobs;
  jobs.reserve(msg->record_count);
  for (std::uint32_t i = 0; i < msg->record_count; ++i) jobs.push_back(ToJob(msg->job_array[i]));
  std::sort(jobs.begin(), jobs.end(),
            [](const auto& a, const auto& b) { return a.job_id < b.job_id; });
  return jobs;
}

std::vector<policy::SlurmReservation> ReadReservations(
    const std::vector<policy::SlurmNode>& nodes) {
  reserve_info_msg_t* raw = nullptr;
  if (slurm_load_reservations(0, &raw) != SLURM_SUCCESS) {
    throw SlurmError(LastError("slurm_load_reservations"));
  }
  ReservationsMsg msg(raw);
  std::vector<std::string> all_nodes;
  for (const auto& node : nodes) all_nodes.push_back(node.name);
  std::vector<policy::SlurmReservation> reservations;
  for (std::uint32_t i = 0; i < msg->record_count; ++i) {
    reservations.push_back(ToReservation(msg->reservation_array[i], all_nodes));
  }
  return reservations;
}

}  // namespace

policy::SlurmView ReadSlurmView() {
  EnsureInitialized();
  policy::SlurmView view;
  view.now = std::time(nullptr);
  view.nodes = ReadNodes();
  view.jobs = ReadJobs();
  view.reservations = ReadReservations(view.nodes);
  return view;
}

std::optional<policy::SlurmJob> ReadSlurmJob(std::uint32_t job_id) {
  EnsureInitialized();
  job_info_msg_t* raw = nullptr;
  if (slurm_load_job(&raw, job_id, SHOW_DETAIL) != SLURM_SUCCESS) {
    if (slurm_get_errno() == ESLURM_INVALID_JOB_ID) return std::nullopt;
    throw SlurmError(LastError("slurm_load_job"));
  }
  JobsMsg msg(raw);
  for (std::uint32_t i = 0; i < msg->record_count; ++i) {
    if (msg->job_array[i].job_id == job_id) return ToJob(msg->job_array[i]);
  }
  return std::nullopt;
}

namespace {

// elasticd's one slurm_update_job call (docs/security.md): `desc` comes initialised by Slurm with
// the job id and the fields of one of its writes set (SetAdminComment, StartRequeuedJob,
// RestoreNodeRange).
std::string UpdateJob(job_desc_msg_t& desc, const std::string& what) {
  try {
    EnsureInitialized();
  } catch (const SlurmError& e) {
    return e.what();
  }
  if (slurm_update_job(&desc) != SLURM_SUCCESS) {
    return LastError(
        ("slurm_update_job(JobId=" + std::to_string(desc.job_id) + " " + what + ")").c_str());
  }
  return "";
}

}  // namespace

std::string SetAdminComment(std::uint32_t job_id, const std::string& text) {
  job_desc_msg_t desc;
  slurm_init_job_desc_msg(&desc);
  desc.job_id = job_id;
  // slurm_update_job only reads the descriptor; the string stays ours.
  desc.admin_comment = const_cast<char*>(text.c_str());
  return UpdateJob(desc, "AdminComment");
}

std::string SetNice(std::uint32_t job_id, std::int64_t nice) {
  job_desc_msg_t desc;
  slurm_init_job_desc_msg(&desc);
  desc.job_id = job_id;
  desc.nice = static_cast<std::uint32_t>(NICE_OFFSET + nice);
  return UpdateJob(desc, "Nice=" + std::to_string(nice));
}

std::string StartRequeuedJob(std::uint32_t job_id, int nodes) {
  job_desc_msg_t desc;
  slurm_init_job_desc_msg(&desc);
  desc.job_id = job_id;
  desc.min_nodes = desc.max_nodes = static_cast<std::uint32_t>(nodes);
  desc.begin_time = std::time(nullptr);
  return UpdateJob(desc, "NumNodes=" + std::to_string(nodes) + " StartTime=now");
}

std::string RestoreNodeRange(std::uint32_t job_id, int min_nodes, int max_nodes) {
  job_desc_msg_t desc;
  slurm_init_job_desc_msg(&desc);
  desc.job_id = job_id;
  desc.min_nodes = static_cast<std::uint32_t>(min_nodes);
  desc.max_nodes = static_cast<std::uint32_t>(max_nodes);
  return UpdateJob(desc, "NumNodes=" + std::to_string(min_nodes) + "-" + std::to_string(max_nodes));
}

uid_t SlurmUserId() {
  EnsureInitialized();
  slurm_conf_t* raw = nullptr;
  if (slurm_load_ctl_conf(0, &raw) != SLURM_SUCCESS) {
    throw SlurmError(LastError("slurm_load_ctl_conf"));
  }
  ConfMsg conf(raw);
  return conf->slurm_user_id;
}

}  // namespace elastic::slurm
