// DescribeModel, RunResources, WithEstimates (run_description.h).
#include "agent/profile/run_description.h"

#include <algorithm>
#include <thread>

#include "perf/rubick/plan_selection.h"

namespace elastic::agent {
namespace {

perf::ProfiledRun MakeProfiledRun(const ProfileConfig& config, const PreparedRun& prepared,
                                  const perf::Resources& resources, double throughput,
                                  double global_batch) {
  perf::ProfiledRun measured;
  measured.label = prepared.run.label;
  measured.point.plan = prepared.plan;
  measured.point.resources = resources;
  measured.point.throughput = throughput;
  measured.intra_threads = prepared.threads;
  measured.measured_steps = static_cast<int>(config.measured_steps);
  // The step time of the median rate (the median of b / t is b / the median of t).
  measured.median_step_s = global_batch / throughput;
  return measured;
}

// The backward pass with `threads` intra-op threads; none where not measured.
std::optional<perf::PassTime> MeasuredBackward(const Estimates& estimates, int threads) {
  auto found = estimates.backward.find(threads);
  if (found == estimates.backward.end()) return std::nullopt;
  return found->second;
}

}  // namespace

perf::ModelDesc DescribeModel(const JobConfig& job, const ModelFacts& facts,
                              const SplitShares& shares) {
  perf::ModelDesc model;
  model.params = facts.params;
  model.layers = facts.blocks;
  // The pipeline boundary of a two-stage split (after block blocks/2 - 1) stands for V_pp's
  // s*h (Rubick §4.1: activations crossing a stage boundary per sample): a sequence model's
  // block outputs [s, h] per sample; a CNN has no sequence, so s = 1 and h = that block's
  // output floats. V_tp (§4.2) uses the same s*h per layer.
  model.seq_len = facts.seq_len;
  model.hidden =
      static_cast<int>(facts.block_outputs[std::max(0, facts.blocks / 2 - 1)] / facts.seq_len);
  model.global_batch = static_cast<int>(job.train.global_batch);
  model.gradient_exchange = GradientExchangeUnder(job.train.determinism);
  // The forward rate depends on the run's intra-op threads, so it is measured per thread count
  // and given per point as Resources::gpu_flops in forward samples/s; one "FLOP" per sample.
  model.fwd_s_per_sample = 0;
  model.fwd_flops_per_sample = 1;
  double activations = 0;
  for (double floats : facts.block_outputs) activations += floats;
  model.activation_bytes_per_sample = activations * kFloatBytes;
  model.weight_bytes = kFloatBytes;
  model.grad_bytes = kFloatBytes;
  model.optimizer_bytes = kFloatBytes;
  model.activation_elem_bytes = kFloatBytes;
  model.tp_unsplit_share = shares.tp_unsplit;
  model.block_shares = shares.blocks;
  return model;
}

// `forward_rate` is one worker's forward samples/s with the machine to itself. A run whose ranks'
// intra-op threads outnumber the machine's cores time-shares them, so each worker computes at
// its share of the cores (a fact of the machine, not a fitted parameter): Rubick's model assumes
// a device per worker.
perf::Resources RunResources(const PreparedRun& prepared, double b_peer, double b_pcie,
                             double forward_rate, double forward_pass_s,
                             std::optional<perf::PassTime> backward, int cores) {
  const int busy_threads = prepared.run.workers * prepared.threads;
  if (cores > 0 && busy_threads > cores) {
    const double share = static_cast<double>(cores) / busy_threads;
    forward_rate *= share;
    forward_pass_s /= share;
    if (backward) {
      backward->s_per_pass /= share;
      backward->s_per_sample /= share;
    }
  }
  perf::Resources resources;
  resources.gpus = prepared.run.workers;           // on a CPU machine a "GPU" is one worker rank
  resources.gpus_per_node = prepared.run.workers;  // every rank on this machine
  resources.cpus = prepared.run.workers * std::max(prepared.threads, prepared.plan.cpu_threads);
  resources.b_intra = b_peer;
  resources.b_inter = b_peer;  // one machine: no inter-node link to measure
  resources.b_pcie = b_pcie;
  resources.gpu_flops = forward_rate;
  resources.fwd_s_per_pass = forward_pass_s;
  resources.backward = backward;
  return resources;
}

perf::ProfiledPoints WithEstimates(perf::ProfiledPoints points, const ProfileConfig& config,
                                   const JobConfig& job, const std::vector<PreparedRun>& prepared,
                                   const Estimates& estimates) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  for (size_t i = 0; i < prepared.size(); ++i) {
    const PreparedRun& run = prepared[i];
    const perf::Resources resources = RunResources(
        run, points.b_intra, points.b_pcie, estimates.forward_rate.at(run.threads),
        estimates.forward_pass_s.at(run.threads), MeasuredBackward(estimates, run.threads), cores);
    points.runs.push_back(MakeProfiledRun(config, run, resources, estimates.rate[i],
                                          static_cast<double>(job.train.global_batch)));
  }
  return points;
}

}  // namespace elastic::agent
