// Burst-parallel plan search: Algorithm 1 on chains plus block reduction (see burst_split.h).
#include "perf/burst/burst_split.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>

#include "perf/burst/cost_model.h"
#include "perf/burst/transition_min.h"

namespace elastic::burst {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Relative slack on the amplification limit, so a layer exactly at the limit is not refused
// over rounding.
constexpr double kAmpSlack = 1e-9;

// DP values of one step of a series, indexed by candidate-count index.
struct StepState {
  std::vector<double> time;  // S: shortest time from the series' entry to the end of this layer
  std::vector<int> back;     // predecessor's candidate index (the fork's for the first step)
  std::vector<int> peak;     // most GPUs the series used along that path
  std::vector<int> first;    // candidate index of the series' first layer along that path
};
using SeriesStates = std::vector<StepState>;

struct BranchPick {
  int end = -1;  // candidate index of the branch's last layer (-1: branch without layers)
  int first = -1;
  int peak = 0;
  double time = 0.0;  // from the fork's end to the branch's data arriving at the join
  double entry = 0.0;
  double exit = 0.0;
  bool separate = false;
};

struct BlockOutcome {
  double time = kInf;
  int peak = 0;
  std::vector<BranchPick> picks;
};

struct BlockTable {
  std::vector<double> time;  // [fork index * K + join index]: tr(fork,g)→(join,h); kInf = none
  std::vector<int> peak;
};

// Per branch, by join candidate index: the end count a branch takes (-1: none reachable).
struct BranchEnds {
  std::vector<int> fastest;  // cheapest arrival at the join
  std::vector<int> nearest;  // cheapest transfer to the join
};

// One search over a decomposed graph: block tables (inner blocks first), the main chain, then
// the backtrace. Single use; not thread-safe.
class Search {
 public:
  Search(const ModelProfile& profile, const Decomposition& graph, const BurstSplitOptions& options,
         std::vector<int> counts)
      : profile_(profile), graph_(graph), options_(options), counts_(std::move(counts)),
        k_(static_cast<int>(counts_.size())),
        transition_(profile.network, counts_, options.exhaustive) {
    Precompute();
  }

  // Returns the shortest iteration time (kInf when no plan exists).
  double Run() {
    BuildTables();
    main_ = RunSeries(graph_.main, -1, -1);
    const StepState& last = main_.back();
    int last_layer = graph_.main.steps.back().layer;
    for (int c : allowed_[last_layer]) {
      if (last.time[c] < best_time_) {
        best_time_ = last.time[c];
        best_end_ = c;
      }
    }
    return best_time_;
  }

  Assignment Reconstruct() {
    assignment_.gpus.assign(profile_.layers.size(), 0);
    assignment_.separate.clear();
    for (const Block& block : graph_.blocks) {
      assignment_.separate.emplace_back(block.branches.size(), false);
    }
    ReconstructSeries(graph_.main, main_, best_end_);
    return assignment_;
  }

  int TableCount() const { return static_cast<int>(tables_.size()); }

 private:
  void Precompute() {
    size_t n = profile_.layers.size();
    comp_.assign(n, std::vector<double>(k_));
    sync_.assign(n, std::vector<double>(k_));
    cap_.assign(n, std::vector<double>(k_));
    allowed_.assign(n, {});
    batch_bytes_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const Layer& layer = profile_.layers[i];
      double single = LayerCompute(layer, profile_.global_batch, 1);
      batch_bytes_[i] = layer.output_bytes_per_sample * profile_.global_batch;
      for (int c = 0; c < k_; ++c) {
        int g = counts_[c];
        comp_[i][c] = LayerCompute(layer, profile_.global_batch, g);
        sync_[i][c] = SyncTime(profile_.network, layer.param_bytes, g);
        // Largest T the limit allows: Amp = T * g / comp(i,1) <= limit.
        cap_[i][c] = options_.amp_limit * single / g * (1.0 + kAmpSlack);
        if (comp_[i][c] + sync_[i][c] <= cap_[i][c]) allowed_[i].push_back(c);
      }
    }
  }

