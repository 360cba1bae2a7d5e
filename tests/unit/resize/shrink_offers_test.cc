// ShrinkOffers: offers come out by loss, then job id, candidate and release rank; replacing a
// candidate's offers takes its old ones out; a walk can leave some candidates out, merge others'
// offers in instead, and stop early.
#include "scheduler/policy/shrink_offers.h"

#include <gtest/gtest.h>

namespace elastic::policy {
namespace {

ShrinkOffer Offer(double loss, std::uint32_t job, int candidate, int rank, int node) {
  return {loss, job, candidate, rank, node};
}

std::vector<int> Nodes(const ShrinkOffers& offers, const std::vector<int>& replaced = {},
                       const std::vector<ShrinkOffer>& instead = {}, std::size_t stop = 100) {
  std::vector<int> nodes;
  offers.Walk(replaced, instead, [&](const ShrinkOffer& o) {
    nodes.push_back(o.node);
    return nodes.size() < stop;
  });
  return nodes;
}

TEST(ShrinkOffersTest, OrderedByLossThenJobThenCandidateThenRank) {
  ShrinkOffers offers;
  offers.Set(0, {Offer(0.5, 7, 0, 0, 10), Offer(0.5, 7, 0, 1, 11)});
  offers.Set(1, {Offer(0.5, 3, 1, 0, 20), Offer(0.9, 3, 1, 1, 21)});
  offers.Set(2, {Offer(0.1, 9, 2, 0, 30)});
  EXPECT_EQ(offers.size(), 5u);
  EXPECT_EQ(Nodes(offers), (std::vector<int>{30, 20, 10, 11, 21}));
  EXPECT_EQ(Nodes(offers, {}, {}, 2), (std::vector<int>{30, 20}));
}

TEST(ShrinkOffersTest, SetReplacesACandidatesOffers) {
  ShrinkOffers offers;
  offers.Set(0, {Offer(0.2, 1, 0, 0, 10), Offer(0.4, 1, 0, 1, 11)});
  offers.Set(1, {Offer(0.3, 2, 1, 0, 20)});
  offers.Set(0, {Offer(0.4, 1, 0, 0, 11)});  // node 10 released
  EXPECT_EQ(Nodes(offers), (std::vector<int>{20, 11}));
  offers.Set(1, {});
  EXPECT_EQ(Nodes(offers), (std::vector<int>{11}));
  EXPECT_EQ(offers.size(), 1u);
}

TEST(ShrinkOffersTest, WalkReplacesSomeCandidatesOffers) {
  ShrinkOffers offers;
  offers.Set(0, {Offer(0.2, 1, 0, 0, 10), Offer(0.4, 1, 0, 1, 11)});
  offers.Set(1, {Offer(0.3, 2, 1, 0, 20)});
  offers.Set(3, {Offer(0.6, 4, 3, 0, 40)});
  // Candidate 0 releases node 11 first for this waiting job; candidate 3 has nothing to offer.
  const std::vector<ShrinkOffer> instead = {Offer(0.2, 1, 0, 0, 11), Offer(0.4, 1, 0, 1, 10)};
  EXPECT_EQ(Nodes(offers, {0, 3}, instead), (std::vector<int>{11, 20, 10}));
  EXPECT_EQ(Nodes(offers, {0, 3}, instead, 1), (std::vector<int>{11}));
  EXPECT_EQ(Nodes(offers, {1}, {}), (std::vector<int>{10, 11, 40}));
  EXPECT_EQ(Nodes(offers), (std::vector<int>{10, 20, 11, 40}));  // the walks changed nothing
}

}  // namespace
}  // namespace elastic::policy
