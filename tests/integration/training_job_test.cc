// An elastic training job on a real cluster: sbatch -N 2-4 --elastic runs elastic-agent on every
// node it holds and ends with the contract line of design.md §2.
#include <gtest/gtest.h>

#include <regex>

#include "tests/common/local_cluster.h"
#include "tests/common/temp_dir.h"

namespace elastic::testing {
namespace {

class TrainingJob : public ClusterSuite {};

TEST_F(TrainingJob, ElasticBatchJobTrainsOnSeveralNodes) {
  TempDir dir;
  std::string config = dir.Write("train.toml",
                                 "[model]\nname = \"fmnist_cnn\"\n"
                                 "[data]\npath = \"/usr/share/datasets/fashion-mnist\"\n"
                                 "[train]\nglobal_batch = 64\nlr = 0.05\nmomentum = 0.9\n"
                                 "seed = 3\nsteps = 30\nthreads = 1\nlog_every = 10\n"
                                 "[checkpoint]\ndir = \"" + (dir.path() / "ckpt").string() +
                                     "\"\n").string();
  std::string out = (dir.path() / "job.out").string();
  std::string agent = ELASTIC_BINARY_DIR "/agent/elastic-agent";
  CommandResult submit = cluster().Run(
      "sbatch --parsable -N 2-4 --elastic --elastic-est=8 -o " + ShellQuote(out) +
      " --wrap " + ShellQuote("echo nodes=$SLURM_JOB_NUM_NODES; srun " + agent +
                              " train --config " + config));
  ASSERT_EQ(submit.exit_code, 0) << submit.output;
  std::string job = submit.output.substr(0, submit.output.find_first_of(";\n"));
  std::string state = cluster().WaitForJob(job, 300);
  std::string text = RunCommand("cat " + ShellQuote(out)).output;
  ASSERT_EQ(state, "COMPLETED") << text;

  std::smatch nodes;
  ASSERT_TRUE(std::regex_search(text, nodes, std::regex("nodes=(\\d+)"))) << text;
  EXPECT_GE(std::stoi(nodes[1]), 2) << text;
  EXPECT_NE(text.find("ests=8"), std::string::npos) << "SLURM_ELASTIC_EST not applied:\n" << text;
  std::smatch last;
  std::string final_line = text.substr(text.find_last_of('\n', text.size() - 2) + 1);
  EXPECT_TRUE(std::regex_match(final_line, last,
                               std::regex("elastic-agent: step=30 loss=[0-9.]+ "
                                          "params_sha256=[0-9a-f]{64}\n")))
      << "last line: " << final_line << "\nwhole output:\n" << text;
  // Only rank 0 reports: one contract line, however many nodes ran.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n') > 0 &&
                text.find("params_sha256") == text.rfind("params_sha256"),
            true)
      << text;
}

}  // namespace
}  // namespace elastic::testing
