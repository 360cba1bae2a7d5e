// Step 2 of the resize decision (resize_decision.h): the elastic jobs step 1 left alone grow
// (or, by a Policy, shrink for steeper ones) among the idle nodes nobody claimed, planned or
// reserved, partition by partition: by the configured Policy through the live adapter
// (live_policy.h), else by the original greedy rule. One cycle, one thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "scheduler/policy/policy.h"
#include "scheduler/policy/resize_cycle.h"

namespace elastic::policy {

// Whether growing `job` takes a requeue instead of an expansion job: it holds GPUs as gres (an
// --exclusive job on gres nodes does too), and Slurm 22.05 refuses to merge an expansion into a
// job with allocated GRES ("JobId=J has allocated GRES").
bool GrowsViaRequeue(const SlurmJob& job);

class ResizeGrowth {
 public:
  // `policy`: nullptr for the greedy rule.
  ResizeGrowth(ResizeCycle& cycle, const Policy* policy);
  // Every partition in name order; changes the cycle's candidates, reasons and holds.
  void Run();

 private:
  // `idle`: the partition's idle nodes this cycle (a requeue gives the job's own back too).
  bool MayGrow(const Candidate& c, int idle, std::string& why) const;
  std::string RequeueGapReason(const Candidate& c, int idle) const;
  void Grow(const std::string& partition, PartitionPool& pool);
  // Gains per node of c growing onto free[next], free[next + 1], ... (gains[k - 1]: k more
  // nodes), as far as its MAX and the free nodes allow.
  void PriceGrowth(const Candidate& c, const std::vector<int>& free, std::size_t next,
                   std::vector<double>& gains) const;
  void DecideByPolicy(const std::string& partition, PartitionPool& pool);
  std::vector<Candidate*> Policed(const std::string& partition);
  // One partition's LivePartition as it is built: its nodes numbered as they are added, each
  // once, with the cycle's index of each (room for `expected` nodes).
  struct LiveNodes {
    LiveNodes(const NodeTable& nodes, std::size_t expected)
        : table(nodes), index(static_cast<std::size_t>(nodes.size()), -1) {
      cycle.reserve(expected);
      live.nodes.reserve(expected);
      live.free.reserve(expected);
    }
    int Add(int n, bool free = false);  // the partition's index of cycle node n
    const NodeTable& table;
    std::vector<int> index;  // by cycle index: the partition's, -1 none yet
    std::vector<int> cycle;  // by partition index: the cycle's
    LivePartition live;
  };
  LiveJob ToLiveJob(const Candidate& c, bool may_resize, LiveNodes& nodes) const;
  void Apply(const std::vector<LiveChange>& changes, const std::vector<Candidate*>& jobs,
             const LiveNodes& nodes);

  ResizeCycle& cycle_;
  const Policy* policy_;
  std::vector<bool> granted_;        // by node index: grown into this cycle (policy path)
  std::vector<bool> policed_;        // by candidate: the policy has seen it this cycle
  // By partition: the waiting job that needs the fewest nodes (RequeueGapReason), found once.
  std::map<std::string, const SlurmJob*> smallest_waiting_;
};

}  // namespace elastic::policy
