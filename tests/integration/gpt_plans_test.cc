// The gpt model (fortunes-min corpus) under every execution plan on real Open MPI ranks
// (docs/plans.md, "Models and data", "TP"): the bitwise-safe plans (ga, gc, zero-dp,
// zero-offload, pp) end with the DP/EST baseline's params_sha256 on W in {1, 2, 3}; tp on one
// rank is dp bit for bit, on two ranks it repeats itself and its final loss differs from DP's by
// no more than changing the seed does (Rubick §7.2, Table 3); a tp checkpoint resumes under dp;
// refusals. Needs mpirun and the fortunes-min package; no Slurm.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>

#include "tests/common/agent_runs.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"

namespace elastic::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCorpus = "/usr/share/games/fortunes";

struct Job {
  std::string plan = "dp";
  std::string determinism = "d1";
  int seed = 1;
  int steps = 6;
  std::string checkpoint_dir;
  std::string model = "gpt";
};

// A Job with the named fields changed (GCC warns on designated initializers that skip members).
Job MakeJob(const std::string& plan, const std::string& determinism, int seed = 1, int steps = 6,
            const std::string& checkpoint_dir = "") {
  Job job;
  job.plan = plan;
  job.determinism = determinism;
  job.seed = seed;
  job.steps = steps;
  job.checkpoint_dir = checkpoint_dir;
  return job;
}

// E = 4 ESTs of 8 windows (32 bytes each) per step.
std::string ConfigText(const Job& job) {
  std::ostringstream text;
  text << "[model]\nname = \"" << job.model << "\"\n";
  if (job.model == "gpt") text << "[data]\npath = \"" << kCorpus << "\"\n";
  text << "[train]\nests = 4\nglobal_batch = 32\nlr = 0.1\nmomentum = 0.9\nseed = " << job.seed
       << "\nsteps = " << job.steps << "\ndeterminism = \"" << job.determinism
       << "\"\nplan = \"" << job.plan << "\"\ncpu_threads = 2\nthreads = 1\nlog_every = 0\n";
  if (!job.checkpoint_dir.empty()) text << "[checkpoint]\ndir = \"" << job.checkpoint_dir << "\"\n";
  return text.str();
}

double FinalLoss(const CommandResult& run) {
  static const std::regex line(R"(elastic-agent: step=\d+ loss=(\S+) params_sha256=)");
  std::smatch match;
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(std::regex_search(run.output, match, line)) << run.output;
  return match.empty() ? NAN : std::stod(match[1].str());
}

class GptPlans : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunCommand("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed";
    if (!fs::exists(fs::path(kCorpus) / "fortunes")) {
      GTEST_SKIP() << kCorpus << " missing (install fortunes-min)";
    }
  }

  CommandResult Run(const Job& job, int ranks, const std::string& extra = "") {
    const fs::path config = dir_.Write("job-" + std::to_string(serial_++) + ".toml", ConfigText(job));
    return RunCommand(MpirunAgentCommand(ranks, config, extra, /*timeout_s=*/300));
  }

  std::string Train(const Job& job, int ranks, const std::string& extra = "") {
    return FinalHash(Run(job, ranks, extra));
  }

  TempDir dir_;
  int serial_ = 0;
};

TEST_F(GptPlans, EveryBitwiseSafePlanEndsWithTheDpHashOnEveryWorldSize) {
  const std::string reference = Train(Job{}, 1);
  ASSERT_FALSE(reference.empty());
  EXPECT_EQ(Train(Job{}, 3), reference) << "dp on W=3";
  for (const char* plan : {"ga", "gc", "zero-dp", "zero-offload", "pp"}) {
    for (int ranks : {1, 2, 3}) {
      Job job;
      job.plan = plan;
      EXPECT_EQ(Train(job, ranks), reference) << plan << " on W=" << ranks;
    }
  }
}

TEST_F(GptPlans, TpOnOneRankIsDpAndOnTwoRanksRepeatsItself) {
  Job dp = MakeJob("dp", "statistical");
  Job tp = MakeJob("tp", "statistical");
  EXPECT_EQ(Train(tp, 1), Train(dp, 1));
  CommandResult first = Run(tp, 2);
  EXPECT_NE(first.output.find("plan=tp(dp=1+tp=2+ga=4)"), std::string::npos) << first.output;
  const std::string hash = FinalHash(first);
  ASSERT_FALSE(hash.empty());
  EXPECT_EQ(Train(tp, 2), hash);  // the all-reduce adds in rank order, never in arrival order
}

// Rubick §7.2 (Table 3): a reconfiguration is acceptable when its loss differs from the baseline
// by no more than changing the random seed does. Baseline: dp, seed 1; seeds 2-5 give the band.
TEST_F(GptPlans, TpLossDiffersFromDpByLessThanChangingTheSeed) {
  constexpr int kSteps = 40;
  const double baseline = FinalLoss(Run(MakeJob("dp", "statistical", 1, kSteps), 1));
  double seed_spread = 0;
  for (int seed : {2, 3, 4, 5}) {
    const double loss =
        FinalLoss(Run(MakeJob("dp", "statistical", seed, kSteps), 1));
    std::cout << "dp seed " << seed << ": loss " << loss << "\n";
    seed_spread = std::max(seed_spread, std::abs(loss - baseline));
  }
  const double tp = FinalLoss(Run(MakeJob("tp", "statistical", 1, kSteps), 2));
  std::cout << "dp seed 1: loss " << baseline << "; tp t=2 seed 1: loss " << tp
            << "; |tp - dp| = " << std::abs(tp - baseline) << ", seed spread " << seed_spread
            << std::endl;
  EXPECT_LT(baseline, 5.0) << "the model did not learn: ln(256) = 5.55 is chance";
  EXPECT_LE(std::abs(tp - baseline), seed_spread);
}

TEST_F(GptPlans, ATpCheckpointResumesUnderAnyPlan) {
  const std::string ckpt = (dir_.path() / "ckpt").string();
  Job tp = MakeJob("tp", "statistical", 1, 6, ckpt);
  ASSERT_FALSE(Train(tp, 2, " --until-step 3").empty());
  Job dp = MakeJob("zero-dp", "statistical", 1, 6, ckpt);
  CommandResult resumed = Run(dp, 2);
  EXPECT_FALSE(FinalHash(resumed).empty());
  EXPECT_NE(resumed.output.find("at step 3"), std::string::npos) << resumed.output;
}

TEST_F(GptPlans, PlansTheModelCannotRunAreRefused) {
  CommandResult d1 = Run(MakeJob("tp", "d1"), 2);
  EXPECT_NE(d1.exit_code, 0);
  EXPECT_NE(d1.output.find("plan \"tp\" is not allowed under determinism \"d1\""),
            std::string::npos)
      << d1.output;
  CommandResult three = Run(MakeJob("tp", "statistical"), 3);
  EXPECT_NE(three.exit_code, 0);
  EXPECT_NE(three.output.find("gpt has 4 attention heads, split evenly across the ranks: "
                              "expected a number of ranks that divides 4"),
            std::string::npos)
      << three.output;
  CommandResult pp = Run(MakeJob("pp", "d1"), 5);  // embedding | 2 layers | head
  EXPECT_NE(pp.exit_code, 0);
  EXPECT_NE(pp.output.find("the model has 4 blocks: expected at most one stage per block"),
            std::string::npos)
      << pp.output;
}

}  // namespace
}  // namespace elastic::testing
