// Tests for the burst plan's settings (train.burst_workers, SLURM_ELASTIC_PLAN_ARGS burst=...),
// their refusals, the generation-time checks and the per-block EST placement. Torch-free.
#include <gtest/gtest.h>

#include <map>

#include "agent/config/job_config.h"
#include "agent/data/dataset_checks.h"
#include "agent/plan/burst_placement.h"
#include "agent/plan/execution_plan.h"
#include "common/toml_reader.h"
#include "tests/common/temp_dir.h"

namespace elastic::agent {
namespace {

using Env = std::map<std::string, std::string>;

class BurstConfigTest : public ::testing::Test {
 protected:
  BurstConfigTest() {
    dir_.Write("data/train-images-idx3-ubyte.gz", "");
    dir_.Write("data/train-labels-idx1-ubyte.gz", "");
  }

  std::string Head() const {
    return "[data]\npath = \"" + (dir_.path() / "data").string() + "\"\n[train]\nests = 6\n" +
           "global_batch = 48\n";
  }

  JobConfig Parse(const std::string& train_lines, const Env& env = {}) {
    TomlReader reader = TomlReader::FromString(Head() + train_lines, "job.toml");
    EnvLookup lookup = [env](std::string_view name) -> std::optional<std::string> {
      auto it = env.find(std::string(name));
      if (it == env.end()) return std::nullopt;
      return it->second;
    };
    return ParseJobConfig(reader, lookup, dir_.path().string(), CheckTrainingData);
  }

