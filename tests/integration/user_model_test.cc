// Users' own PyTorch models and data (issue 25) on real Open MPI ranks: TorchScript modules and
// torch.save shards made by Debian's python3-torch (tests/python/make_test_artifacts.py), trained
// by the real elastic-agent. E = 8 ESTs end with one params_sha256 (parameters and EST 0's
// buffers) on W = 1, 2, 3 and through a resize history of checkpoints, for a scripted torchvision
// ResNet-18 (BatchNorm), a scripted transformer with dropout, and torchvision's MobileNetV2 and
// VisionTransformer; the plans a module can run give the dp bits and the others are refused;
// eval, --save-logits and export round-trip through Python; every bad input is refused before
// training, naming the file and the problem.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <regex>
#include <sstream>
#include <string>

#include "tests/common/agent_runs.h"
#include "tests/common/local_cluster.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"

namespace elastic::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPython = "/usr/bin/python3";

struct UserJob {
  std::string model;  // an artifact's file name
  std::string data;   // an artifact directory
  int global_batch = 32;
  int seed = 1;
  int steps = 3;
  std::string extra_train;
  std::string checkpoint_dir;  // "" = none
};

UserJob Job(const std::string& model, const std::string& data) {
  UserJob job;
  job.model = model;
  job.data = data;
  return job;
}

class UserModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (RunCommand(std::string(kPython) + " -c 'import torch, torchvision'").exit_code != 0) {
      return;  // SetUp skips
    }
    artifacts_ = new TempDir;
    const CommandResult made = RunCommand(std::string(kPython) + " " + ELASTIC_SOURCE_DIR +
                                          "/tests/python/make_test_artifacts.py " +
                                          artifacts_->path().string());
    ASSERT_EQ(made.exit_code, 0) << made.output;
  }
  static void TearDownTestSuite() {
    delete artifacts_;
    artifacts_ = nullptr;
  }

  void SetUp() override {
    if (RunCommand("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed";
    if (artifacts_ == nullptr) {
      // CI installs them (contrib/install-deps.sh): there a missing package is a failure.
      if (RunningUnderCi()) FAIL() << "Debian's python3-torch/python3-torchvision missing";
      GTEST_SKIP() << "Debian's python3-torch/python3-torchvision missing";
    }
  }

  static fs::path Artifact(const std::string& name) { return artifacts_->path() / name; }

  fs::path Config(const UserJob& job) {
    std::ostringstream text;
    text << "[model]\ntorchscript = \"" << Artifact(job.model).string() << "\"\n[data]\npath = \""
         << Artifact(job.data).string() << "\"\n[train]\nests = 8\nglobal_batch = "
         << job.global_batch << "\nlr = 0.05\nmomentum = 0.9\nseed = " << job.seed
         << "\nsteps = " << job.steps << "\nthreads = 1\nlog_every = 0\n"
         << job.extra_train;
    if (!job.checkpoint_dir.empty()) {
      text << "[checkpoint]\ndir = \"" << job.checkpoint_dir << "\"\n";
    }
    return dir_.Write("job-" + std::to_string(serial_++) + ".toml", text.str());
  }

  std::string Train(const UserJob& job, int ranks, const std::string& extra = "") {
    return FinalHash(RunCommand(MpirunAgentCommand(ranks, Config(job), extra, 600)));
  }

  CommandResult Agent(const std::string& args) {
    return RunCommand(AgentPath() + " " + args);
  }

  // The same job on W = 1, 2, 3 and through checkpoints on W = 2 -> 3 -> 1: one hash.
  void ExpectOneHashAcrossWorldSizesAndResizes(const UserJob& job) {
    const std::string reference = Train(job, 1);
    ASSERT_FALSE(reference.empty());
    EXPECT_EQ(Train(job, 2), reference) << job.model << ": W=2 differs from W=1";
    EXPECT_EQ(Train(job, 3), reference) << job.model << ": W=3 differs from W=1";
    UserJob resized = job;
    resized.checkpoint_dir = (dir_.path() / ("resize-" + job.model)).string();
    Train(resized, 2, " --until-step 1");
    Train(resized, 3, " --until-step 2");
    EXPECT_EQ(Train(resized, 1), reference) << job.model << ": the resize history differs";
    // The comparison can fail: another seed draws other samples and dropout masks.
    UserJob other = job;
    other.seed = 2;
    EXPECT_NE(Train(other, 2), reference);
  }

  static TempDir* artifacts_;
  TempDir dir_;
  int serial_ = 0;
};

TempDir* UserModel::artifacts_ = nullptr;

TEST_F(UserModel, ScriptedResNet18WithBatchNormEndsBitwiseEqualOnEveryWorldSize) {
  ExpectOneHashAcrossWorldSizesAndResizes(Job("resnet18.pt", "images"));
}

TEST_F(UserModel, ScriptedTransformerWithDropoutEndsBitwiseEqualOnEveryWorldSize) {
  ExpectOneHashAcrossWorldSizesAndResizes(Job("transformer.pt", "tokens"));
}

// Two more of torchvision's own models, as a user would script them: MobileNetV2 (BatchNorm,
// in-place ReLU6, a dropout classifier) and a VisionTransformer (nn.MultiheadAttention,
// LayerNorm, GELU, dropout).
TEST_F(UserModel, TorchvisionMobileNetAndVisionTransformerEndBitwiseEqualOnEveryWorldSize) {
  for (const char* model : {"mobilenet_v2.pt", "vit.pt"}) {
    const UserJob job = Job(model, "images");
    const std::string reference = Train(job, 1);
    ASSERT_FALSE(reference.empty()) << model;
    EXPECT_EQ(Train(job, 2), reference) << model << ": W=2 differs from W=1";
    EXPECT_EQ(Train(job, 3), reference) << model << ": W=3 differs from W=1";
    UserJob other = job;
    other.seed = 2;
    EXPECT_NE(Train(other, 3), reference) << model;
  }
}

TEST_F(UserModel, TracedModuleTrainsToo) {
  UserJob job = Job("traced_mlp.pt", "images");
  const std::string reference = Train(job, 1);
  ASSERT_FALSE(reference.empty());
  EXPECT_EQ(Train(job, 2), reference);
}

// dp, ga, gc (an nn.Sequential with BatchNorm and dropout), zero-dp and zero-offload give the dp
// bits; pp, tp and burst are refused for any module, gc for one that is not an nn.Sequential.
TEST_F(UserModel, PlansGiveTheDpBitsOrARefusalNamingThePlan) {
  auto plan = [](const std::string& word) { return "plan = \"" + word + "\"\n"; };
  UserJob job = Job("seq_cnn.pt", "images");
  const std::string reference = Train(job, 1);
  ASSERT_FALSE(reference.empty());
  for (const auto& [word, ranks] : std::vector<std::pair<std::string, int>>{
           {"gc", 1}, {"gc", 2}, {"ga", 3}, {"zero-dp", 2}, {"zero-offload", 2}}) {
    job.extra_train = plan(word);
    EXPECT_EQ(Train(job, ranks), reference) << word << " on W=" << ranks;
  }
  for (const std::string word : {"pp", "tp", "burst"}) {
    UserJob refused = Job("resnet18.pt", "images");
    refused.extra_train = plan(word) + (word == "burst" ? "burst_workers = [1]\n" : "") +
                          (word == "tp" ? "determinism = \"statistical\"\n" : "");
    const CommandResult run = RunCommand(MpirunAgentCommand(1, Config(refused), "", 300));
    EXPECT_NE(run.exit_code, 0) << word;
    EXPECT_NE(run.output.find("train.plan: plan \"" + word + "\": a TorchScript module"),
              std::string::npos)
        << run.output;
  }
  UserJob not_sequential = Job("resnet18.pt", "images");
  not_sequential.extra_train = plan("gc");
  const CommandResult run = RunCommand(MpirunAgentCommand(1, Config(not_sequential), "", 300));
  EXPECT_NE(run.output.find("is not an nn.Sequential, so gradient checkpointing cannot cut it"),
            std::string::npos)
      << run.output;
}

// Eval per class (the same report whatever W trained it), the logits it saves, and the exported
// module, which Python's torch.jit.load runs to the same logits bit for bit.
// `elastic-agent profile` (Rubick's profiling runs) trains a user's module named relative to the
// job file: each run's job file lives elsewhere, so the module's path goes there absolute.
TEST_F(UserModel, ProfileRunsAModuleNamedRelativeToTheJobFile) {
  const std::string module = fs::relative(Artifact("seq_cnn.pt"), dir_.path()).string();
  ASSERT_EQ(module.rfind("..", 0), 0u) << module;  // relative indeed
  dir_.Write("relative.toml", "[model]\ntorchscript = \"" + module + "\"\n[data]\npath = \"" +
                                  Artifact("images").string() +
                                  "\"\n[train]\nests = 4\nglobal_batch = 32\nlr = 0.05\n"
                                  "seed = 1\nsteps = 10\nthreads = 1\n");
  const fs::path profile =
      dir_.Write("profile.toml",
                 "job = \"relative.toml\"\nwarmup_steps = 1\nmeasured_steps = 2\n"
                 "host_probe = false\n[[run]]\nworkers = 1\nplan = \"dp\"\n");
  const fs::path out = dir_.path() / "profile";
  const CommandResult run = RunCommand(
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 5 300 " + AgentPath() +
      " profile --config " + ShellQuote(profile.string()) + " --out " + ShellQuote(out.string()));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("profile: [1/1] w1-tjob-dp"), std::string::npos) << run.output;
  EXPECT_TRUE(fs::exists(out / "points.json")) << run.output;
}

