// Step 1 of the resize decision (resize_decision.h): for each waiting job, in the order Slurm
// starts them (guaranteed jobs within quota first), claim the idle nodes it will start on, or
// shrink elastic jobs (least speedup lost per released node first) or preempt best-effort ones
// so that it can start (for a guaranteed job within quota, or for a rigid one under
// preempt_for_rigid). The same whatever the policy of step 2. One cycle, one thread.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "scheduler/policy/resize_cycle.h"
#include "scheduler/policy/shrink_offers.h"

namespace elastic::policy {

class RoomMaker {
 public:
  RoomMaker(ResizeCycle& cycle, const std::vector<ElasticJob>& jobs);
  // Makes room for every waiting job of the view, changing the cycle's candidates and pools.
  void Run();

 private:
  void MakeRoomFor(const SlurmJob& waiting);
  bool Protected(const SlurmJob& job) const;
  // Changes `c`'s nodes, keeping its partition's releasable count and its offers.
  template <typename Change>
  void ChangeNodes(Candidate& c, Change change);
  std::vector<ShrinkOffer> OffersOf(const Candidate& c, const NodeList& planned) const;
  ShrinkOffers& OffersIn(const std::string& partition);
  std::vector<ShrinkOffer> TakeOffers(const SlurmJob& waiting, std::set<int>& freed,
                                      int need);
  void ShrinkFor(const SlurmJob& waiting, PartitionPool& pool, std::set<int> freed, int need);
  bool Preempt(const SlurmJob& waiting, PartitionPool& pool, std::set<int> freed, int need,
               bool for_rigid);
  std::vector<Candidate*> ChooseVictims(const SlurmJob& waiting, int idle, int need,
                                        bool for_rigid);
  int CandidateIndex(const Candidate& c) const {
    return static_cast<int>(&c - cycle_.candidates.data());
  }

  ResizeCycle& cycle_;
  std::map<std::uint32_t, bool> standing_;  // guaranteed jobs: within quota (sla_quota.h)
  std::map<std::string, std::uint32_t> slurm_next_;  // per partition: Slurm's next start
  // Per partition: nodes its elastic jobs not busy could release, kept by ChangeNodes.
  std::map<std::string, int> releasable_;
  // Per partition, built when a waiting job first needs shrinks there: every job's offers in
  // release order for a waiting job planned on none of its nodes.
  std::map<std::string, ShrinkOffers> offers_;
  // Which candidates hold each node (as Slurm reports them; CSR by NodeTable index).
  std::vector<int> holder_start_, holders_;
};

}  // namespace elastic::policy
