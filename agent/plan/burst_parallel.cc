// BurstParallel: per-block EST placement, the activation/gradient moves and the EST-order fold.
#include "agent/plan/burst_parallel.h"

#include <torch/torch.h>

#include <cstring>
#include <unordered_map>

#include "agent/common/errors.h"
#include "agent/model/model.h"
#include "agent/plan/tensor_message.h"
#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

constexpr const char* kWhat = "burst: a message between ranks";

torch::Tensor FlatView(const float* data, std::int64_t numel) {
  return torch::from_blob(const_cast<float*>(data), {numel}, torch::kFloat32);
}

// An idle filler slot: the wait for one EST's message at one block of one phase. Waits differ
// most between ESTs (a rank waits long for the first EST a block sends it, then little for the
// next), so each has its own prediction.
std::string SlotName(const char* phase, std::size_t block, std::int64_t est) {
  return std::string(phase) + "." + std::to_string(block) + "." + std::to_string(est);
}

}  // namespace

void CheckBurstPlanFitsModel(const Model& model, const std::vector<std::int64_t>& workers,
                             const std::string& model_name) {
  const std::int64_t blocks = model.BlockCount();
  if (static_cast<std::int64_t>(workers.size()) != blocks) {
    throw ConfigError("train.burst_workers: " + std::to_string(workers.size()) +
                      " worker count(s) " + DescribeBurstWorkers(workers) + " for model \"" +
                      model_name + "\": expected one count per block, " + std::to_string(blocks) +
                      " of them");
  }
  std::unordered_map<const void*, std::int64_t> owner;
  for (const torch::Tensor& param : model.parameters()) owner[param.unsafeGetTensorImpl()] = -1;
  for (std::int64_t b = 0; b < blocks; ++b) {
    for (const torch::Tensor& param : model.BlockParameters(b)) {
      auto found = owner.find(param.unsafeGetTensorImpl());
      if (found == owner.end() || found->second != -1) {
        throw ConfigError("train.plan: plan \"burst\": block " + std::to_string(b) +
                          " of model \"" + model_name +
                          "\" uses a parameter of another block: expected each parameter in "
                          "exactly one block");
      }
      found->second = b;
    }
  }
  for (const torch::Tensor& param : model.parameters()) {
    if (owner.at(param.unsafeGetTensorImpl()) == -1) {
      throw ConfigError("train.plan: plan \"burst\": model \"" + model_name +
                        "\" has parameters in no block: expected each parameter in exactly one "
                        "block");
    }
  }
}

BurstParallel::BurstParallel(Model& model, Communicator& world, GradientStash& stash,
                             std::int64_t ests, std::vector<std::int64_t> workers)
    : model_(model),
      world_(world),
      stash_(stash),
      ests_(ests),
      workers_(std::move(workers)),
      params_(model.parameters()) {
  std::unordered_map<const void*, std::size_t> index;
  for (std::size_t i = 0; i < params_.size(); ++i) index[params_[i].unsafeGetTensorImpl()] = i;
  for (std::size_t b = 0; b < workers_.size(); ++b) {
    std::vector<std::size_t> mine;
    std::int64_t numel = 0;
    for (const torch::Tensor& param : model.BlockParameters(static_cast<std::int64_t>(b))) {
      mine.push_back(index.at(param.unsafeGetTensorImpl()));
      numel += param.numel();
    }
    block_params_.push_back(std::move(mine));
    block_numel_.push_back(numel);
  }
}

EstRange BurstParallel::Mine(std::size_t block) const {
  return BurstEstsOfRank(ests_, workers_[block], world_.rank());
}

int BurstParallel::RankOf(std::size_t block, std::int64_t est) const {
  return BurstRankOfEst(ests_, workers_[block], est);
}

std::vector<float> BurstParallel::Run(const BatchSource& batch, std::vector<EstContext>& home) {
  const std::size_t blocks = workers_.size();
  const auto ests = static_cast<std::size_t>(ests_);
  cells_.assign(blocks, std::vector<Cell>(ests));
  targets_.assign(ests, torch::Tensor());
  streams_.assign(ests, EstContext{});
  losses_.assign(ests, 0.0f);
  pieces_.assign(blocks, std::vector<float>());
  for (std::size_t b = 0; b < blocks; ++b) Forward(b, batch, home);
  ReturnStreamsHome(home);
  for (std::size_t b = blocks; b-- > 0;) Backward(b);
  cells_.clear();
  targets_.clear();
  streams_.clear();
  ExchangeAndFold();
  const EstRange last = Mine(blocks - 1);
  return std::vector<float>(losses_.begin() + last.begin, losses_.begin() + last.end);
}

