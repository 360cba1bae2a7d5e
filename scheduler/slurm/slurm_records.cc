// libslurm records -> policy::SlurmView values, without any RPC.
#include "scheduler/slurm/slurm_records.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "protocol/node_bounds.h"
#include "scheduler/slurm/gres.h"

// Exported by libslurm but declared only in Slurm's internal slurm_protocol_defs.h; returns a
// static string (never freed).
extern "C" char* slurm_job_reason_string(enum job_state_reason inx);

namespace elastic::slurm {
namespace {

std::string Text(const char* value) { return value != nullptr ? value : ""; }

void SortNames(std::vector<std::string>& names) { std::sort(names.begin(), names.end()); }

// A running job's GPUs from its gres total ("gpu:2", "gpu:a100:2"; null: the job asked for no
// gres, so none), -1 when the text is malformed. Not the TRES string: that lists gres/gpu only
// where the site's AccountingStorageTRES tracks it.
int JobGpus(const char* gres_total) {
  if (gres_total == nullptr) return 0;
  return ParseGpuCount(gres_total).value_or(-1);
}

}  // namespace

bool NodeStateAvailable(std::uint32_t node_state, int cpus, int alloc_cpus) {
  constexpr std::uint32_t kUnusable =
      NODE_STATE_DRAIN | NODE_STATE_COMPLETING | NODE_STATE_NO_RESPOND | NODE_STATE_POWERED_DOWN |
      NODE_STATE_FAIL | NODE_STATE_POWERING_UP | NODE_STATE_MAINT | NODE_STATE_REBOOT_REQUESTED |
      NODE_STATE_POWERING_DOWN | NODE_STATE_REBOOT_ISSUED | NODE_STATE_INVALID_REG |
      NODE_STATE_POWER_DOWN | NODE_STATE_POWER_DRAIN;
  if ((node_state & kUnusable) != 0) return false;
  switch (node_state & NODE_STATE_BASE) {
    case NODE_STATE_IDLE:
    case NODE_STATE_MIXED:
      return true;
    // slurmctld sends ALLOCATED for partly used nodes; clients derive MIXED from the CPU counts.
    case NODE_STATE_ALLOCATED:
      return alloc_cpus < cpus;
    default:
      return false;  // DOWN, UNKNOWN, FUTURE, ERROR
  }
}

policy::SlurmJobState JobStateOf(std::uint32_t job_state) {
  // A running job being resized or finishing its epilog keeps its base state. COMPLETING is set
  // on ended jobs (base state COMPLETED, CANCELLED, ...) and on a requeued one whose last run is
  // still ending (PENDING): that one is not waiting yet, and Slurm rewrites its record (node
  // count, begin time) once the run has ended.
  switch (job_state & JOB_STATE_BASE) {
    case JOB_PENDING:
      if ((job_state & JOB_COMPLETING) != 0) return policy::SlurmJobState::kOther;
      return policy::SlurmJobState::kPending;
    case JOB_RUNNING:
      return policy::SlurmJobState::kRunning;
    default:
      return policy::SlurmJobState::kOther;
  }
}

bool JobFinished(std::uint32_t job_state) {
  std::uint32_t base = job_state & JOB_STATE_BASE;
  if (base == JOB_PENDING || base == JOB_RUNNING || base == JOB_SUSPENDED) return false;
  return (job_state & JOB_COMPLETING) == 0;
}

std::vector<std::string> ExpandHostlist(const char* hostlist) {
  std::vector<std::string> names;
  if (hostlist == nullptr || *hostlist == '\0') return names;
  hostlist_t list = slurm_hostlist_create(hostlist);
  if (list == nullptr) return names;
  while (char* host = slurm_hostlist_shift(list)) {
    names.emplace_back(host);
    std::free(host);  // hostlist_shift hands over a malloc'd copy
  }
  slurm_hostlist_destroy(list);
  return names;
}

std::vector<std::string> SplitCommaList(const char* list) {
  std::vector<std::string> items;
  if (list == nullptr) return items;
  std::string_view rest(list);
  while (!rest.empty()) {
    std::size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    if (!item.empty()) items.emplace_back(item);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return items;
}

std::string ReasonName(std::uint16_t state_reason) {
  return Text(slurm_job_reason_string(static_cast<enum job_state_reason>(state_reason)));
}

policy::SlurmNode ToNode(const node_info_t& node, int alloc_cpus) {
  policy::SlurmNode out;
  out.name = Text(node.name);
  out.partitions = SplitCommaList(node.partitions);
  out.cpus = node.cpus;
  out.alloc_cpus = alloc_cpus;
  out.devices = NodeDevices(node.gres);
  out.gpu_type = GpuType(Text(node.gres));
  out.features = SplitCommaList(node.features);
  out.available = NodeStateAvailable(node.node_state, node.cpus, alloc_cpus);
  return out;
}

std::int64_t TimeLimitSeconds(std::uint32_t minutes) {
  if (minutes == INFINITE || minutes == NO_VAL) return 0;
  return static_cast<std::int64_t>(minutes) * 60;
}

policy::SlurmJob ToJob(const slurm_job_info_t& job) {
  policy::SlurmJob out;
  out.job_id = job.job_id;
  out.uid = job.user_id;
  out.name = Text(job.name);
  std::vector<std::string> partitions = SplitCommaList(job.partition);
  if (!partitions.empty()) out.partition = partitions.front();
  out.state = JobStateOf(job.job_state);
  out.finished = JobFinished(job.job_state);
  out.priority = job.priority;
  out.admin_comment = Text(job.admin_comment);
  out.account = Text(job.account);
  out.sla_class = daemon::ParseRecordedClass(out.admin_comment).value_or(SlaClass::kBestEffort);
  out.elastic = daemon::ParseNodeBounds(out.admin_comment).has_value();
  out.exclusive = job.shared == JOB_SHARED_NONE;
  out.requeue = job.requeue != 0;
  out.restarts = job.restart_cnt;
  out.min_nodes = static_cast<int>(job.num_nodes);
  out.max_nodes = job.max_nodes == NO_VAL ? 0 : static_cast<int>(job.max_nodes);
  out.submit_time = job.submit_time;
  out.time_limit_s = TimeLimitSeconds(job.time_limit);
  out.nice = static_cast<std::int64_t>(job.nice) - NICE_OFFSET;
  if (out.state == policy::SlurmJobState::kRunning) {
    out.nodes = ExpandHostlist(job.nodes);
    SortNames(out.nodes);
    out.batch_host = Text(job.batch_host);
    out.min_nodes = static_cast<int>(out.nodes.size());
    out.start_time = job.start_time;
    out.end_time = job.time_limit == INFINITE || job.time_limit == NO_VAL ? 0 : job.end_time;
    out.gpus = JobGpus(job.gres_total);
  } else if (out.state == policy::SlurmJobState::kPending) {
    out.reason = ReasonName(job.state_reason);
    out.start_time = job.start_time;
    out.sched_nodes = ExpandHostlist(job.sched_nodes);
    SortNames(out.sched_nodes);
  }
  return out;
}

policy::SlurmReservation ToReservation(const reserve_info_t& reservation,
                                       const std::vector<std::string>& all_nodes) {
  policy::SlurmReservation out;
  out.name = Text(reservation.name);
  out.start_time = reservation.start_time;
  out.end_time = reservation.end_time;
  if (Text(reservation.node_list) == "ALL") {
    out.nodes = all_nodes;
  } else {
    out.nodes = ExpandHostlist(reservation.node_list);
  }
  SortNames(out.nodes);
  out.users = SplitCommaList(reservation.users);
  out.accounts = SplitCommaList(reservation.accounts);
  return out;
}

std::set<std::uint32_t> UnfinishedJobIds(const policy::SlurmView& view) {
  std::set<std::uint32_t> ids;
  for (const policy::SlurmJob& job : view.jobs) {
    if (!job.finished) ids.insert(job.job_id);
  }
  return ids;
}

}  // namespace elastic::slurm
