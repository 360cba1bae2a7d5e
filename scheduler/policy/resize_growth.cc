// ResizeGrowth: step 2 of the resize decision, by a Policy or the greedy rule (see
// resize_growth.h and resize_decision.h).
#include "scheduler/policy/resize_growth.h"

#include <algorithm>
#include <utility>

#include "scheduler/policy/live_policy.h"

namespace elastic::policy {

namespace {

// Why a running job on GPU nodes does not grow, "" if nothing here stops it: it holds fewer GPUs
// than its nodes have (not --exclusive), so it shares them with other jobs (cons_tres), and a
// whole-node grow would hand it nodes of which it runs ranks on only as many GPUs as it holds
// now. Nothing stops it when its GPU count is unknown or on CPU nodes.
std::string GrowBlockedReason(const SlurmJob& job, NodeSize size) {
  if (job.gpus < 0 || size.devices <= size.nodes) return "";
  if (job.exclusive || job.gpus >= size.devices) return "";
  return "holds " + std::to_string(job.gpus) + " of the " + std::to_string(size.devices) +
         " GPUs of its " + std::to_string(size.nodes) +
         " node(s): elasticd grows only jobs that hold every GPU of their nodes";
}

}  // namespace

bool GrowsViaRequeue(const SlurmJob& job) { return job.gpus > 0; }

// A requeued job gives its own nodes back before it starts again on more (docs/gpu.md): a job
// waiting in its partition that fits on those and the idle nodes could start there first, and the
// grown job would wait instead. Such a grow is held back.
std::string ResizeGrowth::RequeueGapReason(const Candidate& c, int idle) const {
  if (!c.slurm->requeue) {
    return "holds its GPUs as gres, so it grows only by a requeue, and it was submitted with "
           "--no-requeue";
  }
  auto it = smallest_waiting_.find(c.slurm->partition);
  if (it == smallest_waiting_.end()) return "";
  if (std::max(it->second->min_nodes, 1) > idle + static_cast<int>(c.nodes.size())) return "";
  return "holds its GPUs as gres, so it grows by a requeue, and waiting job " +
         std::to_string(it->second->job_id) + " could take its nodes meanwhile";
}

ResizeGrowth::ResizeGrowth(ResizeCycle& cycle, const Policy* policy)
    : cycle_(cycle),
      policy_(policy),
      granted_(static_cast<std::size_t>(cycle.nodes.size())),
      policed_(cycle.candidates.size()) {
  for (const SlurmJob& job : cycle.view.jobs) {
    if (!WaitsForNodes(job)) continue;
    const SlurmJob*& smallest = smallest_waiting_[job.partition];
    if (!smallest || std::max(job.min_nodes, 1) < std::max(smallest->min_nodes, 1)) {
      smallest = &job;
    }
  }
}

void ResizeGrowth::Run() {
  for (auto& [partition, pool] : cycle_.pools) {
    if (policy_) {
      DecideByPolicy(partition, pool);
    } else {
      Grow(partition, pool);
    }
  }
}

bool ResizeGrowth::MayGrow(const Candidate& c, int idle, std::string& why) const {
  why = GrowBlockedReason(*c.slurm, cycle_.SizeOf(c.nodes));
  if (why.empty() && GrowsViaRequeue(*c.slurm)) why = RequeueGapReason(c, idle);
  if (!why.empty()) return false;
  const ResizeDecisionOptions& options = cycle_.options;
  const std::int64_t since = cycle_.view.now - c.job->last_resize;
  if (c.job->last_resize > 0 && since < options.min_resize_interval_s) {
    why = "min resize interval: " + std::to_string(options.min_resize_interval_s - since) +
          " s left";
    return false;
  }
  // Rubick §5.3: (T - N*delta)/T >= threshold, T = time since start, N counts this resize.
  const double t = static_cast<double>(cycle_.view.now - c.slurm->start_time);
  const double n = c.job->resizes + 1;
  if (t <= 0 || (t - n * options.resize_cost_s) / t < options.reconfig_penalty) {
    why = "reconfiguration penalty: (T - N*delta)/T < " + std::to_string(options.reconfig_penalty);
    return false;
  }
  return true;
}

void ResizeGrowth::Grow(const std::string& partition, PartitionPool& pool) {
  std::vector<int> free;
  for (int n : pool.idle) {
    if (!pool.no_grow[n]) free.push_back(n);
  }
  std::vector<Candidate*> growers;
  for (Candidate* c : cycle_.InPartition(partition, false)) {
    if (c->nodes != c->original) continue;  // shrinking this cycle
    if (static_cast<int>(c->nodes.size()) >= c->job->max_nodes) continue;
    std::string why;
    if (MayGrow(*c, static_cast<int>(free.size()), why)) growers.push_back(c);
    else if (!free.empty()) cycle_.held.push_back({c->job->job_id, "grow held back: " + why});
  }
  // With every free node the same size, a job's gains do not depend on which free nodes come
  // next: each job is priced once and again only after it grew, not once per grant.
  const bool uniform = std::all_of(free.begin(), free.end(), [&](int n) {
    return cycle_.nodes.Devices(n) == cycle_.nodes.Devices(free.front());
  });
  std::vector<std::vector<double>> gains(growers.size());
  std::vector<bool> priced(growers.size(), false);
  std::size_t next = 0;
  while (next < free.size()) {
    // EasyScale §3.5: every job proposes each size it could reach; best gain per node wins
    // (the first job and size in this order on ties).
    Candidate* best = nullptr;
    std::size_t best_index = 0;
    int best_to = 0;
    double best_gain = 1e-9;
    const std::size_t left = free.size() - next;
    for (std::size_t g = 0; g < growers.size(); ++g) {
      if (!uniform || !priced[g]) PriceGrowth(*growers[g], free, next, gains[g]);
      priced[g] = true;
      const std::size_t sizes = std::min(gains[g].size(), left);
      for (std::size_t k = 1; k <= sizes; ++k) {
        if (gains[g][k - 1] > best_gain) {
          best = growers[g], best_index = g, best_gain = gains[g][k - 1];
          best_to = static_cast<int>(growers[g]->nodes.size() + k);
        }
      }
    }
    if (!best) break;
    while (static_cast<int>(best->nodes.size()) < best_to) {
      const int n = free[next++];
      auto at = std::lower_bound(best->nodes.begin(), best->nodes.end(), n);
      if (at == best->nodes.end() || *at != n) best->nodes.insert(at, n);
    }
    priced[best_index] = false;
    cycle_.reasons[best->job->job_id] =
        std::to_string(best->nodes.size() - best->original.size()) +
        " idle node(s) that no pending job's planned start needs";
  }
}

void ResizeGrowth::PriceGrowth(const Candidate& c, const std::vector<int>& free,
                               std::size_t next, std::vector<double>& gains) const {
  gains.clear();
  const NodeSize now = cycle_.SizeOf(c.nodes);
  const int limit =
      std::min<int>(c.job->max_nodes, now.nodes + static_cast<int>(free.size() - next));
  const double speed_now = cycle_.Speedup(c.job->ests, now.devices, now.nodes);
  NodeSize to = now;  // grows onto free[next], free[next + 1], ... in that order
  while (to.nodes < limit) {
    to.devices += cycle_.nodes.Devices(free[next + static_cast<std::size_t>(to.nodes - now.nodes)]);
    ++to.nodes;
    gains.push_back((cycle_.Speedup(c.job->ests, to.devices, to.nodes) - speed_now) /
                    (to.nodes - now.nodes));
  }
}

LiveJob ResizeGrowth::ToLiveJob(const Candidate& c, bool may_resize, LiveNodes& nodes) const {
  LiveJob job;
  job.job_id = c.job->job_id;
  job.nodes.reserve(c.nodes.size());
  for (int n : c.nodes) {
    const int k = nodes.Add(n);
    job.nodes.push_back(k);
    if (n == c.batch_host) job.batch_host = k;
  }
  std::sort(job.nodes.begin(), job.nodes.end());
  job.min_nodes = c.job->min_nodes;
  job.max_nodes = c.job->max_nodes;
  job.ests = c.job->ests;
  job.start_time = c.slurm->start_time;
  job.end_time = c.slurm->end_time;
  job.last_resize = c.job->last_resize;
  job.resizes = c.job->resizes;
  job.speed_curve = c.job->speed_curve;
  job.may_resize = may_resize;
  return job;
}

int ResizeGrowth::LiveNodes::Add(int n, bool free) {
  int& k = index[n];
  if (k < 0) {
    k = static_cast<int>(cycle.size());
    cycle.push_back(n);
    live.nodes.push_back(table.Node(n));
    live.free.push_back(free);
  }
  return k;
}

// The partition's candidates that take no part in step 1's shrinks and no policy has seen yet
// this cycle (a job in several partitions is decided once).
std::vector<Candidate*> ResizeGrowth::Policed(const std::string& partition) {
  std::vector<Candidate*> jobs;
  for (Candidate* c : cycle_.InPartition(partition, false)) {
    if (c->nodes != c->original) continue;  // shrinking for a waiting job
    const auto position = static_cast<std::size_t>(c - cycle_.candidates.data());
    if (policed_[position]) continue;  // decided in another partition
    policed_[position] = true;
    jobs.push_back(c);
  }
  return jobs;
}

// The partition's policed jobs, the nodes they hold and the idle nodes nobody claimed, planned or
// reserved, in that order (LivePartition). A node in several partitions is handed out once per
// cycle.
void ResizeGrowth::DecideByPolicy(const std::string& partition, PartitionPool& pool) {
  std::vector<int> free;
  for (int n : pool.idle) {
    if (!pool.no_grow[n] && !granted_[n]) free.push_back(n);
  }
  const std::vector<Candidate*> jobs = Policed(partition);  // by index into the live jobs
  std::size_t count = free.size();
  for (const Candidate* c : jobs) count += c->nodes.size();
  LiveNodes nodes(cycle_.nodes, count);
  nodes.live.now = cycle_.view.now;
  nodes.live.jobs.reserve(jobs.size());
  for (Candidate* c : jobs) {
    std::string why;
    const bool may_resize = MayGrow(*c, static_cast<int>(free.size()), why);
    const bool could_grow = static_cast<int>(c->nodes.size()) < c->job->max_nodes;
    if (!may_resize && could_grow && !free.empty()) {
      cycle_.held.push_back({c->job->job_id, "grow held back: " + why});
    }
    nodes.live.jobs.push_back(ToLiveJob(*c, may_resize, nodes));
  }
  for (int n : free) nodes.Add(n, true);
  const LiveOptions options = LiveOptionsFrom(cycle_.options);
  Apply(DecideLive(*policy_, nodes.live, options), jobs, nodes);
}

// The policy's node changes onto the candidates: their new node sets, the nodes they grow into
// marked granted, their reasons.
void ResizeGrowth::Apply(const std::vector<LiveChange>& changes,
                         const std::vector<Candidate*>& jobs, const LiveNodes& nodes) {
  std::vector<std::pair<std::uint32_t, Candidate*>> by_id;
  by_id.reserve(jobs.size());
  for (Candidate* c : jobs) by_id.emplace_back(c->job->job_id, c);
  std::sort(by_id.begin(), by_id.end());
  for (const LiveChange& change : changes) {
    auto it = std::lower_bound(by_id.begin(), by_id.end(),
                               std::make_pair(change.job_id, static_cast<Candidate*>(nullptr)));
    if (it == by_id.end() || it->first != change.job_id) continue;  // not a job handed in
    Candidate* c = it->second;
    NodeList target;
    target.reserve(change.target.size());
    for (int k : change.target) target.push_back(nodes.cycle[k]);
    std::sort(target.begin(), target.end());
    for (int n : target) {
      if (!Holds(c->nodes, n)) granted_[n] = true;
    }
    c->nodes = std::move(target);
    cycle_.reasons[change.job_id] = change.reason;
  }
}

}  // namespace elastic::policy
