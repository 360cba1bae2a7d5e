// Series-parallel decomposition of a layer graph for DeepPool's multi-chain graph reduction
// (§4.2, Figure 7): the graph becomes a chain of steps, where a step either follows its
// predecessor directly or is the joining layer of a block whose branches start at the previous
// step (the branching layer). Branches are chains again and may hold nested blocks.
//
// Accepted graphs: one first layer (no inputs), one last layer (no consumers), and every fork
// joined at its immediate post-dominator by a layer whose inputs are exactly the branch ends.
// Inception's inner concatenations must be their own layers (as torch.cat is in torchvision);
// residual shortcuts are branches with no layers (a direct fork→join edge) or one projection.
// Pure; the result is a plain value.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "perf/burst/profile.h"

namespace elastic::burst {

struct Step {
  int layer = 0;
  // -1: `layer` consumes the previous step's layer directly. Otherwise `layer` is the join of
  // Decomposition::blocks[block], whose fork is the previous step's layer.
  int block = -1;
};

// A chain of steps. Every series starts and ends with a plain layer step.
struct Series {
  std::vector<Step> steps;
};

struct Block {
  int fork = 0;
  int join = 0;
  // One per consumer of the fork, in the fork's consumer order (layer index order). An empty
  // series is a direct fork→join edge (an identity shortcut).
  std::vector<Series> branches;
};

struct Decomposition {
  Series main;                // from the first layer to the last
  std::vector<Block> blocks;  // nested blocks come before the blocks that contain them
};

// REQUIRES: ValidateProfile(profile) is empty. Fails when the graph is not series-parallel, naming
// the offending layer.
Result<Decomposition> DecomposeGraph(const ModelProfile& profile);

// Index of the last layer of a non-empty branch, or the fork for an empty one: the layer whose
// output the join receives from that branch.
int BranchEnd(const Block& block, const Series& branch);

}  // namespace elastic::burst