void BurstParallel::Forward(std::size_t block, const std::function<MiniBatch(std::int64_t)>& batch,
                            std::vector<EstContext>& home) {
  const EstRange mine = Mine(block);
  const int me = world_.rank();
  const bool last = block + 1 == workers_.size();
  for (std::int64_t e = mine.begin; e < mine.end; ++e) {
    const auto i = static_cast<std::size_t>(e);
    Cell& cell = cells_[block][i];
    if (block == 0) {
      MiniBatch mini = batch(e);
      cell.input = mini.inputs;
      targets_[i] = mini.targets;
      streams_[i] = home[static_cast<std::size_t>(e - mine.begin)];
    } else if (RankOf(block - 1, e) == me) {
      // The same bytes as a move would deliver, cut from the previous block's graph as a move
      // cuts it, so every boundary is backpropagated the same way.
      cell.input = cells_[block - 1][i].output.detach().requires_grad_(true);
    } else {
      MessageReader reader(ReceiveFrom(RankOf(block - 1, e), SlotName("fwd", block, e)), kWhat);
      cell.input = reader.NextTensor().requires_grad_(true);
      targets_[i] = reader.NextTensor();
      streams_[i].id = e;
      streams_[i].rng_state = reader.NextTensor();
    }
    torch::Tensor x;
    {
      EstRngScope rng(streams_[i]);
      x = model_.ForwardBlock(static_cast<std::int64_t>(block), cell.input);
    }
    if (last) {
      cell.output = torch::nn::functional::cross_entropy(x, targets_[i]);
      losses_[i] = static_cast<float>(cell.output.item<double>());
      continue;
    }
    cell.output = x;
    const int next = RankOf(block + 1, e);
    if (next != me) {
      std::vector<std::uint8_t> message;
      AppendTensor(message, x.detach());
      AppendTensor(message, targets_[i]);
      AppendTensor(message, streams_[i].rng_state);
      world_.Send(message, next);
      targets_[i] = torch::Tensor();
      streams_[i] = EstContext{};
    }
  }
}

// The streams end where each EST's last block ran; its home keeps them between steps (and in
// checkpoints). All sends first: Send never waits, so no two ranks wait on each other.
void BurstParallel::ReturnStreamsHome(std::vector<EstContext>& home) {
  const int me = world_.rank();
  const std::size_t last = workers_.size() - 1;
  const EstRange ran_last = Mine(last);
  for (std::int64_t e = ran_last.begin; e < ran_last.end; ++e) {
    if (RankOf(0, e) == me) continue;
    std::vector<std::uint8_t> message;
    AppendTensor(message, streams_[static_cast<std::size_t>(e)].rng_state);
    world_.Send(message, RankOf(0, e));
  }
  const EstRange mine = Mine(0);
  for (std::int64_t e = mine.begin; e < mine.end; ++e) {
    EstContext& context = home[static_cast<std::size_t>(e - mine.begin)];
    if (RankOf(last, e) == me) {
      context.rng_state = streams_[static_cast<std::size_t>(e)].rng_state;
    } else {
      context.rng_state =
          MessageReader(ReceiveFrom(RankOf(last, e), SlotName("home", last, e)), kWhat)
              .NextTensor();
    }
  }
}