  double Comm(int layer, int from, int to) const {
    return TransitionTime(profile_.network, batch_bytes_[layer], counts_[from], counts_[to]);
  }
  double SeparateComm(int layer, int from, int to) const {
    return SeparateTransitionTime(profile_.network, batch_bytes_[layer], counts_[from],
                                  counts_[to]);
  }

  static void Reset(StepState& state, int k) {
    state.time.assign(k, kInf);
    state.back.assign(k, -1);
    state.peak.assign(k, 0);
    state.first.assign(k, -1);
  }

  // Algorithm 1 over one series. `entry_layer` (-1: none) at candidate `entry` feeds step 0.
  SeriesStates RunSeries(const Series& series, int entry_layer, int entry) {
    SeriesStates states(series.steps.size());
    for (size_t k = 0; k < series.steps.size(); ++k) {
      Reset(states[k], k_);
      const Step& step = series.steps[k];
      if (k == 0) {
        FirstStep(step.layer, entry_layer, entry, states[0]);
      } else if (step.block < 0) {
        ChainStep(series.steps[k - 1].layer, step.layer, states[k - 1], states[k]);
      } else {
        BlockStep(step.block, step.layer, states[k - 1], states[k]);
      }
    }
    return states;
  }

  void FirstStep(int layer, int entry_layer, int entry, StepState& out) const {
    for (int c : allowed_[layer]) {
      double t = comp_[layer][c] + sync_[layer][c];
      if (entry_layer >= 0) t += Comm(entry_layer, entry, c);
      if (t > cap_[layer][c]) continue;
      out.time[c] = t;
      out.back[c] = entry;
      out.peak[c] = counts_[c];
      out.first[c] = c;
    }
  }

  // S[i][g] = min over h of S[i-1][h] + comm(i-1,h)→(i,g) + comp(i,g) + sync(i,g), over edges
  // whose T keeps Amp(i,g) within the limit.
  void ChainStep(int previous, int layer, const StepState& in, StepState& out) {
    transition_.Load(batch_bytes_[previous], allowed_[previous], in.time);
    for (int c : allowed_[layer]) {
      double fixed = comp_[layer][c] + sync_[layer][c];
      TransitionMin::Best best = transition_.Find(c, fixed, cap_[layer][c]);
      if (best.source < 0) continue;
      int p = best.source;
      out.time[c] = in.time[p] + best.comm + fixed;
      out.back[c] = p;
      out.peak[c] = std::max(in.peak[p], counts_[c]);
      out.first[c] = in.first[p];
    }
  }

  // The block's table is the edge cost tr(fork,g)→(join,h); the join's limit is already in it.
  // Rows outer, so the table is read in memory order (it is K x K).
  void BlockStep(int block_id, int join, const StepState& in, StepState& out) const {
    const BlockTable& table = tables_[table_of_[block_id]];
    int fork = graph_.blocks[block_id].fork;
    std::vector<double>& best = out.time;  // without the join's comp + sync until the end
    for (int p : allowed_[fork]) {
      if (in.time[p] == kInf) continue;
      const double* row = &table.time[static_cast<size_t>(p) * k_];
      for (int c : allowed_[join]) {
        double value = in.time[p] + row[c];
        if (value < best[c]) {
          best[c] = value;
          out.back[c] = p;
        }
      }
    }
    for (int c : allowed_[join]) {
      int p = out.back[c];
      if (p < 0) continue;
      best[c] += comp_[join][c] + sync_[join][c];
      out.peak[c] = std::max({in.peak[p], table.peak[static_cast<size_t>(p) * k_ + c], counts_[c]});
      out.first[c] = in.first[p];
    }
  }

  // Everything a block's table depends on, so identical blocks can share one.
  void AppendLayer(std::vector<double>& key, int layer) const {
    const Layer& spec = profile_.layers[layer];
    key.push_back(-1.0);
    for (const ComputePoint& point : spec.compute) {
      key.push_back(point.batch);
      key.push_back(point.seconds);
    }
    key.push_back(spec.param_bytes);
    key.push_back(spec.output_bytes_per_sample);
  }