  std::string ErrorOf(const std::string& train_lines, const Env& env = {}) {
    try {
      Parse(train_lines, env);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(no error)";
  }

  elastic::testing::TempDir dir_;
};

TEST_F(BurstConfigTest, WorkersFromTheFileAndFromTheSupervisor) {
  JobConfig c = Parse("plan = \"burst\"\nburst_workers = [2, 1, 1, 2]\n");
  EXPECT_EQ(c.train.plan, Plan::kBurst);
  EXPECT_EQ(c.train.burst_workers, (std::vector<std::int64_t>{2, 1, 1, 2}));
  EXPECT_EQ(c.train.burst_workers_origin, "");
  c = Parse("plan = \"burst\"\nburst_workers = [2, 1, 1, 2]\n",
            {{"SLURM_ELASTIC_PLAN_ARGS", "burst=3/1/2/3"}});
  EXPECT_EQ(c.train.burst_workers, (std::vector<std::int64_t>{3, 1, 2, 3}));
  EXPECT_EQ(c.train.burst_workers_origin, "SLURM_ELASTIC_PLAN_ARGS");
  c = Parse("", {{"SLURM_ELASTIC_PLAN", "burst"}, {"SLURM_ELASTIC_PLAN_ARGS", "c=2,burst=1/2"}});
  EXPECT_EQ(c.train.plan, Plan::kBurst);
  EXPECT_EQ(c.train.burst_workers, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(c.train.cpu_threads, 2);
  // Kept in the file for a generation that runs another plan: not used, not refused.
  c = Parse("plan = \"burst\"\nburst_workers = [7]\n", {{"SLURM_ELASTIC_PLAN", "pp"}});
  EXPECT_EQ(c.train.plan, Plan::kPp);
}

TEST_F(BurstConfigTest, BadWorkersAreRefusedWithTheKeyAndWhatWasExpected) {
  EXPECT_EQ(ErrorOf("plan = \"burst\"\n"),
            "job.toml:6: train.plan: plan \"burst\" needs the ranks of each model block: "
            "expected train.burst_workers = [g_0, g_1, ...] (e.g. [2, 1, 1, 2]) or "
            "SLURM_ELASTIC_PLAN_ARGS=burst=2/1/1/2");
  EXPECT_EQ(ErrorOf("plan = \"burst\"\nburst_workers = [2, 0]\n"),
            "job.toml:7: train.burst_workers: invalid value 0 at index 1: expected an array of "
            "integers from 1 to 1048576");
  EXPECT_EQ(ErrorOf("plan = \"burst\"\nburst_workers = \"2/1\"\n"),
            "job.toml:7: train.burst_workers: expected an array of integers from 1 to 1048576");
  EXPECT_EQ(ErrorOf("plan = \"burst\"\nburst_workers = [2, 7, 1]\n"),
            "job.toml:7: train.burst_workers: block 1 on 7 ranks, but train.ests = 6: expected "
            "at most one rank per EST");
  EXPECT_EQ(
      ErrorOf("", {{"SLURM_ELASTIC_PLAN", "burst"}, {"SLURM_ELASTIC_PLAN_ARGS", "burst=1/8"}}),
      "environment SLURM_ELASTIC_PLAN_ARGS: burst: block 1 on 8 ranks, but train.ests = 6: "
      "expected at most one rank per EST");
  EXPECT_EQ(ErrorOf("", {{"SLURM_ELASTIC_PLAN_ARGS", "burst=2//1"}}),
            "environment SLURM_ELASTIC_PLAN_ARGS: invalid value \"2//1\" for burst: expected one "
            "rank count per model block, each an integer from 1 to 1048576, separated by / (e.g. "
            "\"2/1/1/2\")");
}

// `elastic-plan burst --json`'s layers[].gpus, when its layers are the model's blocks.
TEST_F(BurstConfigTest, WorkersFromAPlannerJsonPlan) {
  dir_.Write("plan.json",
             R"({"iteration_ms": 1.5, "layers": [{"name": "conv1", "gpus": 4, "parallel": false},)"
             R"( {"name": "conv2", "gpus": 2}, {"name": "fc1", "gpus": 1}, {"name": "fc2",)"
             R"( "gpus": 1}]})");
  JobConfig c = Parse("plan = \"burst\"\nburst_plan = \"plan.json\"\n");
  EXPECT_EQ(c.train.burst_workers, (std::vector<std::int64_t>{4, 2, 1, 1}));
  dir_.Write("branchy.json", R"({"layers": [{"gpus": 2}, {"gpus": 1, "parallel": true}]})");
  EXPECT_EQ(ErrorOf("plan = \"burst\"\nburst_plan = \"branchy.json\"\n"),
            "job.toml:7: train.burst_plan: \"" + (dir_.path() / "branchy.json").string() +
                "\": layers[1] runs on GPUs of its own beside another branch: expected a chain "
                "plan (elastic-plan burst --no-separate)");
  dir_.Write("zero.json", R"({"layers": [{"gpus": 0}]})");
  EXPECT_EQ(ErrorOf("plan = \"burst\"\nburst_plan = \"zero.json\"\n"),
            "job.toml:7: train.burst_plan: \"" + (dir_.path() / "zero.json").string() +
                "\": layers[0].gpus: expected an integer from 1 to 1048576");
  EXPECT_EQ(ErrorOf("plan = \"burst\"\nburst_workers = [1]\nburst_plan = \"plan.json\"\n"),
            "job.toml:8: train.burst_plan: given with train.burst_workers: expected one of the "
            "two");
}

TEST_F(BurstConfigTest, ParsePlanArgsBurst) {
  EXPECT_EQ(*ParsePlanArgs("burst=4").value->burst_workers, (std::vector<std::int64_t>{4}));
  EXPECT_FALSE(ParsePlanArgs("c=2").value->burst_workers.has_value());
  for (const char* bad : {"burst", "burst=", "burst=0/1", "burst=2/", "burst=/2", "burst=a",
                          "burst=2,1", "burst=-1", "burst=1048577", "Burst=1"}) {
    EXPECT_FALSE(ParsePlanArgs(bad)) << bad;
  }
  EXPECT_EQ(ParsePlanArgs("b=2").error,
            "invalid item \"b=2\": expected c=<host threads> (e.g. \"c=2\") or "
            "burst=<ranks per block> (e.g. \"burst=2/1/1/2\")");
}

TEST_F(BurstConfigTest, TheGenerationChecksTheRanksAndTheDeterminismLevel) {
  JobConfig c = Parse("plan = \"burst\"\nburst_workers = [2, 1, 3, 2]\n");
  EXPECT_EQ(DescribeExecutionPlan(c, ResolveExecutionPlan(c, 3)), "burst(2/1/3/2)");
  try {
    ResolveExecutionPlan(c, 2);
    ADD_FAILURE() << "burst with a block on 3 ranks ran on 2";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "train.burst_workers: block 2 on 3 ranks, but this generation has 2: expected "
                 "at most 2 per block");
  }
  c = Parse("plan = \"burst\"\nburst_workers = [1, 1]\ndeterminism = \"d0\"\n");
  EXPECT_NO_THROW(ResolveExecutionPlan(c, 1));  // one rank: burst is dp
  EXPECT_THROW(ResolveExecutionPlan(c, 2), ConfigError);
}

// background.config: the job a burst plan's idle ranks train (agent/train/background_job.h).
class BackgroundConfigTest : public BurstConfigTest {
 protected:
  // A background job in bg.toml: `extra` lines go into its [train] table, `tail` after it.
  void WriteBackground(const std::string& extra, const std::string& tail = "") {
    dir_.Write("bg.toml",
               "[data]\npath = \"data\"\n[train]\nglobal_batch = 4\nseed = 7\n" + extra + tail);
  }
  static std::string WithBackground(const std::string& file = "bg.toml") {
    return "plan = \"burst\"\nburst_workers = [2, 1, 1, 2]\n[background]\nconfig = \"" + file +
           "\"\n";
  }
  std::string Refusal(const std::string& problem) const {
    return "job.toml:9: background.config: \"" + (dir_.path() / "bg.toml").string() +
           "\": " + problem;
  }
};

TEST_F(BackgroundConfigTest, LoadsTheBackgroundJobWithItsOwnDefaultsAndNoLoaderThreads) {
  dir_.Write("bg.toml",
             "[data]\npath = \"data\"\nworkers = 3\n[train]\nglobal_batch = 4\nseed = 7\n");
  const JobConfig c = Parse(WithBackground(), {{"SLURM_ELASTIC_EST", "6"}});
  EXPECT_EQ(c.background.config, (dir_.path() / "bg.toml").string());
  ASSERT_NE(c.background.job, nullptr);
  const JobConfig& bg = *c.background.job;
  EXPECT_EQ(bg.train.global_batch, 4);
  EXPECT_EQ(bg.train.seed, 7);
  EXPECT_EQ(bg.train.ests, 1);  // the foreground's SLURM_ELASTIC_* flags are not its own
  EXPECT_EQ(bg.data.path, (dir_.path() / "data").string());  // relative to bg.toml
  EXPECT_EQ(bg.data.workers, 0);                             // it runs on the waiting thread
  EXPECT_EQ(Parse("").background.job, nullptr);
}

TEST_F(BackgroundConfigTest, RefusesJobsTheIdleSlotsCannotRun) {
  EXPECT_EQ(ErrorOf(WithBackground("none.toml")),
            "job.toml:9: background.config: \"" + (dir_.path() / "none.toml").string() +
                "\" is not a file: expected the background job's config");
  WriteBackground("threads = 2\n");
  EXPECT_EQ(ErrorOf(WithBackground()),
            Refusal("train.threads = 2: expected 1, the foreground job's (LibTorch's intra-op "
                    "thread count is one per process)"));
  WriteBackground("plan = \"pp\"\n");
  EXPECT_EQ(ErrorOf(WithBackground()),
            Refusal("train.plan = \"pp\": expected \"dp\", \"ga\" or \"gc\" (a background job "
                    "runs in one process)"));
  WriteBackground("", "[checkpoint]\ndir = \"ckpt\"\n");
  EXPECT_EQ(ErrorOf(WithBackground()),
            Refusal("checkpoint.dir is set: background jobs keep no checkpoints; expected none"));
  // Its own background (here itself: no endless loading).
  WriteBackground("", "[background]\nconfig = \"bg.toml\"\n");
  EXPECT_EQ(ErrorOf(WithBackground()),
            Refusal("has a background.config of its own: expected a job without one"));
  // Its own errors, with its own file and line.
  WriteBackground("lr = -1\n");
  const std::string error = ErrorOf(WithBackground());
  EXPECT_EQ(error.rfind(Refusal("").substr(0, Refusal("").size() - 1), 0), 0u) << error;
  EXPECT_NE(error.find("bg.toml:6: train.lr"), std::string::npos) << error;
}

TEST(BurstPlacement, ContiguousBlocksAsTheEstPlacementAndEveryEstOnOneRank) {
  for (std::int64_t ests : {1, 6, 8}) {
    for (std::int64_t workers = 1; workers <= ests; ++workers) {
      std::int64_t next = 0;
      for (int rank = 0; rank < workers + 2; ++rank) {
        const EstRange mine = BurstEstsOfRank(ests, workers, rank);
        if (rank >= workers) {
          EXPECT_EQ(mine.size(), 0);
          continue;
        }
        EXPECT_EQ(mine.begin, next);
        EXPECT_GE(mine.size(), 1);
        for (std::int64_t e = mine.begin; e < mine.end; ++e) {
          EXPECT_EQ(BurstRankOfEst(ests, workers, e), rank) << ests << " " << workers << " " << e;
        }
        next = mine.end;
      }
      EXPECT_EQ(next, ests);
    }
  }
  EXPECT_EQ(BurstEstsOfRank(6, 4, 1), (EstRange{1, 3}));  // floor(r·6/4): 0, 1, 3, 4
  EXPECT_EQ(DescribeBurstWorkers({3, 1, 2, 3}), "3/1/2/3");
}

}  // namespace
}  // namespace elastic::agent
