// A background training job that a burst-parallel rank runs in its idle slots (DeepPool §4-§5):
// a single-process Trainer of background.config, one training step per piece, run on the rank's
// own thread by agent/multiplex/idle_filler.h while it waits for a block it is not part of.
// Includes LibTorch.
//
// Why the foreground job's bits cannot change: the background job has its own model, optimizer,
// data and EST streams; its steps run under its own EstRngScope, which restores LibTorch's
// default generator, and only between the foreground's operations (never inside one), on the
// same intra-op thread count. Its own result is a plain single-process run's: after n pieces its
// parameters equal `elastic-agent train` of its config with train.seed + rank, --until-step n.
#pragma once

#include <cstdint>
#include <memory>

#include "agent/config/job_config.h"
#include "agent/multiplex/idle_filler.h"
#include "agent/train/trainer.h"

namespace elastic::agent {

class BackgroundJob final : public multiplex::BackgroundWork {
 public:
  // `config` is a loaded background.job; rank `rank` trains it with train.seed + rank, so the
  // ranks' background jobs differ (a seed sweep rather than W copies of one run). Build it
  // before the foreground Trainer: building a model reseeds LibTorch's default generator, and
  // the foreground Trainer's own reseeding then leaves that generator as it would be without us.
  BackgroundJob(const JobConfig& config, int rank);

  bool HasWork() const override { return trainer_->completed_steps() < config_.train.steps; }
  void RunPiece() override { trainer_->RunStep(); }

  const JobConfig& config() const { return config_; }
  const Trainer& trainer() const { return *trainer_; }

 private:
  JobConfig config_;
  std::unique_ptr<Trainer> trainer_;
};

}  // namespace elastic::agent