  std::vector<double> BlockKey(const Block& block) const {
    std::vector<double> key;
    AppendLayer(key, block.fork);
    AppendLayer(key, block.join);
    for (const Series& branch : block.branches) {
      key.push_back(-2.0);
      for (const Step& step : branch.steps) {
        key.push_back(step.block < 0 ? -3.0 : -4.0 - table_of_[step.block]);
        AppendLayer(key, step.layer);
      }
    }
    return key;
  }

  // Nested blocks come first in graph_.blocks, so their tables exist when an outer one needs
  // them.
  void BuildTables() {
    std::map<std::vector<double>, int> seen;
    table_of_.resize(graph_.blocks.size());
    for (size_t b = 0; b < graph_.blocks.size(); ++b) {
      auto [it, inserted] =
          seen.emplace(BlockKey(graph_.blocks[b]), static_cast<int>(tables_.size()));
      table_of_[b] = it->second;
      if (!inserted) continue;
      tables_.emplace_back();
      BuildTable(graph_.blocks[b], tables_.back());
    }
  }

  std::vector<SeriesStates> RunBranches(const Block& block, int fork_count) {
    std::vector<SeriesStates> states(block.branches.size());
    for (size_t k = 0; k < block.branches.size(); ++k) {
      if (!block.branches[k].steps.empty()) {
        states[k] = RunSeries(block.branches[k], block.fork, fork_count);
      }
    }
    return states;
  }

  std::vector<BranchEnds> FindEnds(const Block& block, const std::vector<SeriesStates>& states) {
    std::vector<BranchEnds> ends(block.branches.size());
    for (size_t k = 0; k < block.branches.size(); ++k) {
      if (block.branches[k].steps.empty()) continue;
      int last = block.branches[k].steps.back().layer;
      transition_.Load(batch_bytes_[last], allowed_[last], states[k].back().time);
      ends[k].fastest.assign(k_, -1);
      ends[k].nearest.assign(k_, -1);
      for (int h : allowed_[block.join]) {
        ends[k].fastest[h] = transition_.Find(h, 0.0, kInf).source;
        ends[k].nearest[h] = transition_.Nearest(h).source;
      }
    }
    return ends;
  }

  void BuildTable(const Block& block, BlockTable& table) {
    table.time.assign(static_cast<size_t>(k_) * k_, kInf);
    table.peak.assign(static_cast<size_t>(k_) * k_, 0);
    BlockOutcome outcome;
    for (int g : allowed_[block.fork]) {
      std::vector<SeriesStates> states = RunBranches(block, g);
      std::vector<BranchEnds> ends = FindEnds(block, states);
      for (int h : allowed_[block.join]) {
        Decide(block, g, h, states, ends, outcome);
        table.time[g * k_ + h] = outcome.time;
        table.peak[g * k_ + h] = outcome.peak;
      }
    }
  }

  // Each branch's end count: the cheapest arrival at the join, or (minimal_exit) the cheapest
  // transfer to it. False when a branch has no feasible path.
  bool PickEnds(const Block& block, int g, int h, const std::vector<SeriesStates>& states,
                const std::vector<BranchEnds>& ends, bool minimal_exit,
                std::vector<BranchPick>& picks) const {
    picks.assign(block.branches.size(), {});
    for (size_t k = 0; k < block.branches.size(); ++k) {
      const Series& branch = block.branches[k];
      BranchPick& pick = picks[k];
      if (branch.steps.empty()) {
        pick.exit = Comm(block.fork, g, h);
        pick.time = pick.exit;
        continue;
      }
      pick.end = minimal_exit ? ends[k].nearest[h] : ends[k].fastest[h];
      if (pick.end < 0) return false;
      const StepState& state = states[k].back();
      pick.exit = Comm(branch.steps.back().layer, pick.end, h);
      pick.time = state.time[pick.end] + pick.exit;
      pick.peak = state.peak[pick.end];
      pick.first = state.first[pick.end];
      pick.entry = Comm(block.fork, g, pick.first);
    }
    return true;
  }

  static double SumExits(const std::vector<BranchPick>& picks) {
    double sum = 0.0;
    for (const BranchPick& pick : picks) sum += pick.exit;
    return sum;
  }

