// elastic-sim: replays a workload trace on a simulated cluster through one scheduling policy.
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

#include "scheduler/policy/policy.h"
#include "scheduler/sim/cluster_spec.h"
#include "scheduler/sim/live_path.h"
#include "scheduler/sim/report.h"
#include "scheduler/sim/simulator.h"
#include "scheduler/sim/trace.h"

namespace po = boost::program_options;

namespace {

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) std::cerr << "elastic-sim: cannot write " << path << "\n";
  return static_cast<bool>(out);
}

// The policy to replay: MakePolicy's, or with --live elasticd's decision around it (live_path.h)
// with the resize options elasticd would run (interval, penalty, cost, preemption; `decision`
// brings the live-only ones: preempt_for_rigid, nice_lift).
elastic::Result<std::unique_ptr<elastic::policy::Policy>> MakeReplayPolicy(
    const std::string& name, bool live, const elastic::policy::PolicyOptions& policy_options,
    const elastic::sim::SimOptions& options, elastic::sim::SlurmSite site,
    elastic::policy::ResizeDecisionOptions decision) {
  using Made = elastic::Result<std::unique_ptr<elastic::policy::Policy>>;
  if (!live) return elastic::policy::MakePolicy(name, policy_options);
  decision.min_resize_interval_s = static_cast<std::int64_t>(policy_options.min_resize_interval_s);
  decision.reconfig_penalty = policy_options.reconfigure_threshold;
  decision.resize_cost_s = options.resize_cost_s;
  decision.preempt_best_effort = policy_options.preempt_best_effort;
  auto made = elastic::sim::LivePathPolicy::Make(name, decision, site);
  if (!made) return Made::Fail(made.error);
  return Made::Ok(std::move(*made));
}

