// A profile run's job file, its per-step throughput, the spread over rounds, the bandwidth line
// and the CSV.
#include "agent/profile/profile_runs.h"

#include <gtest/gtest.h>

#include <string>

#include "agent/common/errors.h"
#include "agent/config/job_config.h"
#include "agent/data/dataset_checks.h"
#include "agent/profile/points_csv.h"
#include "agent/profile/profile_command.h"
#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

const char* kJob = R"([model]
name = "fmnist_cnn"
[data]
path = "data"
workers = 2
[train]
ests = 8
global_batch = 96
lr = 0.1
seed = 7
plan = "dp"
steps = 500
log_every = 50
[checkpoint]
dir = "ckpt"
every_steps = 10
)";

TEST(JobTomlForRun, SetsTheRunAndKeepsTheRest) {
  RunSettings settings;
  settings.plan = "zero-offload";
  settings.ests = 6;
  settings.threads = 2;
  settings.cpu_threads = 3;
  settings.steps = 13;
  settings.data_path = "/usr/share/datasets/fashion-mnist";
  const std::string text = JobTomlForRun(kJob, "train.toml", settings);
  TomlReader reader = TomlReader::FromString(text, "run.toml");
  EnvLookup no_env = [](std::string_view) { return std::optional<std::string>(); };
  JobConfig config = ParseJobConfig(reader, no_env, "/elsewhere", CheckTrainingData);
  EXPECT_EQ(config.train.plan, Plan::kZeroOffload);
  EXPECT_EQ(config.train.ests, 6);
  EXPECT_EQ(config.train.threads, 2);
  EXPECT_EQ(config.train.cpu_threads, 3);
  EXPECT_EQ(config.train.steps, 13);
  EXPECT_EQ(config.train.log_every, 1);
  EXPECT_FALSE(config.train.host_probe);
  EXPECT_EQ(config.data.path, "/usr/share/datasets/fashion-mnist");
  EXPECT_TRUE(config.checkpoint.dir.empty());  // never resume from or leave checkpoints
  // Untouched keys keep the job's values.
  EXPECT_EQ(config.train.global_batch, 96);
  EXPECT_EQ(config.train.lr, 0.1);
  EXPECT_EQ(config.train.seed, 7);
  EXPECT_EQ(config.data.workers, 2);
}

// A job that warms its rate up over more steps than a profile run takes still profiles.
TEST(JobTomlForRun, DropsTheWarmupLongerThanTheRun) {
  std::string job = kJob;
  job.replace(job.find("steps = 500"), 11,
              "steps = 500\nwarmup_steps = 100\nlr_schedule = \"cosine\"");
  RunSettings settings;
  settings.plan = "dp";
  settings.ests = 8;
  settings.steps = 13;
  settings.data_path = "/usr/share/datasets/fashion-mnist";
  TomlReader reader =
      TomlReader::FromString(JobTomlForRun(job, "train.toml", settings), "run.toml");
  EnvLookup no_env = [](std::string_view) { return std::optional<std::string>(); };
  const JobConfig config = ParseJobConfig(reader, no_env, "/elsewhere", CheckTrainingData);
  EXPECT_EQ(config.train.steps, 13);
  EXPECT_EQ(config.train.warmup_steps, 0);
  EXPECT_EQ(config.train.lr_schedule, LrSchedule::kCosine);
}

TEST(JobTomlForRun, RefusesAJobThatIsNotToml) {
  EXPECT_THROW(JobTomlForRun("[train\n", "train.toml", RunSettings{}), ConfigError);
}

TEST(StepRates, MedianOfTheMeasuredStepsOnly) {
  const std::string output =
      "elastic-agent: training fmnist_cnn ...\n"
      "elastic-agent: first step done at step 1\n"
      "step=1 loss=2.300000 samples_per_s=10.0\n"
      "step=2 loss=2.200000 samples_per_s=900.5\n"
      "step=3 loss=2.100000 samples_per_s=1000.0\n"
      "step=4 loss=2.000000 samples_per_s=1200.0\n"
      "step=5 loss=1.900000 samples_per_s=1100.0\n"
      "elastic-agent: step=5 loss=1.900000 params_sha256=abc\n";
  std::vector<StepRate> rates = ParseStepRates(output);
  ASSERT_EQ(rates.size(), 5u);
  EXPECT_EQ(rates[1].step, 2);
  EXPECT_DOUBLE_EQ(rates[1].samples_per_s, 900.5);
  EXPECT_DOUBLE_EQ(MedianMeasuredRate(rates, 1, 4), 0.5 * (1000.0 + 1100.0));
  EXPECT_DOUBLE_EQ(MedianMeasuredRate(rates, 2, 3), 1100.0);
  // Step 6 never ran: the measurement is refused, not taken over fewer steps.
  try {
    MedianMeasuredRate(rates, 2, 4);
    FAIL() << "accepted a missing step";
  } catch (const TrainingError& e) {
    EXPECT_NE(std::string(e.what()).find("for step 6"), std::string::npos) << e.what();
  }
}

