// NodeTable: the cycle's nodes by index in name order (see node_table.h).
#include "scheduler/policy/node_table.h"

#include <algorithm>

#include "scheduler/policy/node_types.h"

namespace elastic::policy {

NodeTable::NodeTable(const SlurmView& view, const std::map<std::string, double>& node_types) {
  std::vector<std::string_view> names;
  names.reserve(view.nodes.size());
  for (const SlurmNode& node : view.nodes) names.push_back(node.name);
  bool in_view_order = Index(names);
  // Nodes only jobs name: rare (a node gone from the view), so checked before re-indexing.
  bool missing = false;
  for (const SlurmJob& job : view.jobs) {
    if (job.state != SlurmJobState::kRunning) continue;
    for (const std::string& n : job.nodes) {
      if (Find(n) < 0) names.push_back(n), missing = true;
    }
  }
  if (missing) {
    Index(names);
    in_view_order = false;
  }
  // Slurm lists its nodes sorted: then view node k is node k, found without a lookup.
  view_index_.resize(view.nodes.size());
  for (std::size_t k = 0; k < view.nodes.size(); ++k) {
    view_index_[k] = in_view_order ? static_cast<int>(k) : Find(view.nodes[k].name);
  }
  for (std::size_t k = 0; k < view.nodes.size(); ++k) {
    const SlurmNode& node = view.nodes[k];
    LiveNode& live = nodes_[view_index_[k]];
    const NodeType type = NodeTypeOf(node, node_types);
    live.cpus = node.cpus;
    live.devices = std::max(node.devices, 1);
    live.device_type = type.name;
    live.capability = type.capability;
  }
}

bool NodeTable::Index(std::vector<std::string_view> names) {
  // Slurm lists nodes in its configuration's order, usually sorted already.
  const bool sorted = std::is_sorted(names.begin(), names.end());
  if (!sorted) std::sort(names.begin(), names.end());
  const std::size_t listed = names.size();
  names.erase(std::unique(names.begin(), names.end()), names.end());
  nodes_.clear();
  nodes_.reserve(names.size());
  for (std::string_view name : names) nodes_.push_back(LiveNode{std::string(name), 0, 1});
  std::size_t size = 16;
  while (size < 2 * nodes_.size()) size *= 2;  // at most half full
  slots_.assign(size, -1);
  hash_.resize(nodes_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    hash_[i] = Hash(nodes_[i].name);
    std::size_t slot = hash_[i] & (size - 1);
    while (slots_[slot] >= 0) slot = (slot + 1) & (size - 1);
    slots_[slot] = static_cast<int>(i);
  }
  return sorted && names.size() == listed;
}

std::uint64_t NodeTable::Hash(std::string_view name) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char ch : name) h = (h ^ ch) * 1099511628211ULL;
  return h ^ (h >> 29);  // the low bits pick the slot: fold the high ones in
}

int NodeTable::Find(std::string_view name) const {
  const std::uint64_t h = Hash(name);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t slot = h & mask; slots_[slot] >= 0; slot = (slot + 1) & mask) {
    const int i = slots_[slot];
    if (hash_[i] == h && nodes_[i].name == name) return i;
  }
  return -1;
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