void BurstParallel::Backward(std::size_t block) {
  const EstRange mine = Mine(block);
  const int me = world_.rank();
  const bool last = block + 1 == workers_.size();
  pieces_[block].assign(static_cast<std::size_t>(mine.size() * block_numel_[block]), 0.0f);
  for (std::int64_t e = mine.begin; e < mine.end; ++e) {
    const auto i = static_cast<std::size_t>(e);
    Cell& cell = cells_[block][i];
    // Block b's parameters start from no gradient for every EST: the piece is this EST's alone.
    for (std::size_t p : block_params_[block]) params_[p].mutable_grad().reset();
    if (last) {
      cell.output.backward();
    } else if (RankOf(block + 1, e) == me) {
      Cell& next = cells_[block + 1][i];
      cell.output.backward(next.input.grad());
      next = Cell{};
    } else {
      const std::string slot = SlotName("bwd", block, e);
      cell.output.backward(
          MessageReader(ReceiveFrom(RankOf(block + 1, e), slot), kWhat).NextTensor());
    }
    CopyOutBlockGradients(block, pieces_[block].data() + (e - mine.begin) * block_numel_[block]);
    if (block > 0 && RankOf(block - 1, e) != me) {
      std::vector<std::uint8_t> message;
      AppendTensor(message, cell.input.grad());
      world_.Send(message, RankOf(block - 1, e));
      cell = Cell{};
    } else {
      cell.output = torch::Tensor();  // the input's gradient stays for block b-1's backward
    }
  }
}

std::vector<std::uint8_t> BurstParallel::ReceiveFrom(int source, const std::string& slot) {
  if (filler_ != nullptr) filler_->Wait(slot, [&] { return world_.MessageWaiting(source); });
  return world_.Receive(source);
}

// As GradientStash::Capture, for one block's parameters: an undefined gradient is zeros.
void BurstParallel::CopyOutBlockGradients(std::size_t block, float* out) {
  for (std::size_t p : block_params_[block]) {
    torch::Tensor& param = params_[p];
    const auto bytes = static_cast<std::size_t>(param.numel()) * sizeof(float);
    const torch::Tensor& grad = param.grad();
    if (grad.defined()) {
      const torch::Tensor values = grad.detach().contiguous();
      std::memcpy(out, values.data_ptr<float>(), bytes);
    } else {
      std::memset(out, 0, bytes);
    }
    out += param.numel();
    param.mutable_grad().reset();
  }
}

// Every rank receives every (EST, block) piece, then folds the E ESTs in id order into .grad:
// grad = g_0, then grad += g_e, element-wise, the operations of the slot fold
// (GradientStash::FoldIntoGradients) and of the running fold; ReduceAccumulatedMean divides.
void BurstParallel::ExchangeAndFold() {
  const std::size_t blocks = workers_.size();
  std::vector<float> send;
  for (const std::vector<float>& piece : pieces_) {
    send.insert(send.end(), piece.begin(), piece.end());
  }
  pieces_.clear();
  std::vector<std::int64_t> counts;
  const std::vector<float> all = world_.AllGather(send, counts);
  // Where each (EST, block) piece sits: rank by rank, block by block, EST by EST.
  std::vector<std::vector<const float*>> at(static_cast<std::size_t>(ests_),
                                            std::vector<const float*>(blocks, nullptr));
  std::size_t pos = 0;
  for (int r = 0; r < world_.size(); ++r) {
    for (std::size_t b = 0; b < blocks; ++b) {
      const EstRange ran = BurstEstsOfRank(ests_, workers_[b], r);
      for (std::int64_t e = ran.begin; e < ran.end; ++e) {
        at[static_cast<std::size_t>(e)][b] = all.data() + pos;
        pos += static_cast<std::size_t>(block_numel_[b]);
      }
    }
  }
  if (pos != all.size()) {
    throw TrainingError("burst: gathered " + std::to_string(all.size()) +
                        " gradient floats: expected " + std::to_string(pos) +
                        "; do all ranks run the same model, train.ests and train.burst_workers?");
  }
  torch::NoGradGuard no_grad;
  for (std::int64_t e = 0; e < ests_; ++e) {
    stash_.BeginAccumulation(e, /*first=*/e == 0);
    for (std::size_t b = 0; b < blocks; ++b) {
      const float* piece = at[static_cast<std::size_t>(e)][b];
      for (std::size_t p : block_params_[b]) {
        torch::Tensor& param = params_[p];
        const torch::Tensor g = FlatView(piece, param.numel());
        if (e == 0) {
          param.mutable_grad() = g.clone().view_as(param);
        } else {
          param.mutable_grad().view({-1}).add_(g);
        }
        piece += param.numel();
      }
    }
    stash_.EndAccumulation(e);
  }
}

}  // namespace elastic::agent
