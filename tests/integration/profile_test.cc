// `elastic-agent profile` on real Open MPI ranks and real Fashion-MNIST: two tiny configurations
// give points.json with positive throughputs and measured bandwidths that `elastic-plan fit`
// reads, and refuses to fit (too few points); a run the model cannot describe is refused before
// anything runs; the gpt transformer on its text corpus profiles tp and dp in rounds. Needs mpirun
// and the Fashion-MNIST package (gpt: fortunes-min); no Slurm.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "perf/rubick/perf_json.h"
#include "tests/common/agent_runs.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"

namespace elastic::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kData = "/usr/share/datasets/fashion-mnist";
constexpr const char* kCorpus = "/usr/share/games/fortunes";
const std::string kAllowRoot = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ";

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string PlanTool() { return ELASTIC_BINARY_DIR "/tools/elastic-plan"; }

class Profile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunCommand("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed";
    if (!fs::exists(kData)) GTEST_SKIP() << kData << " missing (dataset-fashion-mnist)";
    // E = 4 ESTs, global batch 64; the profile removes the job's [checkpoint] table.
    job_ = WriteFmnistJobConfig(dir_, "job", /*ests=*/4, /*seed=*/1, /*steps=*/100);
  }

  CommandResult RunProfile(const std::string& runs, const fs::path& out) {
    const fs::path file = dir_.Write("profile.toml",
                                     "job = \"job.toml\"\nwarmup_steps = 1\n"
                                     "measured_steps = 2\n" +
                                         runs);
    return RunCommand(kAllowRoot + "timeout -k 5 300 " + AgentPath() + " profile --config " +
                      ShellQuote(file.string()) + " --out " + ShellQuote(out.string()));
  }

  TempDir dir_;
  std::string job_;
};

