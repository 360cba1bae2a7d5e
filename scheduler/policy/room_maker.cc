// RoomMaker: step 1 of the resize decision, shrinks and preemptions for waiting jobs (see
// room_maker.h and resize_decision.h).
#include "scheduler/policy/room_maker.h"

#include <algorithm>

#include "scheduler/policy/sla_quota.h"

namespace elastic::policy {
namespace {

NodeList ListOf(const std::set<int>& nodes) { return NodeList(nodes.begin(), nodes.end()); }

// Nodes a waiting job may count on now: idle, or freed soon by an in-flight shrink.
std::set<int> Soon(const PartitionPool& pool) {
  std::set<int> soon = pool.idle;
  soon.insert(pool.releasing.begin(), pool.releasing.end());
  return soon;
}

// The first `count` nodes of Soon(pool), without copying the rest.
NodeList FirstSoon(const PartitionPool& pool, int count) {
  NodeList first;
  auto idle = pool.idle.begin();
  auto releasing = pool.releasing.begin();
  while (static_cast<int>(first.size()) < count) {
    const bool from_idle = releasing == pool.releasing.end() ||
                           (idle != pool.idle.end() && *idle <= *releasing);
    if (from_idle && idle == pool.idle.end()) break;
    const int n = from_idle ? *idle++ : *releasing++;
    if (first.empty() || first.back() != n) first.push_back(n);  // in both: once
  }
  return first;
}

// Soon(pool).size(), without the copy: most waiting jobs only count them.
int SoonCount(const PartitionPool& pool) {
  std::size_t count = pool.idle.size();
  for (int n : pool.releasing) count += pool.idle.contains(n) ? 0 : 1;
  return static_cast<int>(count);
}

}  // namespace

RoomMaker::RoomMaker(ResizeCycle& cycle, const std::vector<ElasticJob>& jobs) : cycle_(cycle) {
  std::map<std::uint32_t, int> min_nodes;
  for (const ElasticJob& job : jobs) min_nodes[job.job_id] = job.min_nodes;
  standing_ = QuotaStanding(cycle.view, min_nodes, cycle.options.quotas);
  holder_start_.assign(static_cast<std::size_t>(cycle.nodes.size()) + 1, 0);
  for (const Candidate& c : cycle.candidates) {
    for (int n : c.original) ++holder_start_[n + 1];
  }
  for (std::size_t i = 1; i < holder_start_.size(); ++i) holder_start_[i] += holder_start_[i - 1];
  holders_.resize(static_cast<std::size_t>(holder_start_.back()));
  std::vector<int> next(holder_start_.begin(), holder_start_.end() - 1);
  for (const Candidate& c : cycle.candidates) {
    for (int n : c.original) holders_[next[n]++] = CandidateIndex(c);
  }
}

void RoomMaker::Run() {
  for (const Candidate& c : cycle_.candidates) {
    if (!c.job->busy) releasable_[c.slurm->partition] += ReleasableCount(c);
  }
  std::vector<const SlurmJob*> waiting;
  for (const SlurmJob& job : cycle_.view.jobs) {
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
}

// A guaranteed job within its account's quota (sla_quota.h).
bool RoomMaker::Protected(const SlurmJob& job) const {
  auto it = standing_.find(job.job_id);
  return job.sla_class == SlaClass::kGuaranteed && it != standing_.end() && it->second;
}

template <typename Change>
void RoomMaker::ChangeNodes(Candidate& c, Change change) {
  int& releasable = releasable_[c.slurm->partition];
  if (!c.job->busy) releasable -= ReleasableCount(c);
  change(c.nodes);
  if (c.job->busy) return;
  releasable += ReleasableCount(c);
  auto it = offers_.find(c.slurm->partition);
  if (it != offers_.end()) it->second.Set(CandidateIndex(c), OffersOf(c, {}));
}

void RoomMaker::MakeRoomFor(const SlurmJob& waiting) {
  auto pool_it = cycle_.pools.find(waiting.partition);
  if (pool_it == cycle_.pools.end()) return;
  PartitionPool& pool = pool_it->second;
  const int need = std::max(waiting.min_nodes, 1);
  const int soon = SoonCount(pool);
  if (soon >= need) {  // Slurm will start it on these
    cycle_.Claim(pool, FirstSoon(pool, need));
    return;
  }
  // Counted before pricing, and kept per partition: under pressure most waiting jobs stop here.
  const int releasable = releasable_[waiting.partition];
  if (soon + releasable >= need) {
    ShrinkFor(waiting, pool, Soon(pool), need);
    return;
  }
  // Only for the job Slurm starts next: nodes freed for one further back would go to the jobs
  // ahead of it in Slurm's queue, and the preempted job's would be taken back (a loop).
  const ResizeDecisionOptions& options = cycle_.options;
  const bool slurm_next = slurm_next_.at(waiting.partition) == waiting.job_id;
  const bool guaranteed = Protected(waiting);
  const bool for_rigid = !guaranteed && !waiting.elastic && slurm_next &&
                         options.preempt_best_effort && options.preempt_for_rigid;
  if (!guaranteed && !for_rigid) return;  // cannot start even so
  const bool preempt = options.preempt_best_effort && slurm_next;
  if (preempt && Preempt(waiting, pool, Soon(pool), need, for_rigid)) return;
  // A rigid job that cannot start even so waits like any best-effort one (Slurm's plan keeps
  // growth off its planned nodes); no best-effort growth onto what a guaranteed job waits for.
  if (for_rigid) return;
  cycle_.Claim(pool, ListOf(Soon(pool)));
}

// `c`'s releasable nodes in release order, priced: those `planned` (the waiting job's planned
// start) first, then by name from the end (so the batch host, usually first, is kept anyway and
// lists stay compact); each loses more than the one before (the speedup is concave).
std::vector<ShrinkOffer> RoomMaker::OffersOf(const Candidate& c, const NodeList& planned) const {
  NodeList order, unplanned;
  for (auto it = c.nodes.rbegin(); it != c.nodes.rend(); ++it) {
    if (*it != c.batch_host) (Holds(planned, *it) ? order : unplanned).push_back(*it);
  }
  order.insert(order.end(), unplanned.begin(), unplanned.end());
  const int surplus = static_cast<int>(c.nodes.size()) - c.job->min_nodes;
  if (static_cast<int>(order.size()) > surplus) order.resize(std::max(surplus, 0));
  std::vector<ShrinkOffer> offers;
  NodeSize from = cycle_.SizeOf(c.nodes);
  for (int node : order) {
    const NodeSize to{from.nodes - 1, from.devices - cycle_.nodes.Devices(node)};
    offers.push_back({cycle_.Gain(c, to, from), c.job->job_id,
                      CandidateIndex(c), static_cast<int>(offers.size()), node});
    from = to;
  }
  return offers;
}

ShrinkOffers& RoomMaker::OffersIn(const std::string& partition) {
  auto it = offers_.find(partition);
  if (it != offers_.end()) return it->second;
  ShrinkOffers& offers = offers_[partition];
  for (Candidate* c : cycle_.InPartition(partition, false)) {
    if (ReleasableCount(*c) > 0) offers.Set(CandidateIndex(*c), OffersOf(*c, {}));
  }
  return offers;
}

// The cheapest offers, in order, until `freed` with their nodes holds `need`: the partition's
// standing offers, but for the jobs holding nodes `waiting` is planned on, whose release order
// puts those first (and so is priced for this waiting job alone).
std::vector<ShrinkOffer> RoomMaker::TakeOffers(const SlurmJob& waiting, std::set<int>& freed,
                                               int need) {
  std::vector<ShrinkOffer> taken;
  if (static_cast<int>(freed.size()) >= need) return taken;
  const NodeList planned = cycle_.nodes.FindAll(waiting.sched_nodes);
  std::vector<int> replaced;
  for (int n : planned) {
    for (int h = holder_start_[n]; h < holder_start_[n + 1]; ++h) {
      const Candidate& c = cycle_.candidates[holders_[h]];
      if (c.preempted || c.job->busy || c.slurm->partition != waiting.partition) continue;
      if (Holds(c.nodes, n)) replaced.push_back(holders_[h]);
    }
  }
  std::sort(replaced.begin(), replaced.end());
  replaced.erase(std::unique(replaced.begin(), replaced.end()), replaced.end());
  std::vector<ShrinkOffer> instead;
  for (int i : replaced) {
    std::vector<ShrinkOffer> own = OffersOf(cycle_.candidates[i], planned);
    instead.insert(instead.end(), own.begin(), own.end());
  }
  std::sort(instead.begin(), instead.end());
  OffersIn(waiting.partition).Walk(replaced, instead, [&](const ShrinkOffer& o) {
    taken.push_back(o);
    freed.insert(o.node);
    return static_cast<int>(freed.size()) < need;
  });
  return taken;
}

// Shrinks jobs, cheapest released node first, until `freed` holds `need` nodes; claims them.
void RoomMaker::ShrinkFor(const SlurmJob& waiting, PartitionPool& pool, std::set<int> freed,
                          int need) {
  const std::size_t idle = freed.size();
  const std::string reason = "pending job " + std::to_string(waiting.job_id) + " (" +
                             std::to_string(need) + " nodes, " + waiting.reason +
                             ") can start with " + std::to_string(idle) +
                             " idle + released nodes";
  for (const ShrinkOffer& o : TakeOffers(waiting, freed, need)) {
    Candidate& c = cycle_.candidates[o.candidate];
    ChangeNodes(c, [&](NodeList& nodes) {
      nodes.erase(std::find(nodes.begin(), nodes.end(), o.node));
    });
    cycle_.reasons[c.job->job_id] = reason;
  }
  cycle_.Claim(pool, ListOf(freed));
}

// Requeues best-effort jobs (ChooseVictims) and shrinks others for the rest of `need`; false
// when even preempting every best-effort job would not start `waiting`.
bool RoomMaker::Preempt(const SlurmJob& waiting, PartitionPool& pool, std::set<int> freed, int need,
                        bool for_rigid) {
  std::vector<Candidate*> victims =
      ChooseVictims(waiting, static_cast<int>(freed.size()), need, for_rigid);
  if (victims.empty()) return false;
  const std::string who = for_rigid ? "rigid job " + std::to_string(waiting.job_id) + " (" +
                                          std::to_string(need) + " nodes, Slurm's next)"
                                    : "guaranteed job " + std::to_string(waiting.job_id) + " (" +
                                          std::to_string(need) + " nodes, within account " +
                                          waiting.account + "'s quota)";
  const std::string reason =
      who + " cannot start by shrinking alone: " + std::to_string(freed.size()) + " idle node(s)";
  for (Candidate* v : victims) {
    std::vector<std::string> names;
    for (int n : v->nodes) names.push_back(cycle_.nodes.Name(n));
    cycle_.preemptions.push_back({v->job->job_id, std::move(names), reason});
    freed.insert(v->nodes.begin(), v->nodes.end());
    ChangeNodes(*v, [](NodeList& nodes) { nodes.clear(); });
    v->preempted = true;
  }
  ShrinkFor(waiting, pool, std::move(freed), need);
  return true;
}

// The fewest best-effort jobs whose whole node sets, with `idle` nodes and what the others can
// release by shrinking, reach `need`: each round the smallest job that completes it, else the
// largest; empty if they cannot. For a rigid job, only jobs that have held their nodes for the
// minimum resize interval.
std::vector<Candidate*> RoomMaker::ChooseVictims(const SlurmJob& waiting, int idle, int need,
                                                 bool for_rigid) {
  std::vector<Candidate*> open;
  int have = idle;
  for (Candidate* c : cycle_.InPartition(waiting.partition, false)) {
    have += ReleasableCount(*c);
    const bool untouched = c->nodes == c->original;
    const std::int64_t since =
        std::max(c->slurm->start_time, static_cast<std::int64_t>(c->job->last_resize));
    const bool settled = cycle_.view.now - since >= cycle_.options.min_resize_interval_s;
    if (c->slurm->sla_class == SlaClass::kBestEffort && untouched && (settled || !for_rigid)) {
      open.push_back(c);
    }
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

}  // namespace elastic::policy
