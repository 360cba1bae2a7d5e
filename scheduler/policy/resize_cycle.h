// What the steps of one resize decision cycle (resize_decision.h) share: the cycle's nodes by
// index, the elastic jobs with the node sets this cycle plans for them, each partition's idle
// nodes, and the orders' reasons, holds and preemptions decided so far. Internal to
// scheduler/policy; one cycle, one thread.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "scheduler/policy/node_table.h"
#include "scheduler/policy/resize_decision.h"
#include "scheduler/policy/slurm_view.h"

namespace elastic::policy {

using NodeList = std::vector<int>;  // NodeTable indices, ascending (name order)

bool Holds(const NodeList& nodes, int node);

// A registered elastic job joined with what Slurm says about it.
struct Candidate {
  const ElasticJob* job = nullptr;
  const SlurmJob* slurm = nullptr;
  NodeList nodes;          // its current nodes, updated as this cycle plans
  NodeList original;       // as Slurm reports them
  int batch_host = -1;     // NodeTable index; -1: none the table holds
  bool preempted = false;  // requeued this cycle for a guaranteed job (nodes then empty)
};

// Per partition: idle nodes usable now, and nodes that growth must leave alone.
struct PartitionPool {
  std::set<int> idle;
  std::set<int> releasing;     // in-flight shrinks free these soon: waiting jobs may count on them
  std::vector<bool> no_grow;   // by index: planned for a pending job, reserved, or claimed
};

// A job's size as the speedup model reads it: its nodes and the devices on them.
struct NodeSize {
  int nodes = 0;
  int devices = 0;
};

struct ResizeCycle {
  // REQUIRES: view, jobs and options outlive the cycle.
  ResizeCycle(const SlurmView& view, const std::vector<ElasticJob>& jobs,
              const ResizeDecisionOptions& options);

  NodeSize SizeOf(const NodeList& nodes) const;
  // DeviceSpeedup(ests, devices, nodes, options.comm_ratio), each value computed once per cycle:
  // step 1 prices every offer and the greedy rule every size of every job per grant, on a
  // handful of distinct shapes.
  double Speedup(int ests, int devices, int nodes) const;
  // Speedup gained per node going from `from` to `to` (a loss when `to` is smaller), priced on
  // the devices those nodes hold: the resource moved is whole nodes, the speed is the devices'.
  double Gain(const Candidate& c, NodeSize from, NodeSize to) const;
  // The partition's candidates not preempted (and, unless `include_busy`, not busy).
  std::vector<Candidate*> InPartition(const std::string& partition, bool include_busy);
  void Claim(PartitionPool& pool, const NodeList& nodes);

  const SlurmView& view;
  const ResizeDecisionOptions& options;
  const NodeTable nodes;
  std::map<std::string, PartitionPool> pools;
  std::vector<Candidate> candidates;
  std::map<std::uint32_t, std::string> reasons;
  std::vector<HeldBack> held;
  std::vector<Preemption> preemptions;

 private:
  mutable std::unordered_map<std::uint64_t, double> speedups_;  // Speedup's, by packed shape
};

// How many nodes `c` can release: those above its MIN, never the batch host.
int ReleasableCount(const Candidate& c);

}  // namespace elastic::policy
