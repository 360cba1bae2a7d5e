// Execution plans on real Open MPI ranks (docs/plans.md, docs/consistency.md "Plans"): the real
// elastic-agent under `mpirun --oversubscribe -np W` with E = 8 ESTs ends with the DP/EST
// baseline's params_sha256 for every bitwise-safe plan (ga, gc, zero-dp, zero-offload, pp) and
// W in {1, 2, 3}; a run that switches plan and W at every resize (through checkpoints) equals
// the uninterrupted run, also with weight decay and a cosine schedule; plans a determinism level
// does not admit, and plans this model cannot
// run (tp needs a transformer), are refused with a message. Needs mpirun and the Fashion-MNIST
// package; no Slurm.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <tuple>

#include "tests/common/agent_runs.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"

namespace elastic::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kData = "/usr/share/datasets/fashion-mnist";

// The E = 8 job of est_consistency_test.cc (8 samples per EST) with a plan.
std::string ConfigText(const std::string& plan, const std::string& determinism = "d1",
                       const std::string& checkpoint_dir = "", int cpu_threads = 2,
                       const std::string& extra_train = "") {
  FmnistJob job;
  job.ests = 8;
  job.global_batch = 64;
  job.seed = 1;
  job.steps = 10;
  job.determinism = determinism;
  job.plan = plan;
  job.extra_train = "cpu_threads = " + std::to_string(cpu_threads) + "\n" + extra_train;
  job.checkpoint_dir = checkpoint_dir;
  return FmnistJobText(job);
}

class PlanConsistency : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunCommand("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed";
    if (!fs::exists(kData)) GTEST_SKIP() << kData << " missing (dataset-fashion-mnist)";
  }

  fs::path Config(const std::string& text) {
    return dir_.Write("job-" + std::to_string(serial_++) + ".toml", text);
  }

  CommandResult Run(const std::string& text, int ranks, const std::string& extra = "") {
    return RunCommand(MpirunAgentCommand(ranks, Config(text), extra, /*timeout_s=*/300));
  }

  std::string Train(const std::string& text, int ranks, const std::string& extra = "") {
    return FinalHash(Run(text, ranks, extra));
  }

  TempDir dir_;
  int serial_ = 0;
};

TEST_F(PlanConsistency, EveryBitwiseSafePlanEndsWithTheEstHashOnEveryWorldSize) {
  const std::string reference = Train(ConfigText("dp"), 1);
  ASSERT_FALSE(reference.empty());
  for (const char* plan : {"ga", "gc", "zero-dp", "zero-offload", "pp"}) {
    for (int ranks : {1, 2, 3}) {
      EXPECT_EQ(Train(ConfigText(plan), ranks), reference) << plan << " on W=" << ranks;
    }
  }
}

TEST_F(PlanConsistency, TheStartLineNamesThePlanAndTheOffloadThreadCountChangesNoBit) {
  CommandResult run = Run(ConfigText("zero-offload", "d1", "", 3), 3);
  EXPECT_NE(run.output.find("plan=zero-offload(dp=3+ga=3+zero-2+offload,c=3)"), std::string::npos)
      << run.output;
  EXPECT_EQ(FinalHash(run), Train(ConfigText("zero-offload", "d1", "", 1), 2));
}

TEST_F(PlanConsistency, SwitchingPlanAcrossResizesEqualsAnUninterruptedRun) {
  const std::string uninterrupted = Train(ConfigText("dp"), 1);
  const std::string ckpt = (dir_.path() / "ckpt").string();
  std::string hash;
  // Every switch crosses both representations of the optimizer state: replicated -> sharded
  // (dp -> zero-dp), sharded -> replicated (zero-dp -> gc), and sharded on another W.
  for (auto [plan, ranks, until] : {std::tuple{"dp", 1, 2},
                                    {"zero-dp", 3, 4},
                                    {"pp", 2, 5},
                                    {"gc", 2, 6},
                                    {"zero-offload", 3, 7},
                                    {"pp", 3, 8},
                                    {"ga", 2, 10}}) {
    hash = Train(ConfigText(plan, "d1", ckpt), ranks, " --until-step " + std::to_string(until));
    ASSERT_FALSE(hash.empty()) << plan << " on W=" << ranks;
  }
  EXPECT_EQ(hash, uninterrupted);
}

