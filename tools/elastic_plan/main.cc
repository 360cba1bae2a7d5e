// elastic-plan: offline planners. `elastic-plan burst` prints DeepPool's burst-parallel plan for
// a layer profile beside the best uniform data-parallel plan; `elastic-plan fit` fits Rubick's
// performance model to profiled points (fit_command.h); `elastic-plan memory` prints a job's
// per-rank memory estimate per plan (memory_command.h).
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "tools/elastic_plan/fit_command.h"
#include "tools/elastic_plan/memory_command.h"
#include "perf/burst/burst_split.h"
#include "perf/burst/profile_json.h"

namespace po = boost::program_options;
using namespace elastic::burst;
using elastic::Result;

namespace {

void PrintTable(const ModelProfile& profile, const BurstSplit& split) {
  std::printf("%-28s %5s %10s %10s %10s %10s %6s\n", "layer", "gpus", "comm_in_ms", "comp_ms",
              "sync_ms", "time_ms", "amp");
  for (size_t i = 0; i < profile.layers.size(); ++i) {
    const LayerCost& layer = split.cost.layers[i];
    std::printf("%-28s %4d%s %10.3f %10.3f %10.3f %10.3f %6.2f\n", profile.layers[i].name.c_str(),
                layer.gpus, layer.parallel ? "*" : " ", layer.comm_in_s * 1e3, layer.comp_s * 1e3,
                layer.sync_s * 1e3, layer.time_s * 1e3, layer.amplification);
  }
}

void PrintSummary(const char* label, const BurstSplit& split) {
  const PlanCost& cost = split.cost;
  std::printf("%-8s iteration %.3f ms (%.2fx one GPU), GPU-sec %.4f, amplification %.3f "
              "(max layer %.3f), peak %d GPUs\n",
              label, cost.iteration_s * 1e3, cost.single_gpu_s / cost.iteration_s, cost.gpu_sec,
              cost.amplification, cost.max_layer_amplification, cost.peak_gpus);
}

int Burst(const std::vector<std::string>& args) {
  std::string profile_path;
  BurstSplitOptions options;
  int global_batch = 0;
  po::options_description description("elastic-plan burst options");
  description.add_options()("help,h", "show this help")(
      "profile", po::value(&profile_path)->required(), "layer profile JSON (docs/burst-planner.md)")(
      "gpus", po::value(&options.gpus)->required(), "GPUs available to the job")(
      "amp-limit", po::value(&options.amp_limit)->required(),
      "per-layer GPU-sec amplification limit (>= 1; inf = none)")(
      "all-counts", "consider every GPU count, not only powers of two")(
      "no-separate", "never run branches in parallel on GPUs of their own")(
      "global-batch", po::value(&global_batch), "override the profile's global batch")(
      "json", "print the plan as JSON");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(description).run(), vm);
  if (vm.count("help")) {
    std::cout << "usage: elastic-plan burst --profile P.json --gpus G --amp-limit A "
                 "[--all-counts] [--json]\n"
              << description;
    return 0;
  }
  po::notify(vm);
  if (vm.count("all-counts")) options.counts = CountSet::kAll;
  options.separate_branches = !vm.count("no-separate");
  if (options.gpus < 1) {
    std::cerr << "elastic-plan burst: --gpus: invalid value " << options.gpus
              << ": expected an integer >= 1\n";
    return 2;
  }
  if (!(options.amp_limit >= 1.0)) {
    std::cerr << "elastic-plan burst: --amp-limit: invalid value " << options.amp_limit
              << ": expected a number >= 1 (1: no GPU-sec increase; inf: no limit)\n";
    return 2;
  }
  Result<ModelProfile> loaded = LoadProfileJson(profile_path);
  if (!loaded) {
    std::cerr << "elastic-plan burst: " << loaded.error << "\n";
    return 2;
  }
  ModelProfile& profile = *loaded;
  if (vm.count("global-batch")) {
    if (global_batch < 1) {
      std::cerr << "elastic-plan burst: --global-batch: invalid value " << global_batch
                << ": expected an integer >= 1\n";
      return 2;
    }
    profile.global_batch = global_batch;
  }
  auto started = std::chrono::steady_clock::now();
  Result<BurstSplit> burst = SplitForBurst(profile, options);
  double search_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  if (!burst) {
    std::cerr << "elastic-plan burst: " << profile_path << ": " << burst.error << "\n";
    return 2;
  }
  Result<BurstSplit> uniform = BestUniformSplit(profile, options);
  const BurstSplit* baseline = uniform ? &*uniform : nullptr;
  if (vm.count("json")) {
    nlohmann::json out = SplitToJson(profile, options, *burst, baseline);
    out["search_ms"] = search_ms;
    std::cout << out.dump(1) << "\n";
    return 0;
  }
  std::printf(
      "model %s: %zu layers, %d blocks, global batch %d, %d GPUs, amp limit %g, counts "
      "%s\n",
      profile.name.c_str(), profile.layers.size(), burst->blocks, profile.global_batch,
      options.gpus, options.amp_limit, options.counts == CountSet::kAll ? "all" : "powers of two");
  PrintTable(profile, *burst);
  PrintSummary("burst", *burst);
  if (baseline) {
    PrintSummary("uniform", *baseline);
    std::printf("uniform plan: %d GPUs per layer; burst speedup over it %.3fx\n",
                baseline->assignment.gpus.front(),
                baseline->cost.iteration_s / burst->cost.iteration_s);
  }
  std::printf("search took %.2f ms (* = branch runs in parallel on GPUs of its own)\n", search_ms);
  return 0;
}

int Main(int argc, char** argv) {
  std::string command = argc > 1 ? argv[1] : "";
  std::vector<std::string> rest(argv + std::min(argc, 2), argv + argc);
  if (command == "burst") return Burst(rest);
  if (command == "fit") return elastic::burst::FitCommand(rest);
  if (command == "memory") return elastic::agent::MemoryCommand(rest);
  if (command == "-h" || command == "--help" || command == "help") {
    std::cout << "usage: elastic-plan burst --profile P.json --gpus G --amp-limit A "
                 "[--all-counts] [--json]\n"
                 "       elastic-plan fit --points P.json [--train-indices I,J,...|--train N] "
                 "[--out fitted.json]\n"
                 "       elastic-plan memory --config F --ranks W [--ests E]\n"
                 "(elastic-plan burst|fit|memory --help for every option)\n";
    return 0;
  }
  std::cerr << "elastic-plan: " << (command.empty() ? "missing command" : "unknown command \"" + command + "\"")
            << ": expected \"burst\", \"fit\" or \"memory\" (see elastic-plan --help)\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const po::error& error) {
    const std::string command = argc > 1 ? argv[1] : "";
    std::cerr << "elastic-plan " << command << ": " << error.what() << " (see elastic-plan "
              << command << " --help)\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "elastic-plan: " << error.what() << "\n";
    return 1;
  }
}
