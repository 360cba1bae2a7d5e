// elastic-plan memory: the supervisor's own inputs and estimator, printed per plan.
#include "tools/elastic_plan/memory_command.h"

#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "agent/supervisor/plan_inputs.h"
#include "common/toml_reader.h"
#include "perf/rubick/agent_memory.h"

namespace elastic::agent {
namespace {

namespace po = boost::program_options;

// Every plan word the estimate covers, in the order the supervisor weighs them (burst is sized by
// DeepPool's planner, not by this model).
constexpr Plan kPlans[] = {Plan::kDp, Plan::kGa,  Plan::kGc, Plan::kZeroDp,
                           Plan::kZeroOffload, Plan::kPp, Plan::kTp};

void PrintPlans(const perf::FittedModel& model, const PlanRequest& request, int ranks) {
  for (Plan word : kPlans) {
    const std::string refusal = AgentPlanRefusal(word, request, ranks);
    if (!refusal.empty()) {
      std::cerr << "elastic-plan memory: " << refusal << ": not estimated\n";
      continue;
    }
    const AgentMemoryEstimate m = EstimateAgentMemory(model.model, request, word, ranks);
    std::printf("plan=%s ranks=%d bytes=%lld\n", std::string(ToString(word)).c_str(), ranks,
                static_cast<long long>(std::ceil(m.device_total)));
  }
}

}  // namespace

int MemoryCommand(const std::vector<std::string>& args) {
  std::string config;
  int ranks = 0;
  std::int64_t ests = 0;
  po::options_description description("elastic-plan memory options");
  description.add_options()("help,h", "show this help")(
      "config", po::value(&config)->required(), "the job config (TOML) the supervisor reads")(
      "ranks", po::value(&ranks)->required(), "W: the generation's agent ranks (nodes x ranks per node)")(
      "ests", po::value(&ests), "E: override train.ests (a job without one gets MAX nodes x ranks per node)");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(description).run(), vm);
  if (vm.count("help")) {
    std::cout << "usage: elastic-plan memory --config F --ranks W [--ests E]\n"
                 "prints `plan=<name> ranks=<W> bytes=<estimated per-rank device bytes>` for every "
                 "plan the agent can run on W ranks\n"
              << description;
    return 0;
  }
  po::notify(vm);
  PlanInputs inputs;
  try {
    inputs = ReadPlanInputs(config, ProcessEnv());
  } catch (const ConfigError& error) {
    std::cerr << "elastic-plan memory: " << error.what() << "\n";
    return 2;
  }
  if (vm.count("ests")) {
    if (ests < 1 || inputs.request.global_batch % ests != 0) {
      std::cerr << "elastic-plan memory: --ests: invalid value " << ests
                << ": expected a divisor of train.global_batch = " << inputs.request.global_batch
                << "\n";
      return 2;
    }
    inputs.request.ests = ests;
  }
  if (ranks < 1 || ranks > inputs.request.ests) {
    std::cerr << "elastic-plan memory: --ranks: invalid value " << ranks
              << ": expected 1 to the job's " << inputs.request.ests << " ESTs"
              << (inputs.ests_given ? ""
                                    : " (train.ests is unset, so `elastic-agent run` picks MAX "
                                      "nodes x ranks per node: give that E with --ests)")
              << "\n";
    return 2;
  }
  if (!inputs.model) {
    std::cerr << "elastic-plan memory: " << config << ": " << inputs.model_source
              << ": expected train.perf_model = a fitted.json (elastic-agent profile, then "
                 "elastic-plan fit)\n";
    return 2;
  }
  std::cerr << "elastic-plan memory: " << inputs.model_source << "; E = " << inputs.request.ests
            << ", b = " << inputs.request.global_batch
            << "; memory budget: " << inputs.budget_source << "\n";
  PrintPlans(*inputs.model, inputs.request, ranks);
  return 0;
}

}  // namespace elastic::agent
