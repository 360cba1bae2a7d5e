// EasyScale intra-job proposals and greedy inter-job acceptance (see easyscale_policy.h).
#include "scheduler/policy/easyscale_policy.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <queue>
#include <string>
#include <tuple>

#include "scheduler/policy/placement.h"

namespace elastic::policy {
namespace {

struct Proposal {
  size_t job = 0;     // index into the working copy
  int version = 0;    // the job's plan version it was computed against
  std::string device_type;
  int devices = 0;    // increment
  double per_device = 0.0;
  double new_speedup = 0.0;
};

struct Working {
  JobState state;
  bool was_running = false;
  int version = 0;
  double speedup = 0.0;
  std::string reason;
};

// Heap order: highest speedup per device, then more devices, then earlier submit, then id.
struct ProposalLess {
  const std::vector<Working>* jobs;
  bool operator()(const Proposal& a, const Proposal& b) const {
    if (a.per_device != b.per_device) return a.per_device < b.per_device;
    if (a.devices != b.devices) return a.devices < b.devices;
    const JobState& ja = (*jobs)[a.job].state;
    const JobState& jb = (*jobs)[b.job].state;
    if (ja.submit_time_s != jb.submit_time_s) return ja.submit_time_s > jb.submit_time_s;
    return ja.id > jb.id;
  }
};

std::vector<int> Increments(const JobState& job, int current) {
  std::vector<int> increments;
  int lowest = std::max(1, job.min_devices - current);
  int highest = std::min(job.max_devices, std::max(job.profile.ests, 1)) - current;
  if (!job.elastic) {
    lowest = highest = current == 0 ? job.requested_devices : 0;
  }
  if (highest < lowest || highest <= 0) return increments;
  increments.push_back(lowest);
  for (int d = 1; d <= highest; d *= 2) {
    if (d > lowest) increments.push_back(d);
  }
  if (increments.back() != highest) increments.push_back(highest);
  return increments;
}

class Planner {
 public:
  Planner(const ClusterState& cluster, const PolicyOptions& options, double now_s,
          std::vector<Working>& jobs, FreeLedger& ledger)
      : cluster_(cluster), options_(options), now_s_(now_s), jobs_(jobs), ledger_(ledger),
        types_(DeviceTypes(cluster)) {}

  // The intra-job planner's top-K proposals for one job under the current free devices.
  std::vector<Proposal> Propose(size_t index) {
    const Working& work = jobs_[index];
    const JobState& job = work.state;
    std::vector<Proposal> proposals;
    if (work.was_running && now_s_ - job.last_resize_s < options_.min_resize_interval_s) {
      return proposals;
    }
    int current = DeviceCount(job.allocation);
    for (const std::string& type : types_) {
      int free = ledger_.FreeDevicesOfType(type);
      for (int d : Increments(job, current)) {
        if (d > free) break;
        std::optional<Allocation> next = PlanGrowth(work, type, d);
        if (!next) continue;
        double speedup =
            model::Speedup(job.profile, ShapeOf(cluster_, *next, job), cluster_.environment);
        if (speedup <= work.speedup || !WorthResizing(work, speedup)) continue;
        proposals.push_back({index, work.version, type, d, (speedup - work.speedup) / d, speedup});
      }
    }
    std::sort(proposals.begin(), proposals.end(), [this](const Proposal& a, const Proposal& b) {
      return ProposalLess{&jobs_}(b, a);
    });
    if (static_cast<int>(proposals.size()) > options_.top_k_proposals) {
      proposals.resize(std::max(options_.top_k_proposals, 1));
    }
    return proposals;
  }

  // Whether any device is still free. Without one no proposal can be accepted (each needs at
  // least one more device) and none is made, so the round is over.
  bool AnyFree() const {
    for (const std::string& type : types_) {
      if (ledger_.FreeDevicesOfType(type) > 0) return true;
    }
    return false;
  }

  // Applies the proposal if it still fits; returns false if it went stale.
  bool Accept(const Proposal& proposal) {
    Working& work = jobs_[proposal.job];
    std::optional<Allocation> next = PlanGrowth(work, proposal.device_type, proposal.devices);
    if (!next) return false;
    ledger_.Give(work.state.allocation, work.state);
    ledger_.Take(*next, work.state);
    picks_.clear();  // what is free changed
    work.state.allocation = *next;
    char reason[160];
    std::snprintf(reason, sizeof reason, "%s+%d %s (speedup %.3f -> %.3f, %.3f per device)",
                  work.reason.empty() ? "easyscale: " : "; ", proposal.devices,
                  proposal.device_type.c_str(), work.speedup, proposal.new_speedup,
                  proposal.per_device);
    work.reason += reason;
    work.speedup = proposal.new_speedup;
    ++work.version;
    return true;
  }

