// The resize order (design.md §3): the one type that goes from elasticd's registry over the wire
// to the supervisor's state machine. Plain data, no JSON (the codec is messages.h), so the
// supervisor's pure state machine can take it without the wire's dependencies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace elastic::daemon {

// One generation per node set: generations only count up, so an old order is never mistaken for
// a new one. elasticd issues it from the resize decision's proposal (policy::ResizeProposal,
// converted in IssueOrder) or an admin's `elasticd resize`.
struct ResizeOrder {
  std::uint64_t generation = 0;
  bool grow = false;                       // on the wire: "kind": "grow" | "shrink"
  std::vector<std::string> target_nodes;   // the job's whole node set afterwards
  std::vector<std::string> changed_nodes;  // grow: nodes to add; shrink: nodes to release
  std::string reason;
  // elasticd's own bookkeeping (the order timeout), kept in its registry file; never on the
  // wire, so 0 on the supervisor's side.
  std::int64_t issued_unix = 0;

  // The job's node count once carried out (the wire's "nodes").
  int nodes() const { return static_cast<int>(target_nodes.size()); }
};

}  // namespace elastic::daemon