  // The block's cost for fork count index g and join count index h (see burst_split.h).
  void Decide(const Block& block, int g, int h, const std::vector<SeriesStates>& states,
              const std::vector<BranchEnds>& ends, BlockOutcome& out) const {
    out.time = kInf;
    out.peak = 0;
    double join_fixed = comp_[block.join][h] + sync_[block.join][h];
    double join_cap = cap_[block.join][h];
    bool feasible = false;
    for (bool minimal_exit : {false, true}) {
      if (!PickEnds(block, g, h, states, ends, minimal_exit, out.picks)) return;
      if (SumExits(out.picks) + join_fixed <= join_cap) {
        feasible = true;
        break;
      }
    }
    if (!feasible) return;
    double nested = 0.0;
    for (const BranchPick& pick : out.picks) nested += pick.time;
    out.time = nested;
    out.peak = NestedBase(g, h, out.picks);
    if (options_.separate_branches && block.branches.size() > 1) {
      PlaceSeparately(block, g, h, join_fixed, join_cap, out);
    }
  }

  int NestedBase(int g, int h, const std::vector<BranchPick>& picks) const {
    int base = std::max(counts_[g], counts_[h]);
    for (const BranchPick& pick : picks) {
      if (!pick.separate) base = std::max(base, pick.peak);
    }
    return base;
  }

  // Greedy, longest branch first; the longest one (the critical branch) stays nested.
  void PlaceSeparately(const Block& block, int g, int h, double join_fixed, double join_cap,
                       BlockOutcome& out) const {
    std::vector<int> order(out.picks.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return out.picks[a].time > out.picks[b].time;
    });
    double nested = out.time, separate_time = 0.0, exits = SumExits(out.picks);
    int separate_gpus = 0;
    for (size_t n = 1; n < order.size(); ++n) {
      BranchPick& pick = out.picks[order[n]];
      const Series& branch = block.branches[order[n]];
      if (pick.end < 0) continue;
      int first_layer = branch.steps.front().layer, last_layer = branch.steps.back().layer;
      double entry = SeparateComm(block.fork, g, pick.first);
      double first_t = entry + comp_[first_layer][pick.first] + sync_[first_layer][pick.first];
      if (first_t > cap_[first_layer][pick.first]) continue;
      double exit = SeparateComm(last_layer, pick.end, h);
      double new_exits = exits - pick.exit + exit;
      if (new_exits + join_fixed > join_cap) continue;
      double alone = pick.time - pick.entry - pick.exit + entry + exit;
      pick.separate = true;
      int base = NestedBase(g, h, out.picks);
      double time = std::max(nested - pick.time, std::max(separate_time, alone));
      if (base + separate_gpus + pick.peak > options_.gpus || !(time < out.time)) {
        pick.separate = false;
        continue;
      }
      nested -= pick.time;
      separate_time = std::max(separate_time, alone);
      separate_gpus += pick.peak;
      exits = new_exits;
      out.time = time;
      out.peak = base + separate_gpus;
    }
  }

  void ReconstructSeries(const Series& series, const SeriesStates& states, int end) {
    int c = end;
    for (size_t k = series.steps.size(); k-- > 0;) {
      const Step& step = series.steps[k];
      assignment_.gpus[step.layer] = counts_[c];
      int previous = states[k].back[c];
      if (step.block >= 0) ReconstructBlock(step.block, previous, c);
      c = previous;
    }
  }

  void ReconstructBlock(int block_id, int g, int h) {
    const Block& block = graph_.blocks[block_id];
    std::vector<SeriesStates> states = RunBranches(block, g);
    std::vector<BranchEnds> ends = FindEnds(block, states);
    BlockOutcome outcome;
    Decide(block, g, h, states, ends, outcome);
    for (size_t k = 0; k < block.branches.size(); ++k) {
      if (block.branches[k].steps.empty()) continue;
      assignment_.separate[block_id][k] = outcome.picks[k].separate;
      ReconstructSeries(block.branches[k], states[k], outcome.picks[k].end);
    }
  }

  const ModelProfile& profile_;
  const Decomposition& graph_;
  const BurstSplitOptions& options_;
  const std::vector<int> counts_;
  const int k_;
  TransitionMin transition_;
  std::vector<std::vector<double>> comp_, sync_, cap_;
  std::vector<std::vector<int>> allowed_;  // candidate indices not pruned, per layer
  std::vector<double> batch_bytes_;
  std::vector<BlockTable> tables_;  // distinct tables
  std::vector<int> table_of_;       // per block: its index in tables_
  SeriesStates main_;
  double best_time_ = kInf;
  int best_end_ = -1;
  Assignment assignment_;
};

