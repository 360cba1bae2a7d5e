// BackgroundJob: a single-process Trainer of the background config, seeded per rank.
#include "agent/train/background_job.h"

namespace elastic::agent {
namespace {

JobConfig SeededForRank(const JobConfig& config, int rank) {
  JobConfig seeded = config;
  seeded.train.seed = config.train.seed + rank;
  return seeded;
}

}  // namespace

BackgroundJob::BackgroundJob(const JobConfig& config, int rank)
    : config_(SeededForRank(config, rank)),
      trainer_(std::make_unique<Trainer>(config_, LoadTrainingSet(config_))) {}

}  // namespace elastic::agent
