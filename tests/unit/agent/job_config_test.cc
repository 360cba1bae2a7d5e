// Tests for the job config: pinned defaults, every key read, environment overrides, and a table
// of invalid inputs whose messages must name the place, the key and what was expected.
#include "agent/config/job_config.h"
#include "agent/data/dataset_checks.h"

#include <gtest/gtest.h>

#include <map>

#include "agent/train/train_command.h"
#include "common/toml_reader.h"
#include "tests/common/fake_env.h"
#include "tests/common/temp_dir.h"

namespace elastic::agent {
namespace {

using testing::Env;
using testing::FakeEnv;

class JobConfigTest : public ::testing::Test {
 protected:
  JobConfigTest() {
    dir_.Write("data/train-images-idx3-ubyte.gz", "");
    dir_.Write("data/train-labels-idx1-ubyte.gz", "");
  }

  std::string DataDir() const { return (dir_.path() / "data").string(); }
  std::string DataLine() const { return "[data]\npath = \"" + DataDir() + "\"\n"; }

  JobConfig Parse(const std::string& text, const Env& env = {}) {
    TomlReader reader = TomlReader::FromString(text, "job.toml");
    return ParseJobConfig(reader, FakeEnv(env), dir_.path().string(), CheckTrainingData);
  }

  std::string ErrorOf(const std::string& text, const Env& env = {}) {
    try {
      Parse(text, env);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(no error)";
  }

  elastic::testing::TempDir dir_;
};

TEST_F(JobConfigTest, DefaultsArePinned) {
  JobConfig c = Parse(DataLine());
  EXPECT_EQ(c.model.name, "fmnist_cnn");
  EXPECT_EQ(c.data.path, DataDir());
  EXPECT_EQ(c.train.ests, 1);
  EXPECT_EQ(c.train.global_batch, 256);
  EXPECT_DOUBLE_EQ(c.train.lr, 0.05);
  EXPECT_DOUBLE_EQ(c.train.momentum, 0.9);
  EXPECT_EQ(c.train.weight_decay, 0.0);
  EXPECT_EQ(c.train.lr_schedule, LrSchedule::kConstant);
  EXPECT_EQ(c.train.warmup_steps, 0);
  EXPECT_EQ(c.train.seed, 1);
  EXPECT_EQ(c.train.steps, 200);
  EXPECT_EQ(c.train.determinism, Determinism::kD1);
  EXPECT_EQ(c.train.plan, Plan::kAuto);
  EXPECT_EQ(c.train.threads, 1);
  EXPECT_EQ(c.train.cpu_threads, 1);
  EXPECT_EQ(c.train.log_every, 10);
  EXPECT_EQ(c.train.step_timeout_s, 600);
  EXPECT_FALSE(c.train.host_probe);
  EXPECT_EQ(c.train.device, ComputeDevice::kCpu);
  EXPECT_EQ(c.train.scaling, Scaling::kEst);
  EXPECT_EQ(c.checkpoint.dir, "");
  EXPECT_EQ(c.checkpoint.every_steps, 0);
  EXPECT_EQ(c.est_batch(), 256);
  // The struct's own defaults match what an empty file gives (apart from the resolved path).
  JobConfig plain;
  EXPECT_EQ(plain.data.path, "/usr/share/datasets/fashion-mnist");
  EXPECT_EQ(plain.train.ests, c.train.ests);
  EXPECT_EQ(plain.train.steps, c.train.steps);
}

TEST_F(JobConfigTest, ReadsEveryKey) {
  JobConfig c = Parse("[model]\nname = \"fmnist_cnn\"\n" + DataLine() +
                      "[train]\nests = 8\nglobal_batch = 64\nlr = 0.1\nmomentum = 0.5\nseed = 7\n"
                      "steps = 30\ndeterminism = \"statistical\"\nplan = \"tp\"\nthreads = 2\n"
                      "cpu_threads = 3\nlog_every = 0\nstep_timeout_s = 0\nhost_probe = true\n"
                      "weight_decay = 5e-4\nlr_schedule = \"cosine\"\nwarmup_steps = 4\n"
                      "[checkpoint]\ndir = \"ckpt\"\nevery_steps = 5\n");
  EXPECT_EQ(c.train.ests, 8);
  EXPECT_EQ(c.train.global_batch, 64);
  EXPECT_EQ(c.est_batch(), 8);
  EXPECT_DOUBLE_EQ(c.train.lr, 0.1);
  EXPECT_DOUBLE_EQ(c.train.momentum, 0.5);
  EXPECT_DOUBLE_EQ(c.train.weight_decay, 5e-4);
  EXPECT_EQ(c.train.lr_schedule, LrSchedule::kCosine);
  EXPECT_EQ(c.train.warmup_steps, 4);
  EXPECT_EQ(c.train.seed, 7);
  EXPECT_EQ(c.train.steps, 30);
  EXPECT_EQ(c.train.determinism, Determinism::kStatistical);
  EXPECT_EQ(c.train.plan, Plan::kTp);
  EXPECT_EQ(c.train.threads, 2);
  EXPECT_EQ(c.train.cpu_threads, 3);
  EXPECT_EQ(c.train.log_every, 0);
  EXPECT_EQ(c.train.step_timeout_s, 0);
  EXPECT_TRUE(c.train.host_probe);
  EXPECT_EQ(c.checkpoint.dir, (dir_.path() / "ckpt").string());  // relative to the config
  EXPECT_EQ(c.checkpoint.every_steps, 5);
}

// The shared data loaders (data.workers, data.prefetch) never change results; data.augment
// does, through each EST's own data stream.
TEST_F(JobConfigTest, DataLoaderKeys) {
  JobConfig defaults = Parse(DataLine());
  EXPECT_EQ(defaults.data.workers, 1);
  EXPECT_EQ(defaults.data.prefetch, 4);
  EXPECT_EQ(defaults.data.augment, Augment::kNone);
  JobConfig c = Parse(DataLine() + "workers = 0\nprefetch = 9\naugment = \"flip\"\n");
  EXPECT_EQ(c.data.workers, 0);
  EXPECT_EQ(c.data.prefetch, 9);
  EXPECT_EQ(c.data.augment, Augment::kFlip);
  EXPECT_EQ(ToString(c.data.augment), "flip");
  EXPECT_EQ(ErrorOf(DataLine() + "workers = 65\n"),
            "job.toml:3: data.workers: invalid value 65: expected an integer from 0 to 64");
  EXPECT_EQ(ErrorOf(DataLine() + "prefetch = 0\n"),
            "job.toml:3: data.prefetch: invalid value 0: expected an integer from 1 to 1024");
  EXPECT_EQ(ErrorOf(DataLine() + "augment = \"crop\"\n"),
            "job.toml:3: data.augment: invalid value \"crop\": expected \"none\" or \"flip\"");
}

// train.device only chooses where tensors live; a word other than cpu/cuda is refused on load
// (whether a GPU is there is the trainer's check: device_test.cc).
TEST_F(JobConfigTest, DeviceKey) {
  JobConfig c = Parse(DataLine() + "[train]\ndevice = \"cuda\"\n");
  EXPECT_EQ(c.train.device, ComputeDevice::kCuda);
  EXPECT_EQ(ToString(c.train.device), "cuda");
  EXPECT_EQ(Parse(DataLine() + "[train]\ndevice = \"cpu\"\n").train.device, ComputeDevice::kCpu);
  EXPECT_EQ(ToString(ComputeDevice::kCpu), "cpu");
  EXPECT_EQ(ErrorOf(DataLine() + "[train]\ndevice = \"gpu\"\n"),
            "job.toml:4: train.device: invalid value \"gpu\": expected \"cpu\" or \"cuda\"");
}

TEST_F(JobConfigTest, LinearScalingIsTheTorchElasticComparisonMode) {
  JobConfig c = Parse(DataLine() +
                      "[train]\nests = 8\nglobal_batch = 256\nlr = 0.08\nscaling = \"linear\"\n");
  EXPECT_EQ(c.train.scaling, Scaling::kLinear);
  EXPECT_EQ(ToString(c.train.scaling), "linear");
  // Per-worker batch fixed at 32; global batch and lr linear in W; W = ests is the config.
  JobConfig two = ScaledForWorld(c, 2);
  EXPECT_EQ(two.train.ests, 2);
  EXPECT_EQ(two.train.global_batch, 64);
  EXPECT_DOUBLE_EQ(two.train.lr, 0.02);
  JobConfig eight = ScaledForWorld(c, 8);
  EXPECT_EQ(eight.train.global_batch, 256);
  EXPECT_EQ(eight.train.lr, 0.08);
  // "est" ignores W.
  JobConfig est = Parse(DataLine() + "[train]\nests = 8\nscaling = \"est\"\n");
  EXPECT_EQ(ScaledForWorld(est, 2).train.ests, 8);
  EXPECT_EQ(ScaledForWorld(est, 2).train.global_batch, 256);
  EXPECT_EQ(ErrorOf(DataLine() + "[train]\nscaling = \"torchelastic\"\n"),
            "job.toml:4: train.scaling: invalid value \"torchelastic\": expected \"est\" or "
            "\"linear\"");
}

TEST_F(JobConfigTest, RelativeDataPathIsResolvedAgainstTheConfigDirectory) {
  EXPECT_EQ(Parse("[data]\npath = \"./data/\"\n").data.path, DataDir() + "/");
  dir_.Write("job.toml", "[data]\npath = \"data\"\n");
  JobConfig c = LoadJobConfig((dir_.path() / "job.toml").string(), FakeEnv({}), CheckTrainingData);
  EXPECT_EQ(c.data.path, DataDir());
}

TEST_F(JobConfigTest, EnvironmentOverridesTheFile) {
  JobConfig c = Parse(DataLine() + "[train]\nests = 2\nplan = \"dp\"\n",
                      {{"SLURM_ELASTIC_EST", "4"},
                       {"SLURM_ELASTIC_PLAN", "tp"},
                       {"SLURM_ELASTIC_DETERMINISM", "statistical"}});
  EXPECT_EQ(c.train.ests, 4);
  EXPECT_EQ(c.train.plan, Plan::kTp);
  EXPECT_EQ(c.train.determinism, Determinism::kStatistical);
}

TEST_F(JobConfigTest, PluginCheckpointDirIsUsedOnlyWhenTheFileNamesNone) {
  const Env plugin = {{"SLURM_ELASTIC_CHECKPOINT_DIR", "/spool/alice/42"}};
  EXPECT_EQ(Parse(DataLine(), plugin).checkpoint.dir, "/spool/alice/42");
  EXPECT_EQ(Parse(DataLine() + "[checkpoint]\ndir = \"/mine\"\n", plugin).checkpoint.dir, "/mine");
  EXPECT_EQ(Parse(DataLine()).checkpoint.dir, "");
}

TEST_F(JobConfigTest, MissingFileIsAConfigError) {
  try {
    LoadJobConfig((dir_.path() / "absent.toml").string(), FakeEnv({}), CheckTrainingData);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("absent.toml: cannot read config file"),
              std::string::npos);
  }
}

struct BadCase {
  std::string name;
  std::string train;  // [train] section body ("" = none), after a valid [data] section
  Env env;
  std::string expected;  // the whole message, with DIR for the data directory
};

TEST_F(JobConfigTest, InvalidInputs) {
  const std::vector<BadCase> cases = {
      {"unknown key names its line",
       "ests = 2\nglobal_bach = 64\n",
       {},
       "job.toml:5: train.global_bach: unknown key (check the spelling and the section it is in)"},
      {"wrong type",
       "ests = \"8\"\n",
       {},
       "job.toml:4: train.ests: expected an integer from 1 to 1048576"},
      {"zero ests",
       "ests = 0\n",
       {},
       "job.toml:4: train.ests: invalid value 0: expected an integer from 1 to 1048576"},
      {"batch not divisible",
       "ests = 3\nglobal_batch = 256\n",
       {},
       "job.toml:5: train.global_batch: 256 is not divisible by train.ests = 3: each EST "
       "processes global_batch / ests samples per step"},
      {"bad plan",
       "plan = \"warp\"\n",
       {},
       "job.toml:4: train.plan: invalid value \"warp\": expected one of auto, dp, ga, gc, "
       "zero-dp, zero-offload, tp, pp, burst"},
      {"tp under d1",
       "plan = \"tp\"\ndeterminism = \"d1\"\n",
       {},
       "job.toml:4: train.plan: plan \"tp\" is not allowed under determinism \"d1\": it changes "
       "the arithmetic, so only \"statistical\" admits it"},
      {"bad determinism",
       "determinism = \"d3\"\n",
       {},
       "job.toml:4: train.determinism: invalid value \"d3\": expected one of d0, d1, d2, "
       "statistical"},
      {"zero lr", "lr = 0.0\n", {}, "job.toml:4: train.lr: invalid value 0: expected a number > 0"},
      {"negative lr",
       "lr = -1\n",
       {},
       "job.toml:4: train.lr: invalid value -1: expected a number from 0 to 1e+06"},
      {"momentum 1",
       "momentum = 1\n",
       {},
       "job.toml:4: train.momentum: invalid value 1: expected a number from 0 to below 1"},
      {"negative weight decay",
       "weight_decay = -0.1\n",
       {},
       "job.toml:4: train.weight_decay: invalid value -0.1: expected a number from 0 to 1"},
      {"unknown schedule",
       "lr_schedule = \"linear\"\n",
       {},
       "job.toml:4: train.lr_schedule: invalid value \"linear\": expected \"constant\" or "
       "\"cosine\""},
      {"warmup past the end",
       "steps = 10\nwarmup_steps = 11\n",
       {},
       "job.toml:5: train.warmup_steps: invalid value 11: expected at most train.steps = 10"},
      {"zero threads",
       "threads = 0\n",
       {},
       "job.toml:4: train.threads: invalid value 0: expected an integer from 1 to 256"},
      {"too many threads",
       "threads = 257\n",
       {},
       "job.toml:4: train.threads: invalid value 257: expected an integer from 1 to 256"},
      {"zero cpu_threads",
       "cpu_threads = 0\n",
       {},
       "job.toml:4: train.cpu_threads: invalid value 0: expected an integer from 1 to 256"},
      {"zero steps",
       "steps = 0\n",
       {},
       "job.toml:4: train.steps: invalid value 0: expected an integer from 1 to "
       "9223372036854775807"},
      {"bad env est",
       "",
       {{"SLURM_ELASTIC_EST", "0"}},
       "environment SLURM_ELASTIC_EST: invalid value \"0\": expected an integer from 1 to "
       "1048576"},
      {"bad env plan",
       "",
       {{"SLURM_ELASTIC_PLAN", "fast"}},
       "environment SLURM_ELASTIC_PLAN: invalid value \"fast\": expected one of auto, dp, ga, gc, "
       "zero-dp, zero-offload, tp, pp, burst"},
      {"bad env determinism",
       "",
       {{"SLURM_ELASTIC_DETERMINISM", "D1"}},
       "environment SLURM_ELASTIC_DETERMINISM: invalid value \"D1\": expected one of d0, d1, d2, "
       "statistical"},
      {"env est not dividing the batch",
       "global_batch = 256\n",
       {{"SLURM_ELASTIC_EST", "3"}},
       "job.toml:4: train.global_batch: 256 is not divisible by train.ests = 3 (from "
       "SLURM_ELASTIC_EST): each EST processes global_batch / ests samples per step"},
      {"env plan tp under file d1",
       "determinism = \"d1\"\n",
       {{"SLURM_ELASTIC_PLAN", "tp"}},
       "job.toml: train.plan: plan \"tp\" (from SLURM_ELASTIC_PLAN) is not allowed under "
       "determinism \"d1\": it changes the arithmetic, so only \"statistical\" admits it"},
  };
  for (const BadCase& c : cases) {
    std::string text = DataLine() + (c.train.empty() ? "" : "[train]\n" + c.train);
    EXPECT_EQ(ErrorOf(text, c.env), c.expected) << c.name;
  }
}

// A user's module and shards: model.torchscript, data.format = "tensors" (its default there),
// relative paths against the config's directory, and what is refused.
TEST_F(JobConfigTest, TorchScriptModelAndTensorShards) {
  dir_.Write("shards/train-0.pt", "");
  const JobConfig c = Parse("[model]\ntorchscript = \"m.pt\"\n[data]\npath = \"shards\"\n");
  EXPECT_EQ(c.model.torchscript, (dir_.path() / "m.pt").string());
  EXPECT_EQ(c.model.name, "");
  EXPECT_EQ(ModelLabel(c), "torchscript");
  EXPECT_EQ(c.data.format, DatasetKind::kTensors);
  EXPECT_EQ(c.data.path, (dir_.path() / "shards").string());
  EXPECT_EQ(c.data.cache_mb, kDefaultDataCacheMb);
  // A built-in model on shards of its own layout; its own dataset stays the default.
  const JobConfig cnn =
      Parse("[data]\nformat = \"tensors\"\npath = \"shards\"\ncache_mb = 64\n");
  EXPECT_EQ(cnn.data.format, DatasetKind::kTensors);
  EXPECT_EQ(cnn.data.cache_mb, 64);
  EXPECT_EQ(Parse(DataLine()).data.format, DatasetKind::kFashionMnist);
  EXPECT_EQ(ErrorOf("[model]\nname = \"gpt\"\ntorchscript = \"m.pt\"\n"),
            "job.toml:3: model.torchscript: given with model.name = \"gpt\": expected one of the "
            "two");
  EXPECT_EQ(ErrorOf("[model]\ntorchscript = \"m.pt\"\n"),
            "job.toml: data.path: is not set: data.format = \"tensors\" needs the directory of "
            "train*.pt shards");
  EXPECT_EQ(ErrorOf("[data]\nformat = \"csv\"\n"),
            "job.toml:2: data.format: invalid value \"csv\": expected \"fashion-mnist\", "
            "\"text\" or \"tensors\"");
  EXPECT_EQ(ErrorOf("[data]\nformat = \"text\"\n"),
            "job.toml:2: data.format: \"text\": model \"fmnist_cnn\" reads \"fashion-mnist\"; "
            "expected that or \"tensors\"");
  dir_.Write("noshards/test-0.pt", "");
  EXPECT_EQ(ErrorOf("[model]\ntorchscript = \"m.pt\"\n[data]\npath = \"noshards\"\n"),
            "job.toml:4: data.path: \"" + (dir_.path() / "noshards").string() +
                "\" has no train*.pt file: expected shards written by torch.save({\"inputs\": "
                "..., \"targets\": ...}, FILE)");
}

TEST_F(JobConfigTest, InvalidModelAndData) {
  EXPECT_EQ(ErrorOf("[model]\nname = \"resnet\"\n" + DataLine()),
            "job.toml:2: model.name: unknown model \"resnet\": expected one of fmnist_cnn, gpt, or "
            "model.torchscript = \"FILE\" for your own module");
  EXPECT_EQ(ErrorOf("[data]\npath = \"/nonexistent/fmnist\"\n"),
            "job.toml:2: data.path: \"/nonexistent/fmnist\" is not a directory: expected the "
            "Fashion-MNIST directory (Debian package dataset-fashion-mnist)");
  dir_.Write("empty/README", "");
  EXPECT_EQ(ErrorOf("[data]\npath = \"empty\"\n"),
            "job.toml:2: data.path: \"" + (dir_.path() / "empty").string() +
                "\" has no train-images-idx3-ubyte[.gz]: expected the Fashion-MNIST IDX files");
  EXPECT_EQ(ErrorOf("[data\npath = 1\n").rfind("job.toml:1: invalid TOML", 0), 0u);
  EXPECT_EQ(ErrorOf("[data]\npath = 1\n"), "job.toml:2: data.path: expected a string");
}

}  // namespace
}  // namespace elastic::agent

