// The nodes a partition's elastic jobs could release for waiting jobs (step 1 of
// resize_decision.h), kept in release order across the cycle's waiting jobs: a job's offers
// change only when that job shrinks, so they are priced once and again only for the job that
// changed, not for every waiting job.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <vector>

namespace elastic::policy {

// A node an elastic job could release, and the speedup it loses by it. Offers are taken in the
// order of operator<: least loss first, then lower job id, then the job's place among the
// cycle's candidates, then its own release order (`rank`).
struct ShrinkOffer {
  double loss = 0.0;
  std::uint32_t job_id = 0;
  int candidate = 0;  // the job's place in the cycle
  int rank = 0;       // its place in the job's release order
  int node = 0;       // NodeTable index

  bool operator<(const ShrinkOffer& o) const {
    if (loss != o.loss) return loss < o.loss;
    if (job_id != o.job_id) return job_id < o.job_id;
    if (candidate != o.candidate) return candidate < o.candidate;
    return rank < o.rank;
  }
};

// Every job's offers in one order. Not thread-safe.
class ShrinkOffers {
 public:
  // Replaces `candidate`'s offers (none: it offers nothing now).
  // REQUIRES: every offer's `candidate` is `candidate`; 0 <= candidate.
  void Set(int candidate, std::vector<ShrinkOffer> offers);
  // Visits the offers in order, those of `replaced` candidates (ascending) left out and
  // `instead` (sorted) merged in, until `visit` returns false.
  void Walk(const std::vector<int>& replaced, const std::vector<ShrinkOffer>& instead,
            const std::function<bool(const ShrinkOffer&)>& visit) const;
  std::size_t size() const { return ordered_.size(); }

 private:
  std::set<ShrinkOffer> ordered_;
  std::vector<std::vector<ShrinkOffer>> by_candidate_;  // what Set put in, to take it out
};

}  // namespace elastic::policy
