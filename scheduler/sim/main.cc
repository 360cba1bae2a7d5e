// elastic-sim: replays a workload trace on a simulated cluster through one scheduling policy.
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <fstream>
#include <iostream>
#include <memory>
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

// The command line: where to read and write, and the options of the replay.
struct Args {
  std::string trace_path, cluster_spec, policy_name, json_path, timeline_path;
  elastic::sim::SimOptions options;
  elastic::policy::PolicyOptions policy_options;
};

// What to replay, on what, and the workload's model.
void AddReplayOptions(po::options_description& d, Args& a) {
  d.add_options()("help,h", "show this help")(
      "trace", po::value(&a.trace_path)->required(),
      "trace CSV (job_id,submit_time_s,num_gpus,duration_s,...)")(
      "cluster", po::value(&a.cluster_spec)->required(),
      "NODESxDEVICES[:TYPE][:cpus=N][:mem=SIZE],... e.g. 16x8:a100:cpus=64:mem=512G,16x4:v100")(
      "policy", po::value(&a.policy_name)->required(),
      "backfill | easyscale | rubick | elastic | rubick-e | rubick-r | rubick-n")(
      "seed", po::value(&a.options.seed)->default_value(1), "seed for per-job model parameters")(
      "json", po::value(&a.json_path), "write the result as JSON here")(
      "timeline", po::value(&a.timeline_path), "write an SVG timeline here")(
      "resize-cost", po::value(&a.options.resize_cost_s)->default_value(30.0),
      "seconds a resize stalls a job")(
      "min-resize-interval",
      po::value(&a.policy_options.min_resize_interval_s)->default_value(600.0),
      "seconds between resizes of one job (easyscale)")(
      "rigid-fraction", po::value(&a.options.rigid_fraction)->default_value(0.0),
      "share of jobs submitted rigid (chosen by hashing the job id)")(
      "guaranteed-fraction", po::value(&a.options.guaranteed_fraction)->default_value(0.5),
      "share of jobs in the guaranteed SLA class (hash of the job id)")(
      "quota-fraction", po::value(&a.options.quota_fraction)->default_value(0.5),
      "share of the cluster given to tenants as guaranteed quota")(
      "starvation-slowdown",
      po::value(&a.policy_options.elastic_starvation_slowdown)->default_value(1.0),
      "elastic: a best-effort job starves after waiting this x its run time (and >= 3600 s)");
}

// Ablations of the policies, and the live path with its own ablations.
void AddAblationAndLiveOptions(po::options_description& d) {
  d.add_options()("no-shortest-work-first", po::bool_switch(),
                  "elastic: rank by slope alone, as rubick does (ablation)")(
      "no-compact-growth", po::bool_switch(),
      "elastic: grant a growth whatever its placement gains, as rubick does (ablation)")(
      "no-preempt-longer", po::bool_switch(),
      "elastic: a waiting job no SLA protects never preempts a best-effort job that would run "
      "at least twice as long (ablation)")(
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
      "preempt (ablation)");
}

// CPUs and host memory in the workload's model.
void AddResourceOptions(po::options_description& d, Args& a) {
  d.add_options()("cpu-need-max", po::value(&a.options.cpu_need_max)->default_value(0.0),
                  "per-job CPU threads per capability-1 device for full speed, drawn in "
                  "[--cpu-need-min, this] (0: CPUs never change speed)")(
      "cpu-need-min", po::value(&a.options.cpu_need_min)->default_value(1.0),
      "lower end of the CPU need range")(
      "cpus-per-gpu", po::value(&a.options.cpus_per_gpu)->default_value(0),
      "CPUs per device for policies that do not schedule CPUs (0: the fewest per device of any "
      "node)")("memory-per-gpu", po::value(&a.options.memory_mb_per_gpu)->default_value(0),
               "host memory (MiB) every job holds per device")(
      "memory-need-max", po::value(&a.options.memory_need_max)->default_value(0.0),
      "per-job replica memory in device memories, drawn in [0, this] (0: every plan fits)");
}

