// DecideResizes: shrink for waiting jobs, then grow into nodes nobody planned for (see header).
#include "scheduler/policy/resize_decision.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "scheduler/model/throughput_model.h"
#include "scheduler/policy/live_policy.h"
#include "scheduler/policy/node_types.h"
#include "scheduler/policy/policy.h"
#include "scheduler/policy/sla_quota.h"

namespace elastic::policy {
namespace {

using NodeSet = std::set<std::string>;

bool Contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// A registered elastic job joined with what Slurm says about it.
struct Candidate {
  const ElasticJob* job;
  const SlurmJob* slurm;
  NodeSet nodes;  // its current nodes, updated as this cycle plans
  bool preempted = false;  // requeued this cycle for a guaranteed job (nodes then empty)
};

// A node an elastic job could release for a waiting job, and the speedup lost per node.
struct Offer {
  Candidate* c;
  std::string node;
  double loss;
};

// Per partition: idle nodes usable now, and nodes that growth must leave alone.
struct PartitionPool {
  NodeSet idle;
  NodeSet releasing;  // in-flight shrinks free these soon: waiting jobs may count on them
  NodeSet no_grow;  // planned for a pending job, reserved, or claimed this cycle
};

std::map<std::string, PartitionPool> Pools(const SlurmView& view,
                                           const std::vector<ElasticJob>& jobs,
                                           const ResizeDecisionOptions& options) {
  NodeSet reserved, planned, releasing, adding;
  for (const SlurmReservation& r : view.reservations) {
    if (r.start_time <= view.now + options.reservation_horizon_s && r.end_time > view.now) {
      reserved.insert(r.nodes.begin(), r.nodes.end());
    }
  }
  for (const SlurmJob& job : view.jobs) {
    if (job.state == SlurmJobState::kPending) planned.insert(job.sched_nodes.begin(),
                                                             job.sched_nodes.end());
  }
  for (const ElasticJob& job : jobs) {
    adding.insert(job.adding.begin(), job.adding.end());
    releasing.insert(job.releasing.begin(), job.releasing.end());
  }
  std::map<std::string, PartitionPool> pools;
  for (const SlurmNode& node : view.nodes) {
    for (const std::string& partition : node.partitions) {
      PartitionPool& pool = pools[partition];
      // A reserved idle node serves only its reservation's jobs: neither growth nor (in this
      // model) an arbitrary waiting job may count on it.
      if (reserved.contains(node.name) || adding.contains(node.name)) {
        // nothing: kept for the reservation, or already promised to a growing elastic job
      } else if (node.idle()) {
        pool.idle.insert(node.name);
      } else if (releasing.contains(node.name)) {
        pool.releasing.insert(node.name);
      }
      if (reserved.contains(node.name) || planned.contains(node.name)) {
        pool.no_grow.insert(node.name);
      }
    }
  }
  return pools;
}

// A job's size as the speedup model reads it: its nodes and the devices on them.
struct Size {
  int nodes = 0;
  int devices = 0;
};

// Speedup gained per node going from `from` to `to` (a loss when `to` is smaller), priced on
// the devices those nodes hold: the resource moved is whole nodes, the speed is the devices'.
double Gain(const Candidate& c, Size from, Size to, double comm) {
  return (DeviceSpeedup(c.job->ests, to.devices, to.nodes, comm) -
          DeviceSpeedup(c.job->ests, from.devices, from.nodes, comm)) /
         (to.nodes - from.nodes);
}

// How many nodes `c` can release: those above its MIN, never the batch host (Releasable's size,
// without ordering them: counting is cheap, pricing is not).
int ReleasableCount(const Candidate& c) {
  const int surplus = static_cast<int>(c.nodes.size()) - c.job->min_nodes;
  const int others =
      static_cast<int>(c.nodes.size()) - (c.nodes.contains(c.slurm->batch_host) ? 1 : 0);
  return std::max(std::min(surplus, others), 0);
}

// Nodes `c` can release, best first: those the waiting job was planned on, then by name from
// the end (so the batch host, usually first, is kept anyway and lists stay compact).
std::vector<std::string> Releasable(const Candidate& c, const SlurmJob& waiting) {
  std::vector<std::string> nodes;
  for (const std::string& n : c.nodes) {
    if (n != c.slurm->batch_host) nodes.push_back(n);
  }
  std::stable_sort(nodes.begin(), nodes.end(), [&](const std::string& a, const std::string& b) {
    const bool pa = Contains(waiting.sched_nodes, a), pb = Contains(waiting.sched_nodes, b);
    return pa != pb ? pa : a > b;
  });
  const int surplus = static_cast<int>(c.nodes.size()) - c.job->min_nodes;
  if (static_cast<int>(nodes.size()) > surplus) nodes.resize(std::max(surplus, 0));
  return nodes;
}

}  // namespace

LiveOptions LiveOptionsFrom(const ResizeDecisionOptions& options) {
  LiveOptions live;
  live.resize_cost_s = options.resize_cost_s;
  live.min_resize_interval_s = static_cast<double>(options.min_resize_interval_s);
  live.reconfig_penalty = options.reconfig_penalty;
  live.comm_ratio = options.comm_ratio;
  return live;
}

double NodeSpeedup(int ests, int nodes, double comm_ratio) {
  return DeviceSpeedup(ests, nodes, nodes, comm_ratio);
}

double DeviceSpeedup(int ests, int devices, int nodes, double comm_ratio) {
  if (devices <= 0 || nodes <= 0) return 0.0;
  model::JobProfile profile;
  profile.ests = ests;
  profile.comm_ratio = comm_ratio;
  return model::Speedup(profile, model::Shape{{{1.0, devices}}, nodes});
}

namespace {

class Decider {
 public:
  Decider(const SlurmView& view, const std::vector<ElasticJob>& jobs,
          const ResizeDecisionOptions& options, const Policy* policy)
      : view_(view), options_(options), policy_(policy), pools_(Pools(view, jobs, options)) {
    for (const SlurmNode& node : view.nodes) {
      const NodeType type = NodeTypeOf(node, options.node_types);
      nodes_[node.name] = {node.name, node.cpus, std::max(node.devices, 1), type.name,
                           type.capability};
    }
    std::map<std::uint32_t, const SlurmJob*> by_id;
    for (const SlurmJob& job : view.jobs) by_id[job.job_id] = &job;
    for (const ElasticJob& job : jobs) {
      auto it = by_id.find(job.job_id);
      if (it == by_id.end() || it->second->state != SlurmJobState::kRunning) continue;
      candidates_.push_back({&job, it->second, NodeSet(it->second->nodes.begin(),
                                                      it->second->nodes.end())});
      original_[job.job_id] = candidates_.back().nodes;
    }
    std::map<std::uint32_t, int> min_nodes;
    for (const ElasticJob& job : jobs) min_nodes[job.job_id] = job.min_nodes;
    standing_ = QuotaStanding(view, min_nodes, options.quotas);
  }

