// ResizeCycle: the state the steps of a resize decision share (see resize_cycle.h).
#include "scheduler/policy/resize_cycle.h"

#include <algorithm>
#include <utility>

namespace elastic::policy {
namespace {

// Flags by NodeTable index for the names the table holds.
std::vector<bool> Flags(const NodeTable& table, const std::vector<std::string>& names,
                        std::vector<bool> flags) {
  for (const std::string& n : names) {
    const int i = table.Find(n);
    if (i >= 0) flags[i] = true;
  }
  return flags;
}

std::map<std::string, PartitionPool> Pools(const SlurmView& view, const NodeTable& table,
                                           const std::vector<ElasticJob>& jobs,
                                           const ResizeDecisionOptions& options) {
  const std::vector<bool> none(static_cast<std::size_t>(table.size()), false);
  std::vector<bool> reserved = none, planned = none, releasing = none, adding = none;
  for (const SlurmReservation& r : view.reservations) {
    if (r.start_time <= view.now + options.reservation_horizon_s && r.end_time > view.now) {
      reserved = Flags(table, r.nodes, std::move(reserved));
    }
  }
  for (const SlurmJob& job : view.jobs) {
    if (job.state == SlurmJobState::kPending) {
      planned = Flags(table, job.sched_nodes, std::move(planned));
    }
  }
  for (const ElasticJob& job : jobs) {
    adding = Flags(table, job.adding, std::move(adding));
    releasing = Flags(table, job.releasing, std::move(releasing));
  }
  std::map<std::string, PartitionPool> pools;
  const std::string* last_partition = nullptr;  // nodes come in runs of one partition
  PartitionPool* last_pool = nullptr;
  for (std::size_t k = 0; k < view.nodes.size(); ++k) {
    const SlurmNode& node = view.nodes[k];
    const int i = table.OfViewNode(k);
    for (const std::string& partition : node.partitions) {
      if (!last_partition || *last_partition != partition) {
        last_partition = &partition;
        last_pool = &pools[partition];
      }
      PartitionPool& pool = *last_pool;
      if (pool.no_grow.empty()) pool.no_grow = none;
      // A reserved idle node serves only its reservation's jobs: neither growth nor (in this
      // model) an arbitrary waiting job may count on it.
      if (reserved[i] || adding[i]) {
        // nothing: kept for the reservation, or already promised to a growing elastic job
      } else if (node.idle()) {
        pool.idle.insert(i);
      } else if (releasing[i]) {
        pool.releasing.insert(i);
      }
      if (reserved[i] || planned[i]) pool.no_grow[i] = true;
    }
  }
  return pools;
}

}  // namespace

bool Holds(const NodeList& nodes, int node) {
  return std::binary_search(nodes.begin(), nodes.end(), node);
}

ResizeCycle::ResizeCycle(const SlurmView& view, const std::vector<ElasticJob>& jobs,
                         const ResizeDecisionOptions& options)
    : view(view), options(options), nodes(view, options.node_types),
      pools(Pools(view, nodes, jobs, options)) {
  std::vector<std::pair<std::uint32_t, const SlurmJob*>> by_id;  // sorted: looked up by id
  by_id.reserve(view.jobs.size());
  for (const SlurmJob& job : view.jobs) by_id.emplace_back(job.job_id, &job);
  // A job id listed twice: its last entry, as a map assigned in list order keeps.
  std::stable_sort(by_id.begin(), by_id.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  candidates.reserve(jobs.size());
  for (const ElasticJob& job : jobs) {
    auto it =
        std::upper_bound(by_id.begin(), by_id.end(), job.job_id,
                         [](std::uint32_t id, const auto& entry) { return id < entry.first; });
    if (it == by_id.begin() || (--it)->first != job.job_id ||
        it->second->state != SlurmJobState::kRunning) {
      continue;
    }
    Candidate c;
    c.job = &job;
    c.slurm = it->second;
    c.nodes = nodes.FindAll(it->second->nodes);  // a running job's nodes are all in the table
    c.original = c.nodes;
    c.batch_host = nodes.Find(it->second->batch_host);
    candidates.push_back(std::move(c));
  }
}

NodeSize ResizeCycle::SizeOf(const NodeList& list) const {
  NodeSize size{static_cast<int>(list.size()), 0};
  for (int n : list) size.devices += nodes.Devices(n);
  return size;
}

std::vector<Candidate*> ResizeCycle::InPartition(const std::string& partition, bool include_busy) {
  std::vector<Candidate*> out;
  for (Candidate& c : candidates) {
    if (c.preempted || c.slurm->partition != partition) continue;
    if (include_busy || !c.job->busy) out.push_back(&c);
  }
  return out;
}

void ResizeCycle::Claim(PartitionPool& pool, const NodeList& list) {
  for (int n : list) {
    pool.idle.erase(n);
    pool.releasing.erase(n);
    pool.no_grow[n] = true;
  }
}

double ResizeCycle::Speedup(int ests, int devices, int nodes) const {
  constexpr int kLimit = 1 << 20;  // each packs into 20 bits; larger ones are not memoised
  auto fits = [](int v) { return v >= 0 && v < kLimit; };
  if (!fits(ests) || !fits(devices) || !fits(nodes)) {
    return DeviceSpeedup(ests, devices, nodes, options.comm_ratio);
  }
  const std::uint64_t key = (static_cast<std::uint64_t>(ests) << 40) |
                            (static_cast<std::uint64_t>(devices) << 20) |
                            static_cast<std::uint64_t>(nodes);
  auto [it, fresh] = speedups_.try_emplace(key, 0.0);
  if (fresh) it->second = DeviceSpeedup(ests, devices, nodes, options.comm_ratio);
  return it->second;
}

double ResizeCycle::Gain(const Candidate& c, NodeSize from, NodeSize to) const {
  return (Speedup(c.job->ests, to.devices, to.nodes) -
          Speedup(c.job->ests, from.devices, from.nodes)) /
         (to.nodes - from.nodes);
}

int ReleasableCount(const Candidate& c) {
  const int size = static_cast<int>(c.nodes.size());
  const int surplus = size - c.job->min_nodes;
  const int others = size - (c.batch_host >= 0 && Holds(c.nodes, c.batch_host) ? 1 : 0);
  return std::max(std::min(surplus, others), 0);
}

}  // namespace elastic::policy
