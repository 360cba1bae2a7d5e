// DecideResizes: shrink for waiting jobs (room_maker.h), then grow into nodes nobody planned for
// (resize_growth.h); see resize_decision.h.
#include "scheduler/policy/resize_decision.h"

#include <algorithm>
#include <iterator>

#include "scheduler/model/throughput_model.h"
#include "scheduler/policy/resize_cycle.h"
#include "scheduler/policy/resize_growth.h"
#include "scheduler/policy/room_maker.h"

namespace elastic::policy {
namespace {

std::vector<std::string> Names(const NodeTable& table, const NodeList& nodes) {
  std::vector<std::string> names;
  names.reserve(nodes.size());
  for (int n : nodes) names.push_back(table.Name(n));
  return names;
}

// The orders: every job whose planned node set differs from Slurm's, but those preempted.
ResizeDecision Finish(ResizeCycle& cycle) {
  ResizeDecision decision;
  for (const Candidate& c : cycle.candidates) {
    if (c.preempted || c.nodes == c.original) continue;
    ResizeProposal order;
    order.job_id = c.job->job_id;
    order.from_nodes = static_cast<int>(c.original.size());
    order.to_nodes = static_cast<int>(c.nodes.size());
    order.kind = order.to_nodes > order.from_nodes ? ResizeKind::kGrow : ResizeKind::kShrink;
    order.target_nodes = Names(cycle.nodes, c.nodes);
    const NodeList& big = order.kind == ResizeKind::kGrow ? c.nodes : c.original;
    const NodeList& small = order.kind == ResizeKind::kGrow ? c.original : c.nodes;
    NodeList changed;
    std::set_difference(big.begin(), big.end(), small.begin(), small.end(),
                        std::back_inserter(changed));
    order.changed_nodes = Names(cycle.nodes, changed);
    order.via_requeue = order.kind == ResizeKind::kGrow && GrowsViaRequeue(*c.slurm);
    order.reason = cycle.reasons[c.job->job_id];
    decision.proposals.push_back(std::move(order));
  }
  decision.held_back = std::move(cycle.held);
  decision.preemptions = std::move(cycle.preemptions);
  return decision;
}

ResizeDecision Decide(const SlurmView& view, const std::vector<ElasticJob>& jobs,
                      const ResizeDecisionOptions& options, const Policy* policy) {
  ResizeCycle cycle(view, jobs, options);
  RoomMaker(cycle, jobs).Run();
  ResizeGrowth(cycle, policy).Run();
  ResizeDecision decision = Finish(cycle);
  decision.nice_lifts = ChooseNiceLifts(view, options.nice_lift);
  return decision;
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

ResizeDecision DecideResizes(const SlurmView& view, const std::vector<ElasticJob>& jobs,
                             const ResizeDecisionOptions& options) {
  return Decide(view, jobs, options, nullptr);
}

ResizeDecision DecideResizes(const SlurmView& view, const std::vector<ElasticJob>& jobs,
                             const ResizeDecisionOptions& options, const Policy& policy) {
  return Decide(view, jobs, options, &policy);
}

}  // namespace elastic::policy
