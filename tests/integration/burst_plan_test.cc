// The burst-parallel plan (DeepPool §3-§4, agent/plan/burst_parallel.h) on real Open MPI ranks:
// the real elastic-agent under `mpirun --oversubscribe -np W` with E = 6 ESTs, each model block
// on its own number of ranks (train.burst_workers or SLURM_ELASTIC_PLAN_ARGS burst=...), ends
// with the params_sha256 of dp on one rank; a run that switches dp -> burst -> pp -> burst across
// resizes (checkpoints) equals the uninterrupted run; settings that do not fit are refused with
// a message; gpt keeps its dp hash too; idle ranks train a background job meanwhile. Needs mpirun
// and the Fashion-MNIST package (gpt: fortunes-min); no Slurm.
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
constexpr const char* kCorpus = "/usr/share/games/fortunes";

// fmnist_cnn (4 blocks), E = 6 ESTs of 8 samples, 6 steps; `workers` is the TOML array's
// contents ("" = no train.burst_workers line).
std::string ConfigText(const std::string& plan, const std::string& workers,
                       const std::string& determinism = "d1",
                       const std::string& checkpoint_dir = "") {
  FmnistJob job;
  job.ests = 6;
  job.global_batch = 48;
  job.seed = 3;
  job.steps = 6;
  job.determinism = determinism;
  job.plan = plan;
  if (!workers.empty()) job.extra_train = "burst_workers = [" + workers + "]\n";
  job.checkpoint_dir = checkpoint_dir;
  return FmnistJobText(job);
}

class BurstPlan : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunCommand("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed";
    if (!fs::exists(kData)) GTEST_SKIP() << kData << " missing (dataset-fashion-mnist)";
  }

  fs::path Config(const std::string& text) {
    return dir_.Write("job-" + std::to_string(serial_++) + ".toml", text);
  }

  CommandResult Run(const std::string& text, int ranks, const std::string& extra = "",
                    const std::string& env = "") {
    return RunCommand(env + MpirunAgentCommand(ranks, Config(text), extra, /*timeout_s=*/120));
  }

  TempDir dir_;
  int serial_ = 0;
};

TEST_F(BurstPlan, EveryPlacementEndsWithTheOneRankDpHash) {
  const std::string reference = FinalHash(Run(ConfigText("dp", ""), 1));
  ASSERT_FALSE(reference.empty());
  for (auto [workers, ranks] :
       {std::tuple{"2, 1, 1, 2", 2}, {"1, 2, 2, 1", 2}, {"3, 1, 2, 3", 3}, {"1, 3, 3, 2", 3}}) {
    CommandResult run = Run(ConfigText("burst", workers), ranks);
    EXPECT_EQ(FinalHash(run), reference) << "burst [" << workers << "] on W=" << ranks;
  }
  // The supervisor's way: the plan word and the counts from the environment.
  CommandResult env = Run(ConfigText("dp", ""), 3, "",
                          "SLURM_ELASTIC_PLAN=burst SLURM_ELASTIC_PLAN_ARGS=burst=2/3/1/3 ");
  EXPECT_NE(env.output.find("plan=burst(2/3/1/3)"), std::string::npos) << env.output;
  EXPECT_EQ(FinalHash(env), reference);
}

// gpt (embeddings | block 1 | block 2 | head): attention, LayerNorm and residual branches inside
// the blocks, E = 4 ESTs of 8 windows.
TEST_F(BurstPlan, TheTransformerEndsWithItsDpHashToo) {
  if (!fs::exists(kCorpus)) GTEST_SKIP() << kCorpus << " missing (fortunes-min)";
  auto gpt = [](const std::string& plan, const std::string& workers) {
    return "[model]\nname = \"gpt\"\n[data]\npath = \"" + std::string(kCorpus) +
           "\"\n[train]\nests = 4\nglobal_batch = 32\nlr = 0.1\nmomentum = 0.9\nseed = 1\n"
           "steps = 4\nplan = \"" +
           plan + "\"\nthreads = 1\nlog_every = 0\n" +
           (workers.empty() ? "" : "burst_workers = [" + workers + "]\n");
  };
  const std::string reference = FinalHash(Run(gpt("dp", ""), 1));
  ASSERT_FALSE(reference.empty());
  EXPECT_EQ(FinalHash(Run(gpt("burst", "2, 1, 2, 1"), 2)), reference);
}

