// NodeTable: nodes numbered in name order whatever the view's order, a name listed twice keeps
// its last entry, each view position maps to its node, nodes only a running job names are added
// with one device, lookups of unknown names fail cleanly.
#include "scheduler/policy/node_table.h"

#include <gtest/gtest.h>

namespace elastic::policy {
namespace {

SlurmNode Node(const std::string& name, int devices) {
  SlurmNode node;
  node.name = name;
  node.cpus = 64;
  node.devices = devices;
  node.gpu_type = devices > 1 ? "a100" : "";
  return node;
}

TEST(NodeTableTest, IndicesFollowNameOrder) {
  SlurmView view;
  view.nodes = {Node("n3", 4), Node("n1", 8), Node("n2", 1)};
  const NodeTable table(view, {{"a100", 2.0}});
  ASSERT_EQ(table.size(), 3);
  EXPECT_EQ(table.Find("n1"), 0);
  EXPECT_EQ(table.Find("n2"), 1);
  EXPECT_EQ(table.Find("n3"), 2);
  EXPECT_EQ(table.Find("n4"), -1);
  EXPECT_EQ(table.Name(2), "n3");
  EXPECT_EQ(table.Devices(0), 8);
  EXPECT_EQ(table.Devices(1), 1);  // a CPU node counts one device
  EXPECT_EQ(table.Node(0).cpus, 64);
  EXPECT_EQ(table.Node(0).device_type, "a100");
  EXPECT_DOUBLE_EQ(table.Node(0).capability, 2.0);
  EXPECT_EQ(table.FindAll({"n3", "zz", "n1", "n3"}), (std::vector<int>{0, 2}));
  EXPECT_EQ(table.OfViewNode(0), 2);  // the view's n3
  EXPECT_EQ(table.OfViewNode(1), 0);
  EXPECT_EQ(table.OfViewNode(2), 1);
}

TEST(NodeTableTest, ASortedViewKeepsItsPositions) {
  SlurmView view;
  view.nodes = {Node("a", 1), Node("b", 2), Node("c", 4)};
  const NodeTable table(view, {});
  for (int k = 0; k < 3; ++k) EXPECT_EQ(table.OfViewNode(k), k);
  EXPECT_EQ(table.Devices(table.OfViewNode(2)), 4);
}

TEST(NodeTableTest, LastEntryOfARepeatedNameWins) {
  SlurmView view;
  view.nodes = {Node("n1", 2), Node("n1", 4)};
  const NodeTable table(view, {});
  ASSERT_EQ(table.size(), 1);
  EXPECT_EQ(table.Devices(0), 4);
  EXPECT_EQ(table.OfViewNode(0), 0);
  EXPECT_EQ(table.OfViewNode(1), 0);
}

TEST(NodeTableTest, NodesOnlyARunningJobNamesAreAdded) {
  SlurmView view;
  view.nodes = {Node("n2", 4)};
  SlurmJob running;
  running.state = SlurmJobState::kRunning;
  running.nodes = {"n1", "n2"};
  SlurmJob pending;
  pending.state = SlurmJobState::kPending;
  pending.nodes = {"n9"};
  view.jobs = {running, pending};
  const NodeTable table(view, {});
  ASSERT_EQ(table.size(), 2);
  EXPECT_EQ(table.Find("n1"), 0);
  EXPECT_EQ(table.Find("n2"), 1);
  EXPECT_EQ(table.Find("n9"), -1);
  EXPECT_EQ(table.Devices(0), 1);
  EXPECT_EQ(table.Node(0).cpus, 0);
  EXPECT_EQ(table.Node(0).device_type, "node");
  EXPECT_EQ(table.Devices(1), 4);
  EXPECT_EQ(table.OfViewNode(0), 1);  // n2, after the job's n1
}

}  // namespace
}  // namespace elastic::policy