TEST_F(UserModel, EvalAndExportRoundTripThroughPython) {
  std::string reports[2];
  for (int i = 0; i < 2; ++i) {
    const int ranks = i == 0 ? 1 : 3;
    UserJob job = Job("seq_cnn.pt", "images");
    job.checkpoint_dir = (dir_.path() / ("eval-" + std::to_string(ranks))).string();
    ASSERT_FALSE(Train(job, ranks).empty());
    const fs::path config = dir_.path() / ("job-" + std::to_string(serial_ - 1) + ".toml");
    const fs::path logits = dir_.path() / ("logits-" + std::to_string(ranks) + ".pt");
    const CommandResult eval =
        Agent("eval --config " + config.string() + " --save-logits " + logits.string());
    ASSERT_EQ(eval.exit_code, 0) << eval.output;
    reports[i] = eval.output.substr(eval.output.find(" accuracy="));
    std::smatch total;
    ASSERT_TRUE(std::regex_search(eval.output, total, std::regex(" total=(\\d+)\n")));
    EXPECT_EQ(total[1], "1000");
    EXPECT_NE(eval.output.find("class=9 accuracy="), std::string::npos) << eval.output;
    const fs::path exported = dir_.path() / ("exported-" + std::to_string(ranks) + ".pt");
    const CommandResult out =
        Agent("export --config " + config.string() + " --out " + exported.string());
    ASSERT_EQ(out.exit_code, 0) << out.output;
    const CommandResult check = RunCommand(
        std::string(kPython) + " " + ELASTIC_SOURCE_DIR + "/tests/python/check_export.py" +
        " --model " + exported.string() + " --shards " + Artifact("images").string() +
        " --logits " + logits.string());
    EXPECT_EQ(check.exit_code, 0) << check.output;
  }
  EXPECT_EQ(reports[0], reports[1]) << "per-class accuracy depends on W";
}

// Each bad input ends the run before step 1 with an error naming the file and the problem.
TEST_F(UserModel, BadInputsAreRefusedBeforeTrainingNamingTheFile) {
  struct Case {
    std::string model, data, file, problem;
  };
  const std::vector<Case> cases{
      {"bad/not_torchscript.pt", "images", "bad/not_torchscript.pt", "is not a TorchScript module"},
      {"bad/garbage.pt", "images", "bad/garbage.pt", "is not a TorchScript module"},
      {"bad/no_params.pt", "images", "bad/no_params.pt", "has no parameters"},
      {"bad/wrong_shape.pt", "images", "bad/wrong_shape.pt",
       "the module returned shape [2, 10, 1, 1]: expected logits [2, C]"},
      {"seq_cnn.pt", "bad_shards/mismatched", "mismatched/train-000.pt",
       "expected the same number of samples N"},
      {"seq_cnn.pt", "bad_shards/missing_key", "missing_key/train-000.pt",
       "expected a dict with \"inputs\" and \"targets\" tensors"},
      {"seq_cnn.pt", "bad_shards/float_targets", "float_targets/train-000.pt",
       "expected int64 [N] (classes) or [N, T] (tokens)"},
      {"seq_cnn.pt", "bad_shards/not_a_dict", "not_a_dict/train-000.pt", "expected torch.save"},
      {"seq_cnn.pt", "bad_shards/unreadable", "unreadable/train-000.pt",
       "not a file written by torch.save"},
      {"seq_cnn.pt", "bad_shards/empty", "bad_shards/empty", "has no train*.pt file"},
  };
  for (const Case& c : cases) {
    const CommandResult run = RunCommand(MpirunAgentCommand(1, Config(Job(c.model, c.data)), "", 300));
    EXPECT_NE(run.exit_code, 0) << c.file;
    EXPECT_NE(run.output.find(c.file), std::string::npos) << c.file << ": " << run.output;
    EXPECT_NE(run.output.find(c.problem), std::string::npos) << c.file << ": " << run.output;
    EXPECT_EQ(run.output.find("step="), std::string::npos) << c.file << " trained: " << run.output;
  }
}

}  // namespace
}  // namespace elastic::testing