// The ablation switches into the policy's options.
void ApplySwitches(const po::variables_map& vm, Args& a) {
  a.policy_options.resize_cost_s = a.options.resize_cost_s;
  a.policy_options.elastic_shortest_work_first = !vm["no-shortest-work-first"].as<bool>();
  a.policy_options.elastic_mixed_types = !vm["no-mixed-types"].as<bool>();
  a.policy_options.elastic_compact_growth = !vm["no-compact-growth"].as<bool>();
  a.policy_options.elastic_preempt_longer = !vm["no-preempt-longer"].as<bool>();
  a.policy_options.preempt_best_effort = !vm["no-preemption"].as<bool>();
  a.options.record_timeline = !a.timeline_path.empty();
}

// The replay's policy for the command line. With --live it also checks that the cluster has one
// node size and sets a.options.whole_node_devices, and brings the live-only options. Prints why
// not and returns null on bad input.
std::unique_ptr<elastic::policy::Policy> ReplayPolicyFor(const po::variables_map& vm, Args& a,
                                                         const elastic::policy::ClusterState& c) {
  const bool live = vm["live"].as<bool>();
  if (live) a.options.whole_node_devices = elastic::sim::UniformNodeDevices(c);
  if (live && a.options.whole_node_devices == 0) {
    std::cerr << "elastic-sim: --live needs nodes of one size (elasticd resizes whole nodes); "
                 "--cluster \""
              << a.cluster_spec << "\" mixes sizes\n";
    return nullptr;
  }
  elastic::sim::SlurmSite site;
  site.elastic_jobs_yield = !vm["no-elastic-nice"].as<bool>();
  elastic::policy::ResizeDecisionOptions live_options;
  live_options.preempt_for_rigid = !vm["no-preempt-for-rigid"].as<bool>();
  live_options.nice_lift.after_time_limits = vm["nice-lift-after"].as<double>();
  if (!(live_options.nice_lift.after_time_limits >= 0)) {
    std::cerr << "elastic-sim: --nice-lift-after " << live_options.nice_lift.after_time_limits
              << ": expected a multiple >= 0 (0 = never)\n";
    return nullptr;
  }
  auto made =
      MakeReplayPolicy(a.policy_name, live, a.policy_options, a.options, site, live_options);
  if (!made) {
    std::cerr << "elastic-sim: --policy: " << made.error << "\n";
    return nullptr;
  }
  return std::move(*made);
}

// The summary on stdout, the replay's time on stderr, and the files asked for.
int Report(const elastic::sim::SimResult& result, const Args& a, double seconds) {
  std::cout << elastic::sim::Summary(result);
  std::cerr << "elastic-sim: replay took " << seconds << " s\n";
  bool ok = true;
  if (!a.json_path.empty()) {
    ok &= WriteFile(
        a.json_path,
        elastic::sim::ToJson(result, {a.trace_path, a.cluster_spec, a.options.seed}).dump(1) +
            "\n");
  }
  if (!a.timeline_path.empty()) ok &= WriteFile(a.timeline_path, elastic::sim::TimelineSvg(result));
  return ok ? 0 : 1;
}

int Run(int argc, char** argv) {
  Args a;
  po::options_description description("elastic-sim options");
  AddReplayOptions(description, a);
  AddAblationAndLiveOptions(description);
  AddResourceOptions(description, a);
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, description), vm);
  if (vm.count("help")) {
    std::cout << description;
    return 0;
  }
  po::notify(vm);
  ApplySwitches(vm, a);
  auto cluster = elastic::sim::ParseClusterSpec(a.cluster_spec);
  if (!cluster) {
    std::cerr << cluster.error << "\n";
    return 2;
  }
  std::unique_ptr<elastic::policy::Policy> policy = ReplayPolicyFor(vm, a, *cluster);
  if (!policy) return 2;
  auto trace = elastic::sim::LoadTrace(a.trace_path);
  if (!trace) {
    std::cerr << "elastic-sim: " << trace.error << "\n";
    return 2;
  }
  auto started = std::chrono::steady_clock::now();  // reporting only; never feeds the replay
  elastic::sim::SimResult result = elastic::sim::Simulate(*cluster, *trace, *policy, a.options);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!result.error.empty()) {
    std::cerr << result.error << "\n";
    return 1;
  }
  return Report(result, a, seconds);
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
