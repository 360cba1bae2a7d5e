// NodeTable: the cycle's nodes by index in name order (see node_table.h).
#include "scheduler/policy/node_table.h"

#include <algorithm>

#include "scheduler/policy/node_types.h"

namespace elastic::policy {

NodeTable::NodeTable(const SlurmView& view, const std::map<std::string, double>& node_types) {
  std::vector<std::string_view> names;
  names.reserve(view.nodes.size());
  for (const SlurmNode& node : view.nodes) names.push_back(node.name);
  Index(names);
  // Nodes only jobs name: rare (a node gone from the view), so checked before re-indexing.
  bool missing = false;
  for (const SlurmJob& job : view.jobs) {
    if (job.state != SlurmJobState::kRunning) continue;
    for (const std::string& n : job.nodes) {
      if (Find(n) < 0) names.push_back(n), missing = true;
    }
  }
  if (missing) Index(names);
  for (const SlurmNode& node : view.nodes) {
    LiveNode& live = nodes_[Find(node.name)];  // the name stays: index_ points into it
    const NodeType type = NodeTypeOf(node, node_types);
    live.cpus = node.cpus;
    live.devices = std::max(node.devices, 1);
    live.device_type = type.name;
    live.capability = type.capability;
  }
}

void NodeTable::Index(std::vector<std::string_view> names) {
  // Slurm lists nodes in its configuration's order, usually sorted already.
  if (!std::is_sorted(names.begin(), names.end())) std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::vector<LiveNode> nodes(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) nodes[i] = LiveNode{std::string(names[i]), 0, 1};
  nodes_ = std::move(nodes);
  index_.clear();
  index_.reserve(nodes_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    index_.emplace(nodes_[i].name, static_cast<int>(i));
  }
}

int NodeTable::Find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

std::vector<int> NodeTable::FindAll(const std::vector<std::string>& names) const {
  std::vector<int> out;
  out.reserve(names.size());
  for (const std::string& n : names) {
    const int i = Find(n);
    if (i >= 0) out.push_back(i);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace elastic::policy