TEST_F(Profile, WritesMeasuredPointsThatTheFitterReadsAndRefusesToFitTwo) {
  const fs::path out = dir_.path() / "out";
  CommandResult run = RunProfile(
      "[[run]]\nworkers = 1\nplan = \"dp\"\n"
      "[[run]]\nworkers = 2\nplan = \"zero-offload\"\ncpu_threads = 1\n",
      out);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("profile: [2/2] w2-tjob-zero-offload-c1"), std::string::npos)
      << run.output;
  // The forward passes at the job's micro-batch and at half of it, split into fixed + per sample.
  EXPECT_NE(run.output.find(" at half the batch (8 samples)"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("profile: forward pass with 1 intra-op thread(s): "), std::string::npos)
      << run.output;
  // The backward pass after each forward pass, split alike.
  EXPECT_NE(run.output.find("profile: backward pass with 1 intra-op thread(s): "),
            std::string::npos)
      << run.output;

  Result<perf::ProfiledPoints> points = perf::ProfiledPointsFromJson(ReadAll(out / "points.json"));
  ASSERT_TRUE(points) << points.error;
  EXPECT_EQ(points->model_name, "fmnist_cnn");
  // A CNN has no tensor-parallel form: nothing to split; its blocks still share the pass.
  EXPECT_EQ(points->model.tp_unsplit_share, 0.0);
  EXPECT_EQ(static_cast<int>(points->model.block_shares.size()), points->model.layers);
  EXPECT_GT(points->model.params, 1000);  // counted from the real model
  EXPECT_EQ(points->model.global_batch, 64);
  // The job trains at d1: its ranks gather every EST's gradient (V_dp, perf_model.h).
  EXPECT_EQ(points->model.gradient_exchange, perf::GradientExchange::kEstSlots);
  EXPECT_GT(points->b_intra, 0);  // measured between two ranks
  EXPECT_GT(points->b_pcie, 0);   // measured host copy
  ASSERT_EQ(points->runs.size(), 2u);
  for (const perf::ProfiledRun& r : points->runs) {
    EXPECT_GT(r.point.throughput, 0) << r.label;
    EXPECT_GT(r.point.resources.gpu_flops, 0) << r.label;            // measured forward rate
    EXPECT_GE(r.point.resources.fwd_s_per_pass, 0) << r.label;       // its fixed part, or 0
    ASSERT_TRUE(r.point.resources.backward.has_value()) << r.label;  // the timed backward pass
    EXPECT_GE(r.point.resources.backward->s_per_pass, 0) << r.label;
    EXPECT_GT(r.point.resources.backward->s_per_sample, 0) << r.label;
    EXPECT_EQ(r.point.resources.b_intra, points->b_intra) << r.label;
    EXPECT_EQ(r.measured_steps, 2) << r.label;
  }
  EXPECT_EQ(points->runs[0].point.plan.dp, 1);
  EXPECT_EQ(points->runs[0].point.plan.ga_steps, 4);  // E = 4 ESTs time-sliced on one rank
  EXPECT_EQ(points->runs[1].point.plan.dp, 2);
  EXPECT_TRUE(points->runs[1].point.plan.offload);
  EXPECT_EQ(points->runs[1].point.resources.gpus, 2);
  // The CSV has a header and one row per run; each run's job file and output are kept.
  const std::string csv = ReadAll(out / "points.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3) << csv;
  EXPECT_TRUE(fs::exists(out / "runs" / "w1-tjob-dp.toml"));
  EXPECT_NE(ReadAll(out / "runs" / "w1-tjob-dp.log").find("step=3 loss="), std::string::npos);

  // The host probe is on by default: every step line of both runs (the 2-rank one gathers its
  // ranks' probe times) carries probe_ms, the fitted scaling is printed, and the plain medians
  // are written beside the scaled rates, for the same runs.
  for (const char* log : {"w1-tjob-dp.log", "w2-tjob-zero-offload-c1.log"}) {
    const std::string text = ReadAll(out / "runs" / log);
    const std::regex probed(R"(step=3 loss=\S+ samples_per_s=[0-9.]+ probe_ms=[0-9.]*[1-9])");
    EXPECT_TRUE(std::regex_search(text, probed)) << log << ":\n" << text;
  }
  EXPECT_NE(run.output.find("profile: host probe: step rate ~ probe^"), std::string::npos)
      << run.output;
  Result<perf::ProfiledPoints> plain =
      perf::ProfiledPointsFromJson(ReadAll(out / "points.plain.json"));
  ASSERT_TRUE(plain) << plain.error;
  ASSERT_EQ(plain->runs.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(plain->runs[i].label, points->runs[i].label);
    EXPECT_GT(plain->runs[i].point.throughput, 0);
  }

  CommandResult fit =
      RunCommand(PlanTool() + " fit --points " + ShellQuote((out / "points.json").string()));
  EXPECT_EQ(fit.exit_code, 2) << fit.output;
  EXPECT_NE(fit.output.find("2 profiled points; fitting the model's 7 parameters needs at "
                            "least 7 (Rubick §4.3)"),
            std::string::npos)
      << fit.output;
}

// `elastic-plan fit --out`: fitted.json states the reference worker's forward time and its fixed
// costs per pass (the fewest intra-op threads, then the fewest workers), which the parameters
// were fitted with. Points generated by the model itself, so the fit has something to recover.
TEST(PlanFit, FittedJsonCarriesTheReferenceRunsFixedCostsPerPass) {
  perf::ProfiledPoints points;
  points.model_name = "fmnist_cnn";
  points.model.params = 80202;
  points.model.layers = 4;
  points.model.global_batch = 192;
  points.model.fwd_flops_per_sample = 1;  // gpu_flops is then each run's forward samples/s
  points.b_intra = points.b_inter = 5e9;
  points.b_pcie = 3e10;
  const perf::PerfParams truth{.k_bwd = 1.1,
                               .k_sync = 3,
                               .k_opt = 2e-8,
                               .k_opt_off = 2e-8,
                               .k_off = 2,
                               .k_swap = 4,
                               .k_const = 0.002};
  struct Run {
    const char* label;
    perf::ExecutionPlan plan;
    int threads;
  };
  const std::vector<Run> runs = {
      {"w1-t2-dp", {.dp = 1, .ga_steps = 6}, 2},  // first in the file, but 2 threads
      {"w1-zero-offload-c1",
       {.dp = 1, .ga_steps = 6, .zero_stage = 2, .offload = true, .cpu_threads = 1},
       1},
      {"w1-zero-offload-c2",
       {.dp = 1, .ga_steps = 6, .zero_stage = 2, .offload = true, .cpu_threads = 2},
       1},
      {"w2-zero-offload-c1",
       {.dp = 2, .ga_steps = 3, .zero_stage = 2, .offload = true, .cpu_threads = 1},
       1},
      {"w2-dp", {.dp = 2, .ga_steps = 3}, 1},
      {"w1-dp", {.dp = 1, .ga_steps = 6}, 1},  // the reference: 1 thread, 1 worker
      {"w2-zero-dp", {.dp = 2, .ga_steps = 3, .zero_stage = 2}, 1},
      {"w1-gc", {.dp = 1, .ga_steps = 6, .gc = true}, 1},
  };
  for (const Run& run : runs) {
    perf::ProfiledRun profiled;
    profiled.label = run.label;
    profiled.intra_threads = run.threads;
    profiled.measured_steps = 20;
    profiled.point.plan = run.plan;
    perf::Resources& r = profiled.point.resources;
    r.gpus = r.gpus_per_node = run.plan.dp;
    r.cpus = run.plan.dp * std::max(run.threads, run.plan.cpu_threads);
    r.b_intra = r.b_inter = points.b_intra;
    r.b_pcie = points.b_pcie;
    r.gpu_flops = run.threads == 1 ? 8000 : 11000;
    r.fwd_s_per_pass = run.threads == 1 ? 2e-4 : 3e-4;
    r.backward =
        perf::PassTime{run.threads == 1 ? 4e-4 : 5e-4, run.threads == 1 ? 1.3e-4 : 1e-4};
    const auto predicted = perf::PredictIteration(points.model, r, run.plan, truth);
    ASSERT_TRUE(predicted) << predicted.error;
    profiled.point.throughput = predicted->throughput;
    profiled.median_step_s = predicted->iter;
    points.runs.push_back(profiled);
  }
  TempDir dir;
  const fs::path in = dir.Write("points.json", perf::ProfiledPointsToJson(points));
  const fs::path out = dir.path() / "fitted.json";
  CommandResult fit = RunCommand(PlanTool() + " fit --points " + ShellQuote(in.string()) +
                                 " --out " + ShellQuote(out.string()));
  ASSERT_EQ(fit.exit_code, 0) << fit.output;
  Result<perf::FittedModel> fitted = perf::FittedModelFromJson(ReadAll(out));
  ASSERT_TRUE(fitted) << fitted.error;
  EXPECT_DOUBLE_EQ(fitted->model.fwd_s_per_sample, 1.0 / 8000);
  EXPECT_EQ(fitted->fwd_s_per_pass, 2e-4);
  ASSERT_TRUE(fitted->backward.has_value());
  EXPECT_EQ(fitted->backward->s_per_pass, 4e-4);
  EXPECT_EQ(fitted->backward->s_per_sample, 1.3e-4);
  EXPECT_NE(fit.output.find("fitted points: 7"), std::string::npos) << fit.output;
}

// The transformer (Rubick's own subject): its sequence length and hidden size come from the real
// model (V_tp and V_pp need them), tp runs on one group of both ranks, and with repeats = 2
// every run is measured in two rounds with a log each.
TEST_F(Profile, ProfilesTheTransformerWithTensorParallelismInRounds) {
  if (!fs::exists(kCorpus)) GTEST_SKIP() << kCorpus << " missing (fortunes-min)";
  dir_.Write("gpt.toml", "[model]\nname = \"gpt\"\n[data]\npath = \"" + std::string(kCorpus) +
                             "\"\n[train]\nests = 4\nglobal_batch = 32\nlr = 0.1\nseed = 1\n"
                             "steps = 100\nthreads = 1\ndeterminism = \"statistical\"\n");
  const fs::path out = dir_.path() / "gpt";
  const fs::path file =
      dir_.Write("gpt-profile.toml",
                 "job = \"gpt.toml\"\nwarmup_steps = 1\nmeasured_steps = 2\n"
                 "repeats = 2\nhost_probe = false\n[[run]]\nworkers = 1\nplan = \"dp\"\n"
                 "[[run]]\nworkers = 2\nplan = \"tp\"\n");
  CommandResult run =
      RunCommand(kAllowRoot + "timeout -k 5 300 " + AgentPath() + " profile --config " +
                 ShellQuote(file.string()) + " --out " + ShellQuote(out.string()));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  Result<perf::ProfiledPoints> points = perf::ProfiledPointsFromJson(ReadAll(out / "points.json"));
  ASSERT_TRUE(points) << points.error;
  EXPECT_EQ(points->model_name, "gpt");
  EXPECT_EQ(points->model.seq_len, 32);  // kGptContext positions per sample
  EXPECT_EQ(points->model.hidden, 64);   // kGptModelWidth
  EXPECT_EQ(points->model.layers, 4);    // embeddings | 2 transformer layers | head
  // How the model splits, measured: the layers carry most of a pass and the embeddings almost
  // none; the head and loss run whole on every tp rank, so part of the pass does not divide.
  const std::vector<double>& shares = points->model.block_shares;
  ASSERT_EQ(shares.size(), 4u);
  EXPECT_NEAR(shares[0] + shares[1] + shares[2] + shares[3], 1.0, 1e-9);
  EXPECT_LT(shares[0], 0.05);
  EXPECT_GT(shares[1], 0.2);
  EXPECT_GT(shares[2], 0.2);
  EXPECT_GT(shares[3], 0.03);
  EXPECT_GT(points->model.tp_unsplit_share, 0.03);
  EXPECT_LT(points->model.tp_unsplit_share, 0.5);
  EXPECT_NE(run.output.find("profile: split: tp unsplit share "), std::string::npos) << run.output;
  ASSERT_EQ(points->runs.size(), 2u);
  EXPECT_EQ(points->runs[1].point.plan.tp, 2);
  EXPECT_EQ(points->runs[1].point.plan.dp, 1);
  for (const perf::ProfiledRun& r : points->runs) {
    EXPECT_GT(r.point.throughput, 0) << r.label;
    EXPECT_GT(r.point.resources.gpu_flops, 0) << r.label;
    for (const char* round : {".r1.log", ".r2.log"}) {
      EXPECT_TRUE(fs::exists(out / "runs" / (r.label + round))) << r.label << round;
    }
  }
  EXPECT_NE(run.output.find("(round 2/2)"), std::string::npos) << run.output;
  // host_probe = false: no probe times, one points file.
  EXPECT_EQ(ReadAll(out / "runs" / "w1-tjob-dp.r1.log").find("probe_ms"), std::string::npos);
  EXPECT_FALSE(fs::exists(out / "points.plain.json"));
  // The measurement's noise is reported beside the rates, to judge the fit's errors against.
  EXPECT_NE(run.output.find("profile: noise over the 2 rounds, (max - min) / median: runs "),
            std::string::npos)
      << run.output;
}

TEST_F(Profile, RefusesARunTheModelCannotDescribeBeforeRunningAnything) {
  const fs::path out = dir_.path() / "bad";
  // 4 ESTs on 3 ranks: ranks would accumulate 2, 1 and 1 micro-batches, not one a = E / W.
  CommandResult run =
      RunProfile("[[run]]\nworkers = 1\nplan = \"dp\"\n[[run]]\nworkers = 3\nplan = \"dp\"\n", out);
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("run \"w3-tjob-dp\": 4 ESTs on 3 workers: expected a multiple"),
            std::string::npos)
      << run.output;
  EXPECT_FALSE(fs::exists(out / "points.json"));
  EXPECT_FALSE(fs::exists(out / "runs" / "w1-tjob-dp.log"));  // nothing ran
}

}  // namespace
}  // namespace elastic::testing
