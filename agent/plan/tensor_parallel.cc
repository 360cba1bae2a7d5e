// The TP group's all-reduce, enabling TP on a model, and the TP update (gather split gradients).
#include "agent/plan/tensor_parallel.h"

#include <torch/torch.h>

#include "agent/common/errors.h"
#include "agent/model/model.h"
#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

// Sums `partial` over the ranks: every rank receives every partial (bytes), then adds them in
// rank order, so every rank computes the same bits and the order never depends on timing.
torch::Tensor AllReduceInRankOrder(Communicator& world, const torch::Tensor& partial) {
  TORCH_CHECK(partial.scalar_type() == torch::kFloat32, "tp all-reduce: expected float32, got ",
              partial.scalar_type());
  const torch::Tensor mine = partial.detach().contiguous();
  std::vector<std::int64_t> counts;
  std::vector<float> all =
      world.AllGather(std::span(mine.data_ptr<float>(), static_cast<std::size_t>(mine.numel())),
                      counts);
  if (static_cast<std::int64_t>(all.size()) != world.size() * mine.numel()) {
    throw TrainingError("tp all-reduce: gathered " + std::to_string(all.size()) +
                        " floats: expected " + std::to_string(world.size()) + " x " +
                        std::to_string(mine.numel()) + " (the ranks' tensors differ in size)");
  }
  torch::Tensor parts = torch::from_blob(all.data(), {world.size(), mine.numel()}, torch::kFloat32);
  torch::Tensor sum = parts[0].clone();
  for (int r = 1; r < world.size(); ++r) sum.add_(parts[r]);
  return sum.view(mine.sizes());
}

class TensorParallelUpdate final : public ParameterUpdate {
 public:
  explicit TensorParallelUpdate(const UpdateContext& context)
      : c_(context), split_(context.split) {}

  void Step() override {
    c_.stash.ReduceAccumulatedMean();  // every rank folded all E ESTs in id order
    if (c_.world.size() > 1) GatherSplitGradients();
    c_.optimizer.step();
  }

  std::string OptimizerArchive(bool primary) override {
    return primary ? SgdArchiveBytes(c_.optimizer) : std::string();
  }

  void AdoptLoadedOptimizerState() override {}

 private:
  // Each rank's chunk of every split gradient, packed in parameter order, to every rank; each
  // rank then writes every rank's chunks into its whole gradients (bytes copied, not added).
  void GatherSplitGradients() {
    torch::NoGradGuard no_grad;
    const int ranks = c_.world.size();
    const int rank = c_.world.rank();
    std::vector<float> mine;
    for (const SplitParameter& p : split_) {
      const torch::Tensor chunk = Chunk(p, rank).contiguous();
      mine.insert(mine.end(), chunk.data_ptr<float>(), chunk.data_ptr<float>() + chunk.numel());
    }
    std::vector<std::int64_t> counts;
    std::vector<float> all = c_.world.AllGather(mine, counts);
    if (all.size() != mine.size() * static_cast<std::size_t>(ranks)) {
      throw TrainingError("tp update: gathered " + std::to_string(all.size()) +
                          " gradient floats: expected " + std::to_string(ranks) + " x " +
                          std::to_string(mine.size()));
    }
    std::size_t at = 0;
    for (int q = 0; q < ranks; ++q) {
      for (const SplitParameter& p : split_) {
        torch::Tensor chunk = Chunk(p, q);
        chunk.copy_(torch::from_blob(all.data() + at, chunk.sizes(), torch::kFloat32));
        at += static_cast<std::size_t>(chunk.numel());
      }
    }
  }

  // Rank q's chunk of p's gradient (a view into .grad).
  torch::Tensor Chunk(const SplitParameter& p, int q) const {
    const std::int64_t size = p.param.size(p.dim) / c_.world.size();
    return p.param.mutable_grad().narrow(p.dim, q * size, size);
  }

  UpdateContext c_;
  std::vector<SplitParameter> split_;
};

}  // namespace

TensorParallelShard MakeTensorParallelShard(Communicator& world) {
  Communicator* group = &world;
  return TensorParallelShard{world.rank(), world.size(), [group](const torch::Tensor& partial) {
                               return AllReduceInRankOrder(*group, partial);
                             }};
}

void EnableTensorParallel(Model& model, Communicator& world) {
  TensorParallelShard shard = MakeTensorParallelShard(world);
  if (std::optional<std::string> why = model.TensorParallelUnsupported(shard)) {
    throw ConfigError("train.plan: plan \"tp\": " + *why);
  }
  model.UseTensorParallel(std::move(shard));
}

std::unique_ptr<ParameterUpdate> MakeTensorParallelUpdate(const UpdateContext& context) {
  return std::make_unique<TensorParallelUpdate>(context);
}

}  // namespace elastic::agent
