// `backfill`: rigid jobs, priority FIFO with EASY backfill (Slurm's default behaviour).
//
// Jobs start in queue order while they fit. The first job that does not fit (the head) gets a
// reservation: the earliest time, over device types, at which running jobs' expected ends free
// enough devices of one type. Later jobs may start now only if that cannot delay the head: they
// use another device type, or end (by their expected run time) before the reservation, or fit in
// the devices left over at the reservation ("extra" devices). Only the head is protected (EASY,
// not conservative backfill). Reservations count devices only; CPU/memory limits are checked
// when placing, not when reserving. Each job uses a single device type.
#pragma once

#include "scheduler/policy/policy.h"

namespace elastic::policy {

class BackfillPolicy final : public Policy {
 public:
  explicit BackfillPolicy(const PolicyOptions& options) : options_(options) {}
  std::string_view Name() const override { return "backfill"; }
  bool WantsElasticJobs() const override { return false; }
  PolicyOutput Decide(const ClusterState& cluster, const std::vector<JobState>& jobs,
                      double now_s) const override;

 private:
  PolicyOptions options_;
};

}  // namespace elastic::policy
