// The replicated update (dp, ga, gc): the EST runtime's exchange, EST-order fold and one SGD step
// on every rank's full replica (docs/consistency.md, "The runtime").
#include <torch/torch.h>

#include "agent/plan/parameter_update.h"
#include "agent/plan/sharded_update.h"
#include "agent/plan/tensor_parallel.h"

namespace elastic::agent {
namespace {

class ReplicatedUpdate final : public ParameterUpdate {
 public:
  explicit ReplicatedUpdate(const UpdateContext& context) : c_(context) {}

  void Step() override {
    if (c_.config.train.determinism == Determinism::kD0) {
      c_.stash.ReduceAccumulatedRankOrder(c_.world, c_.hosted);
    } else if (c_.fold_locally) {
      c_.stash.ReduceAccumulatedMean();  // W = 1: this rank folded all E ESTs in id order
    } else if (c_.stash.device_slots()) {
      c_.stash.ExchangeSlots(c_.world, c_.hosted);  // NCCL all-gather, the fold on the GPU
      c_.stash.ReduceMeanIntoGradients();
    } else {
      c_.stash.ReduceScatterMeanIntoGradients(c_.world, c_.hosted);
    }
    c_.optimizer.step();
  }

  std::string OptimizerArchive(bool primary) override {
    return primary ? SgdArchiveBytes(c_.optimizer) : std::string();
  }

  void AdoptLoadedOptimizerState() override {}

 private:
  UpdateContext c_;
};

}  // namespace

std::string SgdArchiveBytes(const torch::optim::SGD& optimizer) {
  torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  std::string bytes;
  archive.save_to([&bytes](const void* data, std::size_t size) {
    bytes.append(static_cast<const char*>(data), size);
    return size;
  });
  return bytes;
}

std::unique_ptr<ParameterUpdate> MakeParameterUpdate(const perf::ExecutionPlan& plan,
                                                     const UpdateContext& context) {
  if (plan.tp > 1) return MakeTensorParallelUpdate(context);
  if (plan.zero_stage > 0 || plan.pp > 1) return MakeShardedUpdate(plan, context);
  return std::make_unique<ReplicatedUpdate>(context);
}

}  // namespace elastic::agent
