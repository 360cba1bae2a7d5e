// Shared data loaders on real Open MPI ranks (EasyScale §3.2, Fig. 7; docs/consistency.md): the
// real elastic-agent under `mpirun --oversubscribe -np W` with E = 8 ESTs and random flips drawn
// from each EST's data stream ends with one params_sha256 whatever the number of loader threads
// (data.workers), the prefetch depth (data.prefetch) and W; and a resize history whose
// checkpoints hold prefetched batches, resumed with other loader settings, ends with the
// uninterrupted run's bits. Needs mpirun and the Fashion-MNIST package; no Slurm.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "tests/common/agent_runs.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"

namespace elastic::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kData = "/usr/share/datasets/fashion-mnist";

struct Loader {
  int workers = 1;
  int prefetch = 4;
};

// A small E = 8 job (8 samples per EST) with augmentation, so the ESTs' data streams matter.
std::string ConfigText(Loader loader, const std::string& checkpoint_dir = "") {
  std::ostringstream text;
  text << "[model]\nname = \"fmnist_cnn\"\n[data]\npath = \"" << kData
       << "\"\nworkers = " << loader.workers << "\nprefetch = " << loader.prefetch
       << "\naugment = \"flip\"\n[train]\nests = 8\nglobal_batch = 64\nlr = 0.05\n"
       << "momentum = 0.9\nseed = 1\nsteps = 10\nthreads = 1\nlog_every = 0\n";
  if (!checkpoint_dir.empty()) text << "[checkpoint]\ndir = \"" << checkpoint_dir << "\"\n";
  return text.str();
}

class EstLoader : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunCommand("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed";
    if (!fs::exists(kData)) GTEST_SKIP() << kData << " missing (dataset-fashion-mnist)";
  }

  std::string Train(const std::string& config_text, int ranks, const std::string& extra = "") {
    fs::path config = dir_.Write("job-" + std::to_string(serial_++) + ".toml", config_text);
    return FinalHash(RunCommand(MpirunAgentCommand(ranks, config, extra, /*timeout_s=*/300)));
  }

  TempDir dir_;
  int serial_ = 0;
};

TEST_F(EstLoader, LoaderThreadsPrefetchAndWorldSizeChangeNoBit) {
  const std::string reference = Train(ConfigText({1, 1}), 1);
  ASSERT_FALSE(reference.empty());
  EXPECT_EQ(Train(ConfigText({3, 1}), 1), reference) << "workers 1 vs 3";
  EXPECT_EQ(Train(ConfigText({1, 4}), 1), reference) << "prefetch 1 vs 4";
  EXPECT_EQ(Train(ConfigText({3, 4}), 3), reference) << "W=3, workers 3, prefetch 4";
  EXPECT_EQ(Train(ConfigText({0, 2}), 5), reference) << "W=5, no loader threads";
}

TEST_F(EstLoader, ResizeHistoryWithPendingBatchesEqualsAnUninterruptedRun) {
  const std::string uninterrupted = Train(ConfigText({}), 1);
  const std::string ckpt = (dir_.path() / "ckpt").string();
  // Deep prefetch first, so the checkpoints hold batches of the next steps; each generation
  // resumes with other loader settings on another W.
  const struct {
    Loader loader;
    int ranks;
    int until;
  } generations[] = {{{3, 9}, 1, 3}, {{1, 1}, 3, 6}, {{2, 5}, 2, 8}, {{0, 3}, 8, 10}};
  std::string hash;
  for (const auto& generation : generations) {
    hash = Train(ConfigText(generation.loader, ckpt), generation.ranks,
                 " --until-step " + std::to_string(generation.until));
  }
  EXPECT_EQ(hash, uninterrupted);
}

}  // namespace
}  // namespace elastic::testing