int Run(int argc, char** argv) {
  std::string trace_path, cluster_spec, policy_name, json_path, timeline_path;
  elastic::sim::SimOptions options;
  elastic::policy::PolicyOptions policy_options;
  po::options_description description("elastic-sim options");
  description.add_options()("help,h", "show this help")(
      "trace", po::value(&trace_path)->required(),
      "trace CSV (job_id,submit_time_s,num_gpus,duration_s,...)")(
      "cluster", po::value(&cluster_spec)->required(),
      "NODESxDEVICES[:TYPE][:cpus=N][:mem=SIZE],... e.g. 16x8:a100:cpus=64:mem=512G,16x4:v100")(
      "policy", po::value(&policy_name)->required(),
      "backfill | easyscale | rubick | elastic | rubick-e | rubick-r | rubick-n")(
      "seed", po::value(&options.seed)->default_value(1), "seed for per-job model parameters")(
      "json", po::value(&json_path), "write the result as JSON here")(
      "timeline", po::value(&timeline_path), "write an SVG timeline here")(
      "resize-cost", po::value(&options.resize_cost_s)->default_value(30.0),
      "seconds a resize stalls a job")(
      "min-resize-interval", po::value(&policy_options.min_resize_interval_s)->default_value(600.0),
      "seconds between resizes of one job (easyscale)")(
      "rigid-fraction", po::value(&options.rigid_fraction)->default_value(0.0),
      "share of jobs submitted rigid (chosen by hashing the job id)")(
      "guaranteed-fraction", po::value(&options.guaranteed_fraction)->default_value(0.5),
      "share of jobs in the guaranteed SLA class (hash of the job id)")(
      "quota-fraction", po::value(&options.quota_fraction)->default_value(0.5),
      "share of the cluster given to tenants as guaranteed quota")(
      "starvation-slowdown",
      po::value(&policy_options.elastic_starvation_slowdown)->default_value(1.0),
      "elastic: a best-effort job starves after waiting this x its run time (and >= 3600 s)")(
      "no-shortest-work-first", po::bool_switch(),
      "elastic: rank by slope alone, as rubick does (ablation)")(
      "no-compact-growth", po::bool_switch(),
      "elastic: grant a growth whatever its placement gains, as rubick does (ablation)")(
      "no-mixed-types", po::bool_switch(),
      "elastic: keep each job on one device type, as rubick does (ablation)")(
      "no-preemption", po::bool_switch(),
      "rubick, elastic: guaranteed jobs never preempt best-effort jobs (ablation)")(
      "live", po::bool_switch(),
      "replay elasticd's live path: Slurm's backfill starts jobs (a node or more on whole nodes, "
      "smaller ones rigid on shared nodes) and elasticd's resize decision, running --policy, "
      "grows, shrinks and preempts the elastic ones (one node size)")(
      "no-elastic-nice", po::bool_switch(),
      "--live: a site without etc/job_submit.lua's nice, so elastic jobs keep their place in "
      "Slurm's queue (ablation)")(
      "nice-lift-after", po::value<double>()->default_value(6.0),
      "--live: elasticd's [scheduler] nice_lift_after: a waiting elastic job's nice is taken back "
      "after this x its time limit (the model's run time); 0 = never (ablation)")(
      "no-preempt-for-rigid", po::bool_switch(),
      "--live: elasticd with [scheduler] preempt_for_rigid = false, so only guaranteed jobs "
      "preempt (ablation)")("cpu-need-max", po::value(&options.cpu_need_max)->default_value(0.0),
                            "per-job CPU threads per capability-1 device for full speed, drawn in "
                            "[--cpu-need-min, this] (0: CPUs never change speed)")(
      "cpu-need-min", po::value(&options.cpu_need_min)->default_value(1.0),
      "lower end of the CPU need range")(
      "cpus-per-gpu", po::value(&options.cpus_per_gpu)->default_value(0),
      "CPUs per device for policies that do not schedule CPUs (0: the fewest per device of any "
      "node)")("memory-per-gpu", po::value(&options.memory_mb_per_gpu)->default_value(0),
               "host memory (MiB) every job holds per device")(
      "memory-need-max", po::value(&options.memory_need_max)->default_value(0.0),
      "per-job replica memory in device memories, drawn in [0, this] (0: every plan fits)");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, description), vm);
  if (vm.count("help")) {
    std::cout << description;
    return 0;
  }
  po::notify(vm);
  policy_options.resize_cost_s = options.resize_cost_s;
  policy_options.elastic_shortest_work_first = !vm["no-shortest-work-first"].as<bool>();
  policy_options.elastic_mixed_types = !vm["no-mixed-types"].as<bool>();
  policy_options.elastic_compact_growth = !vm["no-compact-growth"].as<bool>();
  policy_options.preempt_best_effort = !vm["no-preemption"].as<bool>();
  options.record_timeline = !timeline_path.empty();

  auto cluster = elastic::sim::ParseClusterSpec(cluster_spec);
  if (!cluster) {
    std::cerr << cluster.error << "\n";
    return 2;
  }
  const bool live = vm["live"].as<bool>();
  if (live) options.whole_node_devices = elastic::sim::UniformNodeDevices(*cluster);
  if (live && options.whole_node_devices == 0) {
    std::cerr << "elastic-sim: --live needs nodes of one size (elasticd resizes whole nodes); "
                 "--cluster \"" << cluster_spec << "\" mixes sizes\n";
    return 2;
  }
  elastic::sim::SlurmSite site;
  site.elastic_jobs_yield = !vm["no-elastic-nice"].as<bool>();
  elastic::policy::ResizeDecisionOptions live_options;
  live_options.preempt_for_rigid = !vm["no-preempt-for-rigid"].as<bool>();
  live_options.nice_lift.after_time_limits = vm["nice-lift-after"].as<double>();
  if (!(live_options.nice_lift.after_time_limits >= 0)) {
    std::cerr << "elastic-sim: --nice-lift-after " << live_options.nice_lift.after_time_limits
              << ": expected a multiple >= 0 (0 = never)\n";
    return 2;
  }
  auto made = MakeReplayPolicy(policy_name, live, policy_options, options, site, live_options);
  if (!made) {
    std::cerr << "elastic-sim: --policy: " << made.error << "\n";
    return 2;
  }
  auto trace = elastic::sim::LoadTrace(trace_path);
  if (!trace) {
    std::cerr << "elastic-sim: " << trace.error << "\n";
    return 2;
  }
  auto started = std::chrono::steady_clock::now();  // reporting only; never feeds the replay
  elastic::sim::SimResult result = elastic::sim::Simulate(*cluster, *trace, **made, options);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!result.error.empty()) {
    std::cerr << result.error << "\n";
    return 1;
  }
  std::cout << elastic::sim::Summary(result);
  std::cerr << "elastic-sim: replay took " << seconds << " s\n";
  bool ok = true;
  if (!json_path.empty()) {
    ok &= WriteFile(json_path,
                    elastic::sim::ToJson(result, {trace_path, cluster_spec, options.seed}).dump(1) +
                        "\n");
  }
  if (!timeline_path.empty()) ok &= WriteFile(timeline_path, elastic::sim::TimelineSvg(result));
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const po::error& error) {
    std::cerr << "elastic-sim: " << error.what() << " (see --help)\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "elastic-sim: " << error.what() << "\n";
    return 1;
  }
}