  // Changes `c`'s nodes in step 1, keeping its partition's releasable count (releasable_).
  template <typename Change>
  void ChangeNodes(Candidate& c, Change change) {
    int& releasable = releasable_[c.slurm->partition];
    if (!c.job->busy) releasable -= ReleasableCount(c);
    change(c.nodes);
    if (!c.job->busy) releasable += ReleasableCount(c);
  }

  ResizeDecision Run() {
    for (const Candidate& c : candidates_) {
      if (!c.job->busy) releasable_[c.slurm->partition] += ReleasableCount(c);
    }
    std::vector<const SlurmJob*> waiting;
    for (const SlurmJob& job : view_.jobs) {
      if (WaitsForNodes(job)) waiting.push_back(&job);
    }
    auto slurm_order = [](const SlurmJob* a, const SlurmJob* b) {
      return a->priority != b->priority ? a->priority > b->priority : a->job_id < b->job_id;
    };
    std::stable_sort(waiting.begin(), waiting.end(), slurm_order);
    for (const SlurmJob* job : waiting) slurm_next_.emplace(job->partition, job->job_id);
    // Guaranteed jobs within quota first (Rubick Algorithm 1: the privileged jobs), then Slurm's.
    std::stable_sort(waiting.begin(), waiting.end(), [&](const SlurmJob* a, const SlurmJob* b) {
      return Protected(*a) && !Protected(*b);
    });
    for (const SlurmJob* job : waiting) MakeRoomFor(*job);
    for (auto& [partition, pool] : pools_) {
      if (policy_) {
        DecideByPolicy(partition, pool);
      } else {
        Grow(partition, pool);
      }
    }
    return Finish();
  }

