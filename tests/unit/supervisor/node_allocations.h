// Test allocations for the plan choice: `n` nodes of one agent rank each with `cpus` CPUs.
#pragma once

#include "perf/rubick/plan_selection.h"

namespace elastic::agent {

inline NodeAllocation OneRankNodes(int n, int cpus) {
  NodeAllocation a;
  a.nodes = n;
  a.cpus_per_node = cpus;
  return a;
}

}  // namespace elastic::agent
