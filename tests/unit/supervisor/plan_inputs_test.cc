// Tests for the plan choice's inputs: the config keys and SLURM_ELASTIC_* overrides the
// supervisor reads, train.perf_model (read, checked against the job's model, refused when
// unreadable or malformed), the built-in fallback, and Slurm's CPU and memory variables.
#include "agent/supervisor/plan_inputs.h"

#include <gtest/gtest.h>

#include <map>

#include "common/toml_reader.h"
#include "tests/common/fake_env.h"
#include "tests/common/temp_dir.h"

namespace elastic::agent {
namespace {

using testing::Env;
using testing::FakeEnv;

// Files by absolute path, as the supervisor would read them.
using Files = std::map<std::string, std::string>;

PlanInputs Parse(const std::string& toml, const Env& env = {}, const Files& files = {}) {
  return ParsePlanInputs(toml, "job.toml", "/jobs/a", FakeEnv(env),
                         [files](const std::string& path) -> std::optional<std::string> {
                           auto it = files.find(path);
                           if (it == files.end()) return std::nullopt;
                           return it->second;
                         });
}

std::string ErrorOf(const std::string& toml, const Files& files = {}) {
  try {
    Parse(toml, {}, files);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

perf::FittedModel Fitted(const std::string& name) {
  perf::FittedModel m;
  m.model_name = name;
  m.model.params = 123456;
  m.model.layers = 6;
  m.model.global_batch = 64;
  m.model.fwd_s_per_sample = 1e-3;
  m.b_intra = 1e10;
  m.b_inter = 1e9;
  m.b_pcie = 1e10;
  m.points = 9;
  m.rmsle = 0.04;
  return m;
}

TEST(PlanInputs, DefaultsUseTheBuiltInModel) {
  PlanInputs in = Parse("");
  EXPECT_EQ(in.request.requested, Plan::kAuto);
  EXPECT_EQ(in.request.determinism, Determinism::kD1);
  EXPECT_EQ(in.request.ests, 1);
  EXPECT_EQ(in.request.global_batch, 256);
  EXPECT_EQ(in.request.cpu_threads, 1);
  EXPECT_EQ(in.request.model_blocks, 4);  // fmnist_cnn
  ASSERT_TRUE(in.model.has_value());
  EXPECT_EQ(in.model->model_name, "fmnist_cnn");
  EXPECT_EQ(in.model->model.params, 80'202);
  EXPECT_NE(in.model_source.find("built-in default"), std::string::npos) << in.model_source;
}

TEST(PlanInputs, ReadsTheKeysAndTheEnvironmentWins) {
  const std::string toml =
      "[train]\nests = 8\nglobal_batch = 64\nplan = \"gc\"\ndeterminism = \"d2\"\n"
      "cpu_threads = 3\nlr = 0.1\n";  // lr: a key the plan choice does not read
  PlanInputs in = Parse(toml);
  EXPECT_EQ(in.request.ests, 8);
  EXPECT_EQ(in.request.global_batch, 64);
  EXPECT_EQ(in.request.requested, Plan::kGc);
  EXPECT_EQ(in.request.determinism, Determinism::kD2);
  EXPECT_EQ(in.request.cpu_threads, 3);
  in = Parse(toml, {{"SLURM_ELASTIC_EST", "4"},
                    {"SLURM_ELASTIC_PLAN", "auto"},
                    {"SLURM_ELASTIC_DETERMINISM", "statistical"}});
  EXPECT_EQ(in.request.ests, 4);
  EXPECT_EQ(in.request.requested, Plan::kAuto);
  EXPECT_EQ(in.request.determinism, Determinism::kStatistical);
  try {
    Parse(toml, {{"SLURM_ELASTIC_PLAN", "fastest"}});
    ADD_FAILURE() << "a bad SLURM_ELASTIC_PLAN was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("SLURM_ELASTIC_PLAN"), std::string::npos) << e.what();
  }
}

TEST(PlanInputs, AFittedModelIsReadRelativeToTheConfig) {
  const Files files = {{"/jobs/a/fits/fitted.json", perf::FittedModelToJson(Fitted("fmnist_cnn"))}};
  PlanInputs in = Parse("[train]\nperf_model = \"fits/fitted.json\"\n", {}, files);
  ASSERT_TRUE(in.model.has_value());
  EXPECT_EQ(in.model->model.params, 123456);
  EXPECT_EQ(in.model->b_inter, 1e9);
  EXPECT_NE(in.model_source.find("/jobs/a/fits/fitted.json (9 profiled points, RMSLE 0.040)"),
            std::string::npos)
      << in.model_source;
  EXPECT_EQ(in.request.model_blocks, 4);  // the registry model's blocks, not the fit's layers
  EXPECT_EQ(in.request.tp_heads, 0);      // fmnist_cnn has no heads to split
}

TEST(PlanInputs, BadFittedModelsAreRefusedSayingWhy) {
  EXPECT_NE(ErrorOf("[train]\nperf_model = \"/nowhere.json\"\n")
                .find("job.toml:2: train.perf_model: \"/nowhere.json\" cannot be read"),
            std::string::npos);
  const Files garbage = {{"/f.json", "{\"format\": 1}"}};
  EXPECT_NE(ErrorOf("[train]\nperf_model = \"/f.json\"\n", garbage)
                .find("train.perf_model: \"/f.json\": "),
            std::string::npos);
  const Files other = {{"/f.json", perf::FittedModelToJson(Fitted("gpt"))}};
  EXPECT_NE(ErrorOf("[train]\nperf_model = \"/f.json\"\n", other)
                .find("describes model \"gpt\" but model.name is \"fmnist_cnn\""),
            std::string::npos)
      << ErrorOf("[train]\nperf_model = \"/f.json\"\n", other);
}

TEST(PlanInputs, AModelWithoutADescriptionRunsTheRequestedPlan) {
  PlanInputs in = Parse("[model]\nname = \"unlisted\"\n");
  EXPECT_FALSE(in.model.has_value());
  EXPECT_NE(in.model_source.find("none"), std::string::npos);
  EXPECT_EQ(in.request.model_blocks, 0);
  PlanInputs gpt = Parse("[model]\nname = \"gpt\"\n");
  EXPECT_FALSE(gpt.model.has_value());  // no built-in timings for gpt yet
  EXPECT_EQ(gpt.request.model_blocks, 4);
  EXPECT_EQ(gpt.request.tp_heads, 4);
}

TEST(PlanInputs, AUserModuleRunsWholeOnEveryRank) {
  PlanInputs in = Parse("[model]\ntorchscript = \"m.pt\"\n[data]\npath = \"shards\"\n");
  EXPECT_TRUE(in.request.whole_module);
  EXPECT_FALSE(in.model.has_value());
  EXPECT_NE(in.model_source.find("no built-in model of torchscript"), std::string::npos)
      << in.model_source;
  EXPECT_FALSE(Parse("[model]\nname = \"gpt\"\n").request.whole_module);
}

// Where the online refit is saved: checkpoint.dir (relative to the config) wins over the
// plugin's per-job directory, as in LoadJobConfig.
TEST(PlanInputs, TheCheckpointDirectoryAsTheAgentResolvesIt) {
  EXPECT_EQ(Parse("").checkpoint_dir, "");
  EXPECT_EQ(Parse("", {{"SLURM_ELASTIC_CHECKPOINT_DIR", "/ckpt/u/42"}}).checkpoint_dir,
            "/ckpt/u/42");
  EXPECT_EQ(Parse("[checkpoint]\ndir = \"ck\"\n", {{"SLURM_ELASTIC_CHECKPOINT_DIR", "/ckpt/u/42"}})
                .checkpoint_dir,
            "/jobs/a/ck");
}

TEST(PlanInputs, MinCpusPerNode) {
  EXPECT_EQ(MinCpusPerNode("4"), 4);
  EXPECT_EQ(MinCpusPerNode("4(x3)"), 4);
  EXPECT_EQ(MinCpusPerNode("8(x2),2,4(x3)"), 2);
  for (const char* bad : {"", "x", "4(3)", "4(x3", "0", "-1", "4,,2", "4 "}) {
    EXPECT_EQ(MinCpusPerNode(bad), 0) << bad;
  }
}

TEST(PlanInputs, AllocationFromSlurmVariables) {
  NodeAllocation a = AllocationFromEnv(
      3, FakeEnv({{"SLURM_JOB_CPUS_PER_NODE", "2(x3)"}, {"SLURM_MEM_PER_NODE", "1024"}}));
  EXPECT_EQ(a.nodes, 3);
  EXPECT_EQ(a.workers_per_node, 1);
  EXPECT_EQ(a.cpus_per_node, 2);
  EXPECT_EQ(a.mem_bytes_per_node, 1024.0 * 1024 * 1024);
  NodeAllocation unknown = AllocationFromEnv(2, FakeEnv({{"SLURM_MEM_PER_NODE", "lots"}}));
  EXPECT_EQ(unknown.cpus_per_node, 0);
  EXPECT_EQ(unknown.mem_bytes_per_node, 0.0);
}

}  // namespace
}  // namespace elastic::agent

namespace elastic::agent {
namespace {

TEST(PlanInputs, TheDeviceMemoryBudgetAndMomentumReachTheRequest) {
  EXPECT_EQ(Parse("").request.device_memory_bytes, 0.0);  // the device's own
  EXPECT_TRUE(Parse("").request.momentum_buffers);
  EXPECT_EQ(Parse("[train]\ndevice_memory = \"2.5M\"\n").request.device_memory_bytes, 2'621'440.0);
  EXPECT_EQ(Parse("[train]\ndevice_memory = \"4096\"\n").request.device_memory_bytes, 4096.0);
  EXPECT_FALSE(Parse("[train]\nmomentum = 0.0\n").request.momentum_buffers);
  for (const char* bad : {"\"0\"", "\"-1M\"", "\"2.5\"", "\"lots\"", "\"2 M\""}) {
    const std::string error = ErrorOf(std::string("[train]\ndevice_memory = ") + bad + "\n");
    EXPECT_NE(error.find("train.device_memory: invalid value"), std::string::npos) << error;
    EXPECT_NE(error.find("K/M/G/T suffix"), std::string::npos) << error;
  }
  // A number, not a string: the TOML reader names the key and the type it expects.
  EXPECT_NE(ErrorOf("[train]\ndevice_memory = 4096\n").find("train.device_memory"),
            std::string::npos);
}

}  // namespace
}  // namespace elastic::agent

namespace elastic::agent {
namespace {

TEST(PlanInputs, TheBudgetSaysWhereItComesFrom) {
  EXPECT_EQ(Parse("[train]\ndevice_memory = \"2.5M\"\n").budget_source,
            "2.50 MiB per rank (train.device_memory)");
  EXPECT_NE(Parse("").budget_source.find("SLURM_MEM_PER_NODE"), std::string::npos);
  EXPECT_FALSE(Parse("").cuda);
  EXPECT_TRUE(Parse("[train]\ndevice = \"cuda\"\n").cuda);
}

}  // namespace
}  // namespace elastic::agent
