// Series-parallel decomposition: chains, residual shortcuts, nested blocks, and the graphs the
// planner refuses (with the layer named).
#include "perf/burst/layer_graph.h"

#include <gtest/gtest.h>

#include "tests/unit/burst/burst_test_util.h"

namespace elastic::burst {
namespace {

using testing::MakeLayer;
using testing::MakeProfile;

Layer L(const std::string& name, std::vector<int> inputs = {}) {
  return MakeLayer(name, {{1, 1}}, 0, 1, std::move(inputs));
}

std::vector<int> Layers(const Series& series) {
  std::vector<int> layers;
  for (const Step& step : series.steps) layers.push_back(step.layer);
  return layers;
}

TEST(DecomposeGraph, ChainIsOneSeries) {
  Result<Decomposition> d = DecomposeGraph(MakeProfile(1, 0, {L("a"), L("b"), L("c")}));
  ASSERT_EQ(d.error, "");
  EXPECT_EQ(Layers(d->main), (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(d->blocks.empty());
}

TEST(DecomposeGraph, ResidualShortcutIsAnEmptyBranch) {
  // 0 -> 1 -> 2 -> add(2, 0) -> 4
  Result<Decomposition> d = DecomposeGraph(
      MakeProfile(1, 0, {L("in"), L("c1", {0}), L("c2", {1}), L("add", {2, 0}), L("out", {3})}));
  ASSERT_EQ(d.error, "");
  EXPECT_EQ(Layers(d->main), (std::vector<int>{0, 3, 4}));
  EXPECT_EQ(d->main.steps[1].block, 0);
  ASSERT_EQ(d->blocks.size(), 1u);
  const Block& block = d->blocks[0];
  EXPECT_EQ(block.fork, 0);
  EXPECT_EQ(block.join, 3);
  ASSERT_EQ(block.branches.size(), 2u);
  EXPECT_EQ(Layers(block.branches[0]), (std::vector<int>{1, 2}));
  EXPECT_TRUE(block.branches[1].steps.empty());
  EXPECT_EQ(BranchEnd(block, block.branches[1]), 0);
}

TEST(DecomposeGraph, NestedBlocksComeFirst) {
  // Inception-E style: x -> {b1, s -> {s_a, s_b} -> s_cat} -> cat
  Result<Decomposition> d =
      DecomposeGraph(MakeProfile(1, 0,
                                 {L("x"), L("b1", {0}), L("s", {0}), L("s_a", {2}), L("s_b", {2}),
                                  L("s_cat", {3, 4}), L("cat", {1, 5})}));
  ASSERT_EQ(d.error, "");
  ASSERT_EQ(d->blocks.size(), 2u);
  EXPECT_EQ(d->blocks[0].fork, 2);
  EXPECT_EQ(d->blocks[0].join, 5);
  EXPECT_EQ(d->blocks[1].fork, 0);
  EXPECT_EQ(d->blocks[1].join, 6);
  const Series& branch = d->blocks[1].branches[1];
  EXPECT_EQ(Layers(branch), (std::vector<int>{2, 5}));
  EXPECT_EQ(branch.steps[1].block, 0);
}

TEST(DecomposeGraph, RefusesGraphsThatAreNotSeriesParallel) {
  // Branches of s meet at the outer join without a concat of their own.
  EXPECT_NE(DecomposeGraph(MakeProfile(1, 0, {L("x"), L("b1", {0}), L("s", {0}), L("s_a", {2}),
                                              L("s_b", {2}), L("cat", {1, 3, 4})}))
                .error.find("add an explicit concat layer"),
            std::string::npos);
  // A cross edge: c consumes a (branch 1) and b (branch 2) before the join.
  std::string cross = DecomposeGraph(MakeProfile(1, 0, {L("x"), L("a", {0}), L("b", {0}),
                                                        L("c", {1, 2}), L("d", {1}),
                                                        L("j", {3, 4})}))
                          .error;
  EXPECT_NE(cross, "");
  // A layer whose output is never used.
  EXPECT_EQ(DecomposeGraph(MakeProfile(1, 0, {L("x"), L("dead", {0}), L("y", {0})})).error,
            "layer \"dead\": its output is never used; only the last layer (layer \"y\") may "
            "have no consumers");
}

}  // namespace
}  // namespace elastic::burst