 private:
  // The job's whole allocation after adding `devices` of `type`. A running job grows in place
  // (moving it would cost a restart anyway, but also its data locality); a job not yet started
  // in this round is re-placed from scratch, so greedy one-device steps do not scatter it over
  // nodes (which the model punishes with the inter-node bandwidth).
  std::optional<Allocation> PlanGrowth(const Working& work, const std::string& type, int devices) {
    if (work.state.allocation.empty()) return PickForPending(work.state, type, devices);
    if (work.was_running) {
      std::optional<Allocation> delta = PickDevices(cluster_, ledger_, work.state, type, devices);
      if (!delta) return std::nullopt;
      return Merge(work.state.allocation, *delta);
    }
    JobState fresh = work.state;
    fresh.allocation.clear();
    ledger_.Give(work.state.allocation, work.state);
    std::optional<Allocation> whole =
        PickDevices(cluster_, ledger_, fresh, type, DeviceCount(work.state.allocation) + devices);
    ledger_.Take(work.state.allocation, work.state);
    // Staying on the same single device type keeps the plan homogeneous; mixed types keep the
    // in-place growth so heterogeneous proposals are still priced by Eq. 1.
    bool same_type = true;
    for (const Slice& slice : work.state.allocation) {
      same_type &= cluster_.nodes[slice.node].device_type == type;
    }
    if (whole && same_type) return whole;
    std::optional<Allocation> delta = PickDevices(cluster_, ledger_, work.state, type, devices);
    if (!delta) return std::nullopt;
    return Merge(work.state.allocation, *delta);
  }

  // PickDevices for a job holding nothing yet: its devices depend only on what is free and on
  // the job's CPUs and host memory per device, so every queued job asking for the same is
  // given the same answer until a proposal is accepted (memo cleared in Accept). A long queue
  // asks for the same few sizes at every event.
  std::optional<Allocation> PickForPending(const JobState& job, const std::string& type,
                                           int devices) {
    const PickKey key{type, devices, job.cpus_per_device, job.HostMemoryPerDevice()};
    auto it = picks_.find(key);
    if (it == picks_.end()) {
      std::optional<Allocation> picked = PickDevices(cluster_, ledger_, job, type, devices);
      if (picked) picked = Merge({}, *picked);
      it = picks_.emplace(key, std::move(picked)).first;
    }
    return it->second;
  }

  // A running job's growth must save more expected time than the resize costs it.
  bool WorthResizing(const Working& work, double new_speedup) const {
    if (!work.was_running) return true;
    double remaining = work.state.expected_end_s - now_s_;
    double saved = remaining * (1.0 - work.speedup / new_speedup);
    return saved > options_.resize_cost_s;
  }

  const ClusterState& cluster_;
  const PolicyOptions& options_;
  double now_s_;
  std::vector<Working>& jobs_;
  FreeLedger& ledger_;
  std::vector<std::string> types_;  // computed once: scanning the nodes per proposal is slow
  // (type, devices, CPUs per device, host MiB per device) -> PickForPending's answer.
  using PickKey = std::tuple<std::string, int, int, std::int64_t>;
  std::map<PickKey, std::optional<Allocation>> picks_;
};

}  // namespace

PolicyOutput EasyScalePolicy::Decide(const ClusterState& cluster,
                                     const std::vector<JobState>& jobs, double now_s) const {
  PolicyOutput output;
  FreeLedger ledger(cluster);
  int free_total = 0;
  for (const NodeState& node : cluster.nodes) free_total += node.free_devices;
  if (free_total == 0) return output;

  std::vector<Working> work;
  work.reserve(jobs.size());
  for (const JobState& job : jobs) {
    double speedup = 0.0;
    if (job.running()) {
      speedup = model::Speedup(job.profile, ShapeOf(cluster, job.allocation, job),
                               cluster.environment);
    }
    work.push_back({job, job.running(), 0, speedup, ""});
  }
  Planner planner(cluster, options_, now_s, work, ledger);
  std::priority_queue<Proposal, std::vector<Proposal>, ProposalLess> heap(ProposalLess{&work});
  for (size_t i = 0; i < work.size(); ++i) {
    for (Proposal& proposal : planner.Propose(i)) heap.push(std::move(proposal));
  }
  while (!heap.empty() && planner.AnyFree()) {  // a full cluster ends the round early
    Proposal best = heap.top();
    heap.pop();
    if (best.version != work[best.job].version) continue;  // superseded by an accepted one
    bool accepted = planner.Accept(best);
    if (!accepted) ++work[best.job].version;  // stale: free devices moved; re-plan this job
    for (Proposal& proposal : planner.Propose(best.job)) heap.push(std::move(proposal));
  }
  for (const Working& job : work) {
    if (job.reason.empty()) continue;
    output.decisions.push_back({job.was_running ? DecisionKind::kResize : DecisionKind::kStart,
                                job.state.id, job.state.allocation, job.reason});
  }
  return output;
}

}  // namespace elastic::policy
