// The nodes of one resize decision cycle numbered in name order, so that a set of nodes is a set
// of ints that iterates as the names would, and a node's devices and type are read by index.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/policy/live_policy.h"
#include "scheduler/policy/slurm_view.h"

namespace elastic::policy {

// Immutable once built. Thread-safety: const methods only, so any number of readers.
class NodeTable {
 public:
  // Every node of `view` (a name listed twice: its last entry) typed by `node_types`
  // (node_types.h), and every node a running job of `view` holds: one the view does not list has
  // one device, no CPUs and no type, as the node-for-device model counted it.
  NodeTable(const SlurmView& view, const std::map<std::string, double>& node_types);

  // The index of `name`, -1 when the table does not hold it.
  int Find(std::string_view name) const;
  // Indices of those of `names` the table holds, ascending, without repeats.
  std::vector<int> FindAll(const std::vector<std::string>& names) const;
  const std::string& Name(int index) const { return nodes_[index].name; }
  const LiveNode& Node(int index) const { return nodes_[index]; }
  // The index of the view's k-th node (SlurmView::nodes[k]).
  int OfViewNode(std::size_t k) const { return view_index_[k]; }
  int Devices(int index) const { return nodes_[index].devices; }
  int size() const { return static_cast<int>(nodes_.size()); }

 private:
  // Numbers `names` in name order; true when they came sorted and unique (node k is names[k]).
  bool Index(std::vector<std::string_view> names);

  // Open addressing on FNV-1a: a cycle looks names up ~100,000 times at 10,000 nodes (planned
  // starts, job node lists), and a node-based hash map spent most of it chasing pointers.
  static std::uint64_t Hash(std::string_view name);

  std::vector<LiveNode> nodes_;       // by index: name order
  std::vector<std::uint64_t> hash_;   // by index: Hash(name)
  std::vector<int> slots_;            // power-of-two size, -1 empty, else an index
  std::vector<int> view_index_;       // by position in the view's node list: its index
};

}  // namespace elastic::policy