 private:
  std::vector<Candidate*> InPartition(const std::string& partition, bool include_busy) {
    std::vector<Candidate*> out;
    for (Candidate& c : candidates_) {
      if (c.preempted || c.slurm->partition != partition) continue;
      if (include_busy || !c.job->busy) out.push_back(&c);
    }
    return out;
  }

  // Devices on a node; a node the view does not list counts as one (as in the node-for-device
  // model this extends).
  int Devices(const std::string& node) const {
    auto it = nodes_.find(node);
    return it == nodes_.end() ? 1 : it->second.devices;
  }

  Size SizeOf(const NodeSet& nodes) const {
    Size size{static_cast<int>(nodes.size()), 0};
    for (const std::string& n : nodes) size.devices += Devices(n);
    return size;
  }

  void Claim(PartitionPool& pool, const NodeSet& nodes) {
    for (const std::string& n : nodes) {
      pool.idle.erase(n);
      pool.releasing.erase(n);
      pool.no_grow.insert(n);
    }
  }

  // A guaranteed job within its account's quota (sla_quota.h).
  bool Protected(const SlurmJob& job) const {
    auto it = standing_.find(job.job_id);
    return job.sla_class == SlaClass::kGuaranteed && it != standing_.end() && it->second;
  }

  void MakeRoomFor(const SlurmJob& waiting) {
    auto pool_it = pools_.find(waiting.partition);
    if (pool_it == pools_.end()) return;
    PartitionPool& pool = pool_it->second;
    const int need = std::max(waiting.min_nodes, 1);
    NodeSet soon = pool.idle;
    soon.insert(pool.releasing.begin(), pool.releasing.end());
    if (static_cast<int>(soon.size()) >= need) {  // Slurm will start it on these
      NodeSet take;
      for (const std::string& n : soon) {
        if (static_cast<int>(take.size()) == need) break;
        take.insert(n);
      }
      Claim(pool, take);
      return;
    }
    // Counted before pricing, and kept per partition: under pressure most waiting jobs stop here.
    const int releasable = releasable_[waiting.partition];
    if (static_cast<int>(soon.size()) + releasable >= need) {
      ShrinkFor(waiting, pool, soon, Offers(waiting), need);
      return;
    }
    if (!Protected(waiting)) return;  // cannot start even so
    // Only for the job Slurm starts next: nodes freed for one further back would go to the jobs
    // ahead of it in Slurm's queue, and the preempted job's would be taken back (a loop).
    const bool slurm_next = slurm_next_.at(waiting.partition) == waiting.job_id;
    if (options_.preempt_best_effort && slurm_next && Preempt(waiting, pool, soon, need)) return;
    Claim(pool, soon);  // no best-effort growth onto what a guaranteed job waits for
  }

  // Nodes the partition's other elastic jobs could release for `waiting`, each job's in release
  // order (rising loss: the speedup is concave).
  std::vector<Offer> Offers(const SlurmJob& waiting) {
    std::vector<Offer> offers;
    for (Candidate* c : InPartition(waiting.partition, false)) {
      if (ReleasableCount(*c) == 0) continue;  // most jobs, once earlier waiting jobs shrank them
      Size from = SizeOf(c->nodes);
      for (const std::string& node : Releasable(*c, waiting)) {
        const Size to{from.nodes - 1, from.devices - Devices(node)};
        offers.push_back({c, node, Gain(*c, to, from, options_.comm_ratio)});
        from = to;
      }
    }
    return offers;
  }