TEST_F(BurstPlan, SwitchingBetweenDpBurstAndPpAcrossResizesEqualsAnUninterruptedRun) {
  const std::string uninterrupted = FinalHash(Run(ConfigText("dp", ""), 1));
  const std::string ckpt = (dir_.path() / "ckpt").string();
  std::string hash;
  for (auto [plan, workers, ranks, until] : {std::tuple{"dp", "", 1, 2},
                                             {"burst", "3, 1, 2, 3", 3, 3},
                                             {"pp", "", 2, 4},
                                             {"burst", "1, 2, 2, 1", 2, 6}}) {
    hash = FinalHash(Run(ConfigText(plan, workers, "d1", ckpt), ranks,
                         " --until-step " + std::to_string(until)));
    ASSERT_FALSE(hash.empty()) << plan << " on W=" << ranks;
  }
  EXPECT_EQ(hash, uninterrupted);
}

// One "elastic-agent: background rank=R ..." line's seed, steps and params_sha256 ("" if none).
struct BackgroundResult {
  std::string seed, steps, hash;
};
BackgroundResult BackgroundOfRank(const std::string& output, int rank) {
  const std::string head = "elastic-agent: background rank=" + std::to_string(rank) + " ";
  const std::size_t at = output.find(head);
  if (at == std::string::npos) return {};
  const std::string line = output.substr(at, output.find('\n', at) - at);
  auto field = [&](const std::string& key) {
    const std::size_t from = line.find(" " + key + "=");
    if (from == std::string::npos) return std::string();
    const std::size_t begin = from + key.size() + 2;
    return line.substr(begin, line.find(' ', begin) - begin);
  };
  return {field("seed"), field("steps"), field("params_sha256")};
}

// DeepPool §4-§5: under burst [2, 1, 1, 2] rank 1 has nothing to run for blocks 1 and 2; it
// trains a background job meanwhile (agent/multiplex/idle_filler.h). The foreground's bits do
// not move, and the background job's are those of a plain run of its config (seed + rank) for
// as many steps as it managed.
TEST_F(BurstPlan, IdleRanksTrainABackgroundJobWithoutChangingTheForeground) {
  const std::string plain = FinalHash(Run(ConfigText("burst", "2, 1, 1, 2"), 2));
  ASSERT_FALSE(plain.empty());
  // The background job: batch 4, more steps than it can reach.
  const auto background = [](int seed) {
    FmnistJob job;
    job.global_batch = 4;
    job.seed = seed;
    job.steps = 1000;
    return FmnistJobText(job);
  };
  const fs::path config = dir_.Write("bg.toml", background(7));
  const std::string with_background = "[background]\nconfig = \"" + config.string() + "\"\n";
  CommandResult run = Run(ConfigText("burst", "2, 1, 1, 2") + with_background, 2);
  EXPECT_EQ(FinalHash(run), plain);
  const BackgroundResult idle = BackgroundOfRank(run.output, 1);
  EXPECT_EQ(idle.seed, "8") << run.output;
  ASSERT_FALSE(idle.steps.empty()) << run.output;
  EXPECT_GE(std::stoi(idle.steps), 1) << run.output;
  EXPECT_EQ(BackgroundOfRank(run.output, 0).seed, "7") << run.output;
  CommandResult solo =
      RunCommand(AgentPath() + " train --config " + dir_.Write("bg8.toml", background(8)).string() +
                 " --until-step " + idle.steps + " 2>&1");
  EXPECT_EQ(FinalHash(solo), idle.hash);

  // Plain dp has no idle slots: the job is not run, and the note says why.
  CommandResult dp = Run(ConfigText("dp", "") + with_background, 2);
  EXPECT_EQ(FinalHash(dp), FinalHash(Run(ConfigText("dp", ""), 2)));
  EXPECT_NE(dp.output.find("not run: background jobs fill the idle slots of a burst plan"),
            std::string::npos)
      << dp.output;
  EXPECT_EQ(BackgroundOfRank(dp.output, 0).seed, "") << dp.output;
}

TEST_F(BurstPlan, SettingsThatDoNotFitAreRefused) {
  auto expect_refused = [](const CommandResult& run, const std::string& message) {
    EXPECT_NE(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find(message), std::string::npos) << run.output;
  };
  expect_refused(Run(ConfigText("burst", "2, 1, 2"), 2),
                 "train.burst_workers: 3 worker count(s) 2/1/2 for model \"fmnist_cnn\": "
                 "expected one count per block, 4 of them");
  expect_refused(Run(ConfigText("burst", "3, 1, 1, 1"), 2),
                 "train.burst_workers: block 0 on 3 ranks, but this generation has 2: expected "
                 "at most 2 per block");
  expect_refused(Run(ConfigText("burst", "2, 2, 2, 2", "d0"), 2),
                 "plan \"burst\" under determinism \"d0\" on more than one rank is not "
                 "implemented");
  expect_refused(Run(ConfigText("burst", ""), 1),
                 "plan \"burst\" needs the ranks of each model block");
}

}  // namespace
}  // namespace elastic::testing