struct Prepared {
  Decomposition graph;
  std::vector<int> counts;
};

Result<Prepared> Prepare(const ModelProfile& profile, const BurstSplitOptions& options) {
  std::string error = ValidateOptions(options);
  if (error.empty()) error = ValidateProfile(profile);
  if (!error.empty()) return Result<Prepared>::Fail(std::move(error));
  Result<Decomposition> decomposed = DecomposeGraph(profile);
  if (!decomposed) return Result<Prepared>::Fail(std::move(decomposed.error));
  Prepared prepared;
  prepared.graph = std::move(*decomposed);
  prepared.counts = CandidateCounts(options.gpus, profile.global_batch, options.counts);
  return Result<Prepared>::Ok(std::move(prepared));
}

}  // namespace

std::vector<int> CandidateCounts(int gpus, int global_batch, CountSet counts) {
  std::vector<int> result;
  long long limit = std::min(gpus, global_batch);
  for (long long g = 1; g <= limit; g = counts == CountSet::kAll ? g + 1 : g * 2) {
    result.push_back(static_cast<int>(g));
  }
  return result;
}

std::string ValidateOptions(const BurstSplitOptions& options) {
  if (options.gpus < 1) {
    return "gpus: invalid value " + std::to_string(options.gpus) + ": expected an integer >= 1";
  }
  if (std::isnan(options.amp_limit) || options.amp_limit < 1.0) {
    std::ostringstream value;
    value << options.amp_limit;
    return "amplification limit: invalid value " + value.str() +
           ": expected a number >= 1 (1: no GPU-sec increase; inf: no limit)";
  }
  return {};
}

Result<BurstSplit> SplitForBurst(const ModelProfile& profile, const BurstSplitOptions& options) {
  Result<Prepared> prepared = Prepare(profile, options);
  if (!prepared) return Result<BurstSplit>::Fail(std::move(prepared.error));
  Search search(profile, prepared->graph, options, prepared->counts);
  double best = search.Run();
  if (best == kInf) {
    return Result<BurstSplit>::Fail(
        "internal: no plan found (one GPU per layer always satisfies a limit >= 1)");
  }
  BurstSplit split;
  split.assignment = search.Reconstruct();
  Result<PlanCost> cost = EvaluatePlan(profile, prepared->graph, split.assignment);
  if (!cost) return Result<BurstSplit>::Fail("internal: " + cost.error);
  split.cost = std::move(*cost);
  split.searched_iteration_s = best;
  split.candidate_counts = prepared->counts;
  split.blocks = static_cast<int>(prepared->graph.blocks.size());
  split.block_tables = search.TableCount();
  return Result<BurstSplit>::Ok(std::move(split));
}

Result<BurstSplit> BestUniformSplit(const ModelProfile& profile, const BurstSplitOptions& options) {
  Result<Prepared> prepared = Prepare(profile, options);
  if (!prepared) return Result<BurstSplit>::Fail(std::move(prepared.error));
  std::optional<BurstSplit> best;
  for (int g : prepared->counts) {
    BurstSplit split;
    split.assignment.gpus.assign(profile.layers.size(), g);
    Result<PlanCost> cost = EvaluatePlan(profile, prepared->graph, split.assignment);
    if (!cost) continue;
    if (cost->max_layer_amplification > options.amp_limit * (1.0 + kAmpSlack)) continue;
    if (best && best->cost.iteration_s <= cost->iteration_s) continue;
    split.cost = std::move(*cost);
    split.searched_iteration_s = split.cost.iteration_s;
    split.candidate_counts = prepared->counts;
    split.blocks = static_cast<int>(prepared->graph.blocks.size());
    best = std::move(split);
  }
  if (!best) return Result<BurstSplit>::Fail("internal: no uniform plan within the limit");
  return Result<BurstSplit>::Ok(std::move(*best));
}

}  // namespace elastic::burst