  // Shrinks jobs, cheapest released node first, until `freed` holds `need` nodes; claims them.
  // REQUIRES: freed.size() + offers.size() >= need.
  void ShrinkFor(const SlurmJob& waiting, PartitionPool& pool, NodeSet freed,
                 std::vector<Offer> offers, int need) {
    const std::size_t idle = freed.size();
    // A stable sort by loss keeps each job's release order; job id breaks ties.
    std::stable_sort(offers.begin(), offers.end(), [](const Offer& a, const Offer& b) {
      if (a.loss != b.loss) return a.loss < b.loss;
      return a.c->job->job_id < b.c->job->job_id;
    });
    for (int i = 0; static_cast<int>(freed.size()) < need; ++i) {
      ChangeNodes(*offers[i].c, [&](NodeSet& nodes) { nodes.erase(offers[i].node); });
      freed.insert(offers[i].node);
      reasons_[offers[i].c->job->job_id] = "pending job " + std::to_string(waiting.job_id) +
                                           " (" + std::to_string(need) + " nodes, " +
                                           waiting.reason + ") can start with " +
                                           std::to_string(idle) + " idle + released nodes";
    }
    Claim(pool, freed);
  }

  // Requeues best-effort jobs (ChooseVictims) and shrinks others for the rest of `need`; false
  // when even preempting every best-effort job would not start `waiting`.
  bool Preempt(const SlurmJob& waiting, PartitionPool& pool, NodeSet freed, int need) {
    std::vector<Candidate*> victims = ChooseVictims(waiting, static_cast<int>(freed.size()), need);
    if (victims.empty()) return false;
    const std::string reason = "guaranteed job " + std::to_string(waiting.job_id) + " (" +
                               std::to_string(need) + " nodes, within account " +
                               waiting.account + "'s quota) cannot start by shrinking alone: " +
                               std::to_string(freed.size()) + " idle node(s)";
    for (Candidate* v : victims) {
      preemptions_.push_back(
          {v->job->job_id, std::vector<std::string>(v->nodes.begin(), v->nodes.end()), reason});
      freed.insert(v->nodes.begin(), v->nodes.end());
      ChangeNodes(*v, [](NodeSet& nodes) { nodes.clear(); });
      v->preempted = true;
    }
    std::vector<Offer> offers = Offers(waiting);
    ShrinkFor(waiting, pool, std::move(freed), std::move(offers), need);
    return true;
  }

  // The fewest best-effort jobs whose whole node sets, with `idle` nodes and what the others can
  // release by shrinking, reach `need`: each round the smallest job that completes it, else the
  // largest; empty if they cannot.
  std::vector<Candidate*> ChooseVictims(const SlurmJob& waiting, int idle, int need) {
    std::vector<Candidate*> open;
    int have = idle;
    for (Candidate* c : InPartition(waiting.partition, false)) {
      have += ReleasableCount(*c);
      const bool untouched = c->nodes == original_[c->job->job_id];
      if (c->slurm->sla_class == SlaClass::kBestEffort && untouched) open.push_back(c);
    }
    auto extra = [&](const Candidate* c) {  // nodes its preemption adds to its shrink's
      return static_cast<int>(c->nodes.size()) - ReleasableCount(*c);
    };
    std::vector<Candidate*> chosen;
    while (have < need) {
      // Rank: completes the need (then smaller first), else larger first; ties: lower job id.
      auto rank = [&](const Candidate* c) {
        const bool completes = have + extra(c) >= need;
        return std::make_pair(!completes, completes ? extra(c) : -extra(c));
      };
      auto pick = std::min_element(open.begin(), open.end(), [&](Candidate* a, Candidate* b) {
        return rank(a) < rank(b);
      });
      if (pick == open.end()) return {};
      have += extra(*pick);
      chosen.push_back(*pick);
      open.erase(pick);
    }
    return chosen;
  }

