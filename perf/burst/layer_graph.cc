// Series-parallel decomposition: immediate post-dominators find each fork's join, then a walk
// from the first layer builds the nested chains, checking every edge it relies on.
#include "perf/burst/layer_graph.h"

#include <algorithm>

namespace elastic::burst {
namespace {

class Decomposer {
 public:
  explicit Decomposer(const ModelProfile& profile) : profile_(profile) {
    size_t n = profile.layers.size();
    consumers_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      for (int input : profile.layers[i].inputs) consumers_[input].push_back(static_cast<int>(i));
    }
    ComputePostDominators();
  }

  Result<Decomposition> Run() {
    Decomposition graph;
    int n = static_cast<int>(profile_.layers.size());
    for (int i = 0; i + 1 < n; ++i) {
      if (consumers_[i].empty()) {
        return Fail(Label(i) + ": its output is never used; only the last layer (" +
                    Label(n - 1) + ") may have no consumers");
      }
    }
    std::string error = ParseSeries(0, -1, graph.main);
    if (!error.empty()) return Fail(error);
    if (visited_ != n) return Fail("internal: decomposition visited " + std::to_string(visited_) +
                                   " of " + std::to_string(n) + " layers");
    graph.blocks = std::move(blocks_);
    return Result<Decomposition>::Ok(std::move(graph));
  }

 private:
  static Result<Decomposition> Fail(std::string message) {
    return Result<Decomposition>::Fail(std::move(message));
  }

  std::string Label(int index) const {
    return "layer \"" + profile_.layers[index].name + "\"";
  }

  // ipdom_[v]: the first layer every path from v to the last layer passes through (-1 for the
  // last layer). Reverse topological order; chains meet by walking up from the lower index
  // (Cooper, Harvey & Kennedy's intersection on a post-dominator tree).
  void ComputePostDominators() {
    int n = static_cast<int>(profile_.layers.size());
    ipdom_.assign(n, -1);
    for (int v = n - 1; v >= 0; --v) {
      if (consumers_[v].empty()) continue;
      int meet = consumers_[v][0];
      for (size_t k = 1; k < consumers_[v].size(); ++k) meet = Intersect(meet, consumers_[v][k]);
      ipdom_[v] = meet;
    }
  }

  int Intersect(int a, int b) const {
    while (a != b && a >= 0 && b >= 0) {
      if (a < b) a = ipdom_[a];
      else b = ipdom_[b];
    }
    return a == b ? a : -1;
  }

  // Walks the chain from `first` until the layer whose consumer is `stop` (-1: the last layer).
  std::string ParseSeries(int first, int stop, Series& out) {
    int current = first;
    int via_block = -1;
    while (true) {
      out.steps.push_back({current, via_block});
      ++visited_;
      via_block = -1;
      const std::vector<int>& next = consumers_[current];
      if (next.empty()) {
        if (stop >= 0) return Label(current) + ": ends the model inside a branch";
        return {};
      }
      if (next.size() == 1) {
        if (next[0] == stop) return {};
        if (profile_.layers[next[0]].inputs.size() != 1) {
          return Label(next[0]) + " joins " + std::to_string(profile_.layers[next[0]].inputs.size()) +
                 " inputs but is not where the branches from one fork meet; only series-parallel "
                 "graphs are supported";
        }
        current = next[0];
        continue;
      }
      std::string error = ParseBlock(current, stop, via_block);
      if (error.empty()) current = blocks_[via_block].join;
      else return error;
    }
  }

  std::string ParseBlock(int fork, int stop, int& block_id) {
    int join = ipdom_[fork];
    if (join < 0) return Label(fork) + ": its branches never meet again";
    if (stop >= 0 && join >= stop) {
      return "the branches of " + Label(fork) + " meet at " + Label(join) +
             " together with an outer fork's branches; add an explicit concat layer so that "
             "blocks nest";
    }
    Block block;
    block.fork = fork;
    block.join = join;
    std::vector<int> ends;
    for (int start : consumers_[fork]) {
      Series branch;
      if (start != join) {
        if (profile_.layers[start].inputs.size() != 1) {
          return Label(start) + " mixes the output of fork " + Label(fork) +
                 " with other inputs before the join " + Label(join);
        }
        std::string error = ParseSeries(start, join, branch);
        if (!error.empty()) return error;
      }
      block.branches.push_back(std::move(branch));
      ends.push_back(BranchEnd(block, block.branches.back()));
    }
    std::vector<int> inputs = profile_.layers[join].inputs;
    std::sort(inputs.begin(), inputs.end());
    std::sort(ends.begin(), ends.end());
    if (inputs != ends) {
      return Label(join) + " is where the branches of " + Label(fork) +
             " meet, but its inputs are not exactly those branches' last layers";
    }
    blocks_.push_back(std::move(block));
    block_id = static_cast<int>(blocks_.size()) - 1;
    return {};
  }

  const ModelProfile& profile_;
  std::vector<std::vector<int>> consumers_;
  std::vector<int> ipdom_;
  std::vector<Block> blocks_;
  int visited_ = 0;
};

}  // namespace

int BranchEnd(const Block& block, const Series& branch) {
  return branch.steps.empty() ? block.fork : branch.steps.back().layer;
}

Result<Decomposition> DecomposeGraph(const ModelProfile& profile) {
  return Decomposer(profile).Run();
}

}  // namespace elastic::burst
