// Walks the decomposed graph once, applying the timing rules stated in plan_cost.h.
#include "perf/burst/plan_cost.h"

#include <algorithm>

#include "perf/burst/cost_model.h"

namespace elastic::burst {
namespace {

struct Span {
  double time_s = 0.0;
  int peak_gpus = 0;
};

class Evaluator {
 public:
  Evaluator(const ModelProfile& profile, const Decomposition& graph, const Assignment& assignment)
      : profile_(profile), graph_(graph), assignment_(assignment) {
    cost_.layers.resize(profile.layers.size());
  }

  Result<PlanCost> Run() {
    std::string error = Check();
    if (!error.empty()) return Result<PlanCost>::Fail(std::move(error));
    Span span = EvalSeries(graph_.main, -1, false, false);
    cost_.iteration_s = span.time_s;
    cost_.peak_gpus = span.peak_gpus;
    for (size_t i = 0; i < profile_.layers.size(); ++i) {
      const LayerCost& layer = cost_.layers[i];
      double single = LayerCompute(profile_.layers[i], profile_.global_batch, 1);
      cost_.single_gpu_s += single;
      cost_.gpu_sec += layer.time_s * layer.gpus;
      cost_.max_layer_amplification =
          std::max(cost_.max_layer_amplification, layer.amplification);
    }
    cost_.amplification = cost_.gpu_sec / cost_.single_gpu_s;
    return Result<PlanCost>::Ok(std::move(cost_));
  }

 private:
  std::string Check() const {
    if (assignment_.gpus.size() != profile_.layers.size()) {
      return "assignment has " + std::to_string(assignment_.gpus.size()) +
             " GPU counts for " + std::to_string(profile_.layers.size()) + " layers";
    }
    for (size_t i = 0; i < assignment_.gpus.size(); ++i) {
      int g = assignment_.gpus[i];
      if (g < 1 || g > profile_.global_batch) {
        return "layer \"" + profile_.layers[i].name + "\": " + std::to_string(g) +
               " GPUs: expected 1 to the global batch (" + std::to_string(profile_.global_batch) +
               ")";
      }
    }
    if (assignment_.separate.empty()) return {};
    if (assignment_.separate.size() != graph_.blocks.size()) return "separate: one entry per block";
    for (size_t b = 0; b < graph_.blocks.size(); ++b) {
      const Block& block = graph_.blocks[b];
      if (assignment_.separate[b].size() != block.branches.size()) {
        return "separate: block at \"" + profile_.layers[block.fork].name +
               "\" needs one flag per branch";
      }
      for (size_t k = 0; k < block.branches.size(); ++k) {
        if (assignment_.separate[b][k] && block.branches[k].steps.empty()) {
          return "separate: a branch without layers cannot run on GPUs of its own";
        }
      }
    }
    return {};
  }

  bool Separate(int block, size_t branch) const {
    return !assignment_.separate.empty() && assignment_.separate[block][branch];
  }

  double BatchBytes(int layer) const {
    return profile_.layers[layer].output_bytes_per_sample * profile_.global_batch;
  }

  int Gpus(int layer) const { return assignment_.gpus[layer]; }

  void Record(int layer, double comm_in, bool parallel) {
    const Layer& spec = profile_.layers[layer];
    int g = Gpus(layer);
    LayerCost& cost = cost_.layers[layer];
    cost.gpus = g;
    cost.parallel = parallel;
    cost.comm_in_s = comm_in;
    cost.comp_s = LayerCompute(spec, profile_.global_batch, g);
    cost.sync_s = SyncTime(profile_.network, spec.param_bytes, g);
    cost.time_s = comm_in + cost.comp_s + cost.sync_s;
    cost.amplification = cost.time_s * g / LayerCompute(spec, profile_.global_batch, 1);
  }

  // `entry`: the fork feeding the series' first layer (-1 for the model's input).
  Span EvalSeries(const Series& series, int entry, bool separate_entry, bool parallel) {
    Span span;
    const NetworkModel& net = profile_.network;
    for (size_t k = 0; k < series.steps.size(); ++k) {
      const Step& step = series.steps[k];
      int g = Gpus(step.layer);
      double comm_in = 0.0;
      if (k == 0 && entry >= 0) {
        comm_in = separate_entry ? SeparateTransitionTime(net, BatchBytes(entry), Gpus(entry), g)
                                 : TransitionTime(net, BatchBytes(entry), Gpus(entry), g);
      } else if (k > 0 && step.block < 0) {
        int previous = series.steps[k - 1].layer;
        comm_in = TransitionTime(net, BatchBytes(previous), Gpus(previous), g);
      } else if (k > 0) {
        // The block's span already holds the transfers into the join (they may overlap with
        // other branches), so only the join's own work is added after it; its T still counts
        // them for GPU-sec and amplification.
        double exits = 0.0;
        Span block = EvalBlock(step.block, parallel, exits);
        span.time_s += block.time_s;
        span.peak_gpus = std::max(span.peak_gpus, block.peak_gpus);
        comm_in = exits;
      }
      Record(step.layer, comm_in, parallel);
      const LayerCost& cost = cost_.layers[step.layer];
      span.time_s += step.block >= 0 ? cost.comp_s + cost.sync_s : cost.time_s;
      span.peak_gpus = std::max(span.peak_gpus, g);
    }
    return span;
  }

  Span EvalBlock(int block_id, bool parallel, double& exits) {
    const Block& block = graph_.blocks[block_id];
    const NetworkModel& net = profile_.network;
    int g = Gpus(block.fork), h = Gpus(block.join);
    double nested_time = 0.0, separate_time = 0.0;
    int base = std::max(g, h), separate_gpus = 0;
    for (size_t k = 0; k < block.branches.size(); ++k) {
      const Series& branch = block.branches[k];
      bool separate = Separate(block_id, k);
      int end = BranchEnd(block, branch);
      double exit = separate ? SeparateTransitionTime(net, BatchBytes(end), Gpus(end), h)
                             : TransitionTime(net, BatchBytes(end), Gpus(end), h);
      exits += exit;
      Span inner;
      if (!branch.steps.empty()) {
        inner = EvalSeries(branch, block.fork, separate, parallel || separate);
      }
      if (separate) {
        separate_time = std::max(separate_time, inner.time_s + exit);
        separate_gpus += inner.peak_gpus;
      } else {
        nested_time += inner.time_s + exit;
        base = std::max(base, inner.peak_gpus);
      }
    }
    return {std::max(nested_time, separate_time), base + separate_gpus};
  }

  const ModelProfile& profile_;
  const Decomposition& graph_;
  const Assignment& assignment_;
  PlanCost cost_;
};

}  // namespace

Result<PlanCost> EvaluatePlan(const ModelProfile& profile, const Decomposition& graph,
                              const Assignment& assignment) {
  return Evaluator(profile, graph, assignment).Run();
}

}  // namespace elastic::burst