namespace elastic::agent {
namespace {

// SLURM_ELASTIC_PLAN_ARGS: the per-plan parameters the supervisor hands a generation with its
// plan word (docs/plans.md, "The supervisor's choice on every launch").
TEST_F(JobConfigTest, PlanArgumentsFromTheSupervisor) {
  JobConfig c = Parse(DataLine() + "[train]\ncpu_threads = 2\n",
                      {{"SLURM_ELASTIC_PLAN", "zero-offload"}, {"SLURM_ELASTIC_PLAN_ARGS", "c=6"}});
  EXPECT_EQ(c.train.plan, Plan::kZeroOffload);
  EXPECT_EQ(c.train.cpu_threads, 6);
  c = Parse(DataLine() + "[train]\ncpu_threads = 2\n", {{"SLURM_ELASTIC_PLAN_ARGS", ""}});
  EXPECT_EQ(c.train.cpu_threads, 2);  // empty: none
  EXPECT_EQ(ErrorOf(DataLine(), {{"SLURM_ELASTIC_PLAN_ARGS", "c=0"}}),
            "environment SLURM_ELASTIC_PLAN_ARGS: invalid value \"0\" for c: expected an integer "
            "from 1 to 256");
  EXPECT_EQ(ErrorOf(DataLine(), {{"SLURM_ELASTIC_PLAN_ARGS", "threads=2"}}),
            "environment SLURM_ELASTIC_PLAN_ARGS: invalid item \"threads=2\": expected "
            "c=<host threads> (e.g. \"c=2\") or burst=<ranks per block> (e.g. "
            "\"burst=2/1/1/2\")");
}

TEST_F(JobConfigTest, ParsePlanArgs) {
  EXPECT_FALSE(ParsePlanArgs("").value->cpu_threads.has_value());
  EXPECT_EQ(ParsePlanArgs("c=256").value->cpu_threads, 256);
  EXPECT_EQ(ParsePlanArgs("c=1,c=3").value->cpu_threads, 3);  // the last wins
  for (const char* bad : {"c", "c=", "c=257", "c=2x", "c=-1", ",", "c=2,", "C=2"}) {
    EXPECT_FALSE(ParsePlanArgs(bad)) << bad;
  }
}

TEST_F(JobConfigTest, PerfModelIsAFileResolvedAgainstTheConfigDirectory) {
  EXPECT_EQ(Parse(DataLine()).train.perf_model, "");
  dir_.Write("fits/fitted.json", "{}");  // its contents are the supervisor's to check
  EXPECT_EQ(Parse(DataLine() + "[train]\nperf_model = \"fits/fitted.json\"\n").train.perf_model,
            (dir_.path() / "fits/fitted.json").string());
  EXPECT_EQ(ErrorOf(DataLine() + "[train]\nperf_model = \"fits\"\n"),
            "job.toml:4: train.perf_model: \"" + (dir_.path() / "fits").string() +
                "\" is not a file: expected a fitted.json from `elastic-plan fit` (or drop the key "
                "for the built-in model)");
}

}  // namespace
}  // namespace elastic::agent