TEST(JobTomlForRun, TurnsTheHostProbeOnWhenAsked) {
  RunSettings settings;
  settings.plan = "dp";
  settings.data_path = "/usr/share/datasets/fashion-mnist";
  settings.host_probe = true;
  TomlReader reader =
      TomlReader::FromString(JobTomlForRun(kJob, "train.toml", settings), "run.toml");
  EnvLookup no_env = [](std::string_view) { return std::optional<std::string>(); };
  EXPECT_TRUE(ParseJobConfig(reader, no_env, "/elsewhere", CheckTrainingData).train.host_probe);
}

// A user's module named relative to the job file still loads from the run file elsewhere.
TEST(JobTomlForRun, MakesTheTorchScriptPathAbsolute) {
  RunSettings settings;
  settings.plan = "dp";
  settings.data_path = "/data/shards";
  settings.torchscript = "/home/u/job/model.pt";
  const std::string text = JobTomlForRun(
      "[model]\ntorchscript = \"model.pt\"\n[data]\npath = \"shards\"\n[train]\nests = 4\n"
      "global_batch = 16\n",
      "job.toml", settings);
  TomlReader reader = TomlReader::FromString(text, "run.toml");
  EnvLookup no_env = [](std::string_view) { return std::optional<std::string>(); };
  const JobConfig config = ParseJobConfig(reader, no_env, "/elsewhere");  // paths only
  EXPECT_EQ(config.model.torchscript, "/home/u/job/model.pt");
  EXPECT_EQ(config.data.path, "/data/shards");
}

TEST(StepRates, ReadsTheProbeTimeWhereTheLineHasOne) {
  std::vector<StepRate> rates = ParseStepRates(
      "step=1 loss=2.3 samples_per_s=900.0 probe_ms=2.125\n"
      "step=2 loss=2.2 samples_per_s=950.0\n");
  ASSERT_EQ(rates.size(), 2u);
  EXPECT_DOUBLE_EQ(rates[0].probe_ms, 2.125);
  EXPECT_DOUBLE_EQ(rates[0].samples_per_s, 900.0);
  EXPECT_DOUBLE_EQ(rates[1].probe_ms, 0.0);  // no probe on the line
  const std::vector<StepRate> measured = MeasuredSteps(rates, 1, 1);
  ASSERT_EQ(measured.size(), 1u);
  EXPECT_EQ(measured[0].step, 2);
}

TEST(StepRates, ZeroRateIsRefused) {
  std::vector<StepRate> rates = ParseStepRates("step=1 loss=1 samples_per_s=0.0\n");
  EXPECT_THROW(MedianMeasuredRate(rates, 0, 1), TrainingError);
}

TEST(BandwidthLine, ReadsTheRateOrRefuses) {
  EXPECT_DOUBLE_EQ(ParseBandwidthLine("noise\nelastic-agent: bandwidth bytes=1024 "
                                      "bytes_per_s=2.5e+09\n"),
                   2.5e9);
  EXPECT_THROW(ParseBandwidthLine("mpirun: not enough slots\n"), TrainingError);
  EXPECT_THROW(ParseBandwidthLine("elastic-agent: bandwidth bytes=1 bytes_per_s=0\n"),
               TrainingError);
}

TEST(PointsCsv, OneQuotedPlanPerRow) {
  perf::ProfiledPoints points;
  perf::ProfiledRun run;
  run.label = "w2-offload";
  run.point.plan.dp = 2;
  run.point.plan.zero_stage = 2;
  run.point.plan.offload = true;
  run.point.plan.cpu_threads = 2;
  run.point.resources.gpus = 2;
  run.point.throughput = 1500.25;
  points.runs = {run};
  const std::string csv = ProfiledPointsToCsv(points);
  EXPECT_EQ(csv.substr(0, csv.find(',')), "label");
  EXPECT_NE(csv.find("\nw2-offload,\"dp=2+zero-2+offload,c=2\",2,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",1500.25\n"), std::string::npos) << csv;
}

TEST(RoundSpread, RangeOverTheMedian) {
  // Rates of one configuration over five rounds, one in the host's slow phase.
  EXPECT_DOUBLE_EQ(RelativeSpread({4000.0, 2700.0, 4100.0, 3900.0, 4050.0}),
                   (4100.0 - 2700.0) / 4000.0);
  EXPECT_DOUBLE_EQ(RelativeSpread({1000.0, 1000.0}), 0.0);
  EXPECT_DOUBLE_EQ(RelativeSpread({900.0, 1100.0}), 200.0 / 1000.0);
}

TEST(RoundSpread, MedianOfEvenAndOddCounts) {
  EXPECT_DOUBLE_EQ(Median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(Median({4.0, 1.0, 3.0, 2.0}), 2.5);
}

}  // namespace
}  // namespace elastic::agent