  bool MayGrow(const Candidate& c, std::string& why) const {
    const std::int64_t since = view_.now - c.job->last_resize;
    if (c.job->last_resize > 0 && since < options_.min_resize_interval_s) {
      why = "min resize interval: " + std::to_string(options_.min_resize_interval_s - since) +
            " s left";
      return false;
    }
    // Rubick §5.3: (T - N*delta)/T >= threshold, T = time since start, N counts this resize.
    const double t = static_cast<double>(view_.now - c.slurm->start_time);
    const double n = c.job->resizes + 1;
    if (t <= 0 || (t - n * options_.resize_cost_s) / t < options_.reconfig_penalty) {
      why = "reconfiguration penalty: (T - N*delta)/T < " + std::to_string(options_.reconfig_penalty);
      return false;
    }
    return true;
  }

  void Grow(const std::string& partition, PartitionPool& pool) {
    std::vector<std::string> free;
    for (const std::string& n : pool.idle) {
      if (!pool.no_grow.contains(n)) free.push_back(n);
    }
    std::vector<Candidate*> growers;
    for (Candidate* c : InPartition(partition, false)) {
      if (c->nodes != original_[c->job->job_id]) continue;  // shrinking this cycle
      if (static_cast<int>(c->nodes.size()) >= c->job->max_nodes) continue;
      std::string why;
      if (MayGrow(*c, why)) growers.push_back(c);
      else if (!free.empty()) held_.push_back({c->job->job_id, "grow held back: " + why});
    }
    std::size_t next = 0;
    while (next < free.size()) {
      // EasyScale §3.5: every job proposes each size it could reach; best gain per node wins.
      Candidate* best = nullptr;
      int best_to = 0;
      double best_gain = 1e-9;
      for (Candidate* c : growers) {
        const Size now = SizeOf(c->nodes);
        const int limit =
            std::min<int>(c->job->max_nodes, now.nodes + static_cast<int>(free.size() - next));
        Size to = now;  // grows onto free[next], free[next + 1], ... in that order
        while (to.nodes < limit) {
          to.devices += Devices(free[next + static_cast<std::size_t>(to.nodes - now.nodes)]);
          ++to.nodes;
          const double gain = Gain(*c, now, to, options_.comm_ratio);
          if (gain > best_gain) best = c, best_to = to.nodes, best_gain = gain;
        }
      }
      if (!best) break;
      while (static_cast<int>(best->nodes.size()) < best_to) best->nodes.insert(free[next++]);
      reasons_[best->job->job_id] = std::to_string(best->nodes.size() -
                                                   original_[best->job->job_id].size()) +
                                    " idle node(s) that no pending job's planned start needs";
    }
  }