// Weight decay and a warmup-then-cosine learning rate (lr_schedule.h) keep every plan's bits on
// every W and across resizes through checkpoints: the rate is a function of the step, and the
// sharded plans' own update reads it and the decay from the SGD the replicated plans step.
TEST_F(PlanConsistency, WeightDecayAndACosineScheduleKeepTheBitsAcrossPlansAndResizes) {
  const std::string schedule =
      "weight_decay = 0.0005\nlr_schedule = \"cosine\"\nwarmup_steps = 3\n";
  const auto config = [&](const std::string& plan, const std::string& ckpt = "") {
    return ConfigText(plan, "d1", ckpt, 2, schedule);
  };
  const std::string reference = Train(config("dp"), 1);
  ASSERT_FALSE(reference.empty());
  EXPECT_NE(reference, Train(ConfigText("dp"), 1));  // the keys change the training
  for (auto [plan, ranks] :
       {std::pair{"dp", 3}, {"zero-dp", 2}, {"zero-offload", 3}, {"pp", 2}, {"gc", 3}}) {
    EXPECT_EQ(Train(config(plan), ranks), reference) << plan << " on W=" << ranks;
  }
  const std::string ckpt = (dir_.path() / "ckpt-schedule").string();
  std::string hash;
  for (auto [plan, ranks, until] :
       {std::tuple{"dp", 1, 2}, {"zero-dp", 3, 5}, {"pp", 2, 7}, {"zero-offload", 2, 10}}) {
    hash = Train(config(plan, ckpt), ranks, " --until-step " + std::to_string(until));
    ASSERT_FALSE(hash.empty()) << plan << " on W=" << ranks;
  }
  EXPECT_EQ(hash, reference);
}

TEST_F(PlanConsistency, PlansOutsideTheDeterminismLevelOrThisAgentAreRefused) {
  CommandResult tp = Run(ConfigText("tp", "d1"), 1);
  EXPECT_NE(tp.exit_code, 0);
  EXPECT_NE(tp.output.find("plan \"tp\" is not allowed under determinism \"d1\""),
            std::string::npos)
      << tp.output;
  // The supervisor's per-generation choice goes through the same check.
  CommandResult env = RunCommand("SLURM_ELASTIC_PLAN=tp " +
                                 MpirunAgentCommand(1, Config(ConfigText("dp")), "", 300));
  EXPECT_NE(env.exit_code, 0);
  EXPECT_NE(env.output.find("(from SLURM_ELASTIC_PLAN) is not allowed under determinism"),
            std::string::npos)
      << env.output;
  // tp splits attention heads and MLP columns: only the transformer (gpt_plans_test.cc) has them.
  CommandResult tp_statistical = Run(ConfigText("tp", "statistical"), 1);
  EXPECT_NE(tp_statistical.exit_code, 0);
  EXPECT_NE(tp_statistical.output.find(
                "plan \"tp\": tp needs a transformer model (model.name = \"gpt\")"),
            std::string::npos)
      << tp_statistical.output;
  CommandResult pp = Run(ConfigText("pp"), 5);  // fmnist_cnn has 4 blocks
  EXPECT_NE(pp.exit_code, 0);
  EXPECT_NE(pp.output.find("the model has 4 blocks: expected at most one stage per block"),
            std::string::npos)
      << pp.output;
  CommandResult d0 = Run(ConfigText("zero-dp", "d0"), 2);
  EXPECT_NE(d0.exit_code, 0);
  EXPECT_NE(d0.output.find("under determinism \"d0\" on more than one rank"), std::string::npos)
      << d0.output;
}

}  // namespace
}  // namespace elastic::testing
