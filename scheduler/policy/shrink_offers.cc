// ShrinkOffers: one ordered set of release offers across waiting jobs (see shrink_offers.h).
#include "scheduler/policy/shrink_offers.h"

#include <algorithm>

namespace elastic::policy {

void ShrinkOffers::Set(int candidate, std::vector<ShrinkOffer> offers) {
  const auto slot = static_cast<std::size_t>(candidate);
  if (slot >= by_candidate_.size()) by_candidate_.resize(slot + 1);
  for (const ShrinkOffer& old : by_candidate_[slot]) ordered_.erase(old);
  ordered_.insert(offers.begin(), offers.end());
  by_candidate_[slot] = std::move(offers);
}

void ShrinkOffers::Walk(const std::vector<int>& replaced, const std::vector<ShrinkOffer>& instead,
                        const std::function<bool(const ShrinkOffer&)>& visit) const {
  auto kept = ordered_.begin();
  auto other = instead.begin();
  auto skip = [&] {
    while (kept != ordered_.end() &&
           std::binary_search(replaced.begin(), replaced.end(), kept->candidate)) {
      ++kept;
    }
  };
  skip();
  while (kept != ordered_.end() || other != instead.end()) {
    const bool take_other = kept == ordered_.end() || (other != instead.end() && *other < *kept);
    if (!visit(take_other ? *other++ : *kept++)) return;
    if (!take_other) skip();
  }
}

}  // namespace elastic::policy