  // Step 2 by the configured Policy (live_policy.h): the partition's jobs that take no part in
  // step 1's shrinks, the nodes they hold, and the idle nodes nobody claimed, planned or
  // reserved. A node in several partitions is handed out once per cycle.
  void DecideByPolicy(const std::string& partition, PartitionPool& pool) {
    auto live_node = [&](const std::string& name) {
      auto it = nodes_.find(name);
      return it != nodes_.end() ? it->second : LiveNode{name, 0, 1};
    };
    LivePartition live;
    live.now = view_.now;
    for (const std::string& n : pool.idle) {
      if (!pool.no_grow.contains(n) && !granted_.contains(n)) live.free.push_back(live_node(n));
    }
    std::map<std::uint32_t, Candidate*> by_id;
    for (Candidate* c : InPartition(partition, false)) {
      if (c->nodes != original_[c->job->job_id]) continue;  // shrinking for a waiting job
      if (policed_.contains(c->job->job_id)) continue;      // decided in another partition
      policed_.insert(c->job->job_id);
      LiveJob job;
      job.job_id = c->job->job_id;
      job.nodes.assign(c->nodes.begin(), c->nodes.end());
      job.batch_host = c->slurm->batch_host;
      job.min_nodes = c->job->min_nodes;
      job.max_nodes = c->job->max_nodes;
      job.ests = c->job->ests;
      job.start_time = c->slurm->start_time;
      job.end_time = c->slurm->end_time;
      job.last_resize = c->job->last_resize;
      job.resizes = c->job->resizes;
      job.speed_curve = c->job->speed_curve;
      std::string why;
      job.may_resize = MayGrow(*c, why);
      const bool could_grow = static_cast<int>(c->nodes.size()) < c->job->max_nodes;
      if (!job.may_resize && could_grow && !live.free.empty()) {
        held_.push_back({c->job->job_id, "grow held back: " + why});
      }
      for (const std::string& n : c->nodes) live.held.push_back(live_node(n));
      by_id[job.job_id] = c;
      live.jobs.push_back(std::move(job));
    }
    for (const LiveChange& change : DecideLive(*policy_, live, LiveOptionsFrom(options_))) {
      Candidate* c = by_id.at(change.job_id);
      for (const std::string& n : change.target) {
        if (!c->nodes.contains(n)) granted_.insert(n);
      }
      c->nodes = NodeSet(change.target.begin(), change.target.end());
      reasons_[change.job_id] = change.reason;
    }
  }

  ResizeDecision Finish() {
    ResizeDecision decision;
    for (const Candidate& c : candidates_) {
      const NodeSet& before = original_[c.job->job_id];
      if (c.preempted || c.nodes == before) continue;
      ResizeProposal order;
      order.job_id = c.job->job_id;
      order.from_nodes = static_cast<int>(before.size());
      order.to_nodes = static_cast<int>(c.nodes.size());
      order.kind = order.to_nodes > order.from_nodes ? ResizeKind::kGrow : ResizeKind::kShrink;
      order.target_nodes.assign(c.nodes.begin(), c.nodes.end());
      const NodeSet& big = order.kind == ResizeKind::kGrow ? c.nodes : before;
      const NodeSet& small = order.kind == ResizeKind::kGrow ? before : c.nodes;
      std::set_difference(big.begin(), big.end(), small.begin(), small.end(),
                          std::back_inserter(order.changed_nodes));
      order.reason = reasons_[c.job->job_id];
      decision.proposals.push_back(std::move(order));
    }
    decision.held_back = std::move(held_);
    decision.preemptions = std::move(preemptions_);
    return decision;
  }

  const SlurmView& view_;
  const ResizeDecisionOptions& options_;
  const Policy* policy_;
  std::map<std::string, PartitionPool> pools_;
  // Per node of the view: its CPUs, devices and type. Hashed: looked up, never iterated.
  std::unordered_map<std::string, LiveNode> nodes_;
  NodeSet granted_;                     // grown into this cycle (policy path)
  std::set<std::uint32_t> policed_;     // jobs the policy has seen this cycle
  std::vector<Candidate> candidates_;
  std::map<std::uint32_t, NodeSet> original_;
  std::map<std::uint32_t, std::string> reasons_;
  std::vector<HeldBack> held_;
  std::vector<Preemption> preemptions_;
  std::map<std::uint32_t, bool> standing_;  // guaranteed jobs: within quota (sla_quota.h)
  std::map<std::string, std::uint32_t> slurm_next_;  // per partition: Slurm's next start
  // Per partition: nodes its elastic jobs not busy could release (step 1), kept by ChangeNodes.
  std::map<std::string, int> releasable_;
};

}  // namespace

ResizeDecision DecideResizes(const SlurmView& view, const std::vector<ElasticJob>& jobs,
                             const ResizeDecisionOptions& options) {
  return Decider(view, jobs, options, nullptr).Run();
}

ResizeDecision DecideResizes(const SlurmView& view, const std::vector<ElasticJob>& jobs,
                             const ResizeDecisionOptions& options, const Policy& policy) {
  return Decider(view, jobs, options, &policy).Run();
}

}  // namespace elastic::policy
